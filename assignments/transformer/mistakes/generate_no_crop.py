"""Context not cropped to max_len during generation.

Your generate feeds the whole sequence so far to the model. Once it is longer than max_len the
model has no positions for it (TinyCausalLM raises ValueError). Feed only the last max_len tokens:
model(tokens[:, -model.max_len:]).
"""
CAUGHT_BY = ["hidden/test_generate.py::test_generate_matches_reference"]


def generate(model, prompt, n_new):
    model.eval()
    tokens = prompt
    with torch.no_grad():
        for _ in range(n_new):
            logits = model(tokens)
            tokens = torch.cat([tokens, logits[:, -1].argmax(dim=-1, keepdim=True)], dim=1)
    return tokens
