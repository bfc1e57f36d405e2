"""generate returns only the new tokens, without the prompt.

The contract returns (B, T0 + n_new): the prompt followed by the generated tokens, as the course's
loop does with torch.cat([generated, token], dim=1). Keep the prompt at the front.
"""
CAUGHT_BY = ["hidden/test_generate.py::test_generate_matches_reference"]


def generate(model, prompt, n_new):
    model.eval()
    tokens, new = prompt, []
    with torch.no_grad():
        for _ in range(n_new):
            token = model(tokens[:, -model.max_len:])[:, -1].argmax(dim=-1, keepdim=True)
            tokens = torch.cat([tokens, token], dim=1)
            new.append(token)
    return torch.cat(new, dim=1)
