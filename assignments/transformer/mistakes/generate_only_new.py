"""generate returns only the new tokens, without the prompt.

The contract returns (B, T0 + n_new): the prompt followed by the generated tokens, as the course's
loop does with torch.cat([generated, token], dim=1). Keep the prompt at the front.
"""
CAUGHT_BY = ["hidden/test_generate.py::test_generate_matches_reference"]
PATCH = [('tokens = prompt\n', 'tokens, new = prompt, []\n'),
 ('with torch.no_grad():\n'
  '    for _ in range(n_new):\n'
  '        context = tokens[:, -model.max_len:]\n'
  '        logits = model(context)\n'
  '        next_token = logits[:, -1].argmax(dim=-1, keepdim=True)\n'
  '        tokens = torch.cat([tokens, next_token.to(tokens.dtype)], dim=1)\n'
  'return tokens\n',
  'with torch.no_grad():\n'
  '    for _ in range(n_new):\n'
  '        token = model(tokens[:, -model.max_len:])[:, -1].argmax(dim=-1, keepdim=True)\n'
  '        tokens = torch.cat([tokens, token], dim=1)\n'
  '        new.append(token)\n'
  'return torch.cat(new, dim=1)\n')]
