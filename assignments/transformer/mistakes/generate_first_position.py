"""Greedy step reads the logits of the first position instead of the last.

Your generate takes logits[:, 0].argmax(...), the prediction made after the FIRST token of the
context, so every step predicts the same second token. The next token is predicted at the last
position, which has seen the whole context: logits[:, -1].
"""
CAUGHT_BY = ["hidden/test_generate.py::test_generate_matches_reference"]
PATCH = [('context = tokens[:, -model.max_len:]\n'
  'logits = model(context)\n'
  'next_token = logits[:, -1].argmax(dim=-1, keepdim=True)\n'
  'tokens = torch.cat([tokens, next_token.to(tokens.dtype)], dim=1)\n',
  'logits = model(tokens[:, -model.max_len:])\n'
  'tokens = torch.cat([tokens, logits[:, 0].argmax(dim=-1, keepdim=True)], dim=1)\n')]
