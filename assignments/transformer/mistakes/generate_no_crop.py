"""Context not cropped to max_len during generation.

Your generate feeds the whole sequence so far to the model. Once it is longer than max_len the
model has no positions for it (TinyCausalLM raises ValueError). Feed only the last max_len tokens:
model(tokens[:, -model.max_len:]).
"""
CAUGHT_BY = ["hidden/test_generate.py::test_generate_matches_reference"]
PATCH = [('context = tokens[:, -model.max_len:]\n'
  'logits = model(context)\n'
  'next_token = logits[:, -1].argmax(dim=-1, keepdim=True)\n'
  'tokens = torch.cat([tokens, next_token.to(tokens.dtype)], dim=1)\n',
  'logits = model(tokens)\n'
  'tokens = torch.cat([tokens, logits[:, -1].argmax(dim=-1, keepdim=True)], dim=1)\n')]
