"""Generation in train mode with gradients: model.eval() and torch.no_grad() missing.

Your generate calls the model as it finds it, usually in train mode (dropout active) and with
gradients enabled. Generation is inference: call model.eval() and wrap the loop in
torch.no_grad(), otherwise outputs are randomised by dropout and a graph is built for nothing.
"""
CAUGHT_BY = [
    "hidden/test_generate.py::test_generate_matches_reference",
    "hidden/test_generate.py::test_generate_eval_mode",
    "hidden/test_generate.py::test_generate_no_grad",
]
PATCH = [('model.eval()\ntokens = prompt\n', 'tokens = prompt\n'),
 ('with torch.no_grad():\n'
  '    for _ in range(n_new):\n'
  '        context = tokens[:, -model.max_len:]\n'
  '        logits = model(context)\n'
  '        next_token = logits[:, -1].argmax(dim=-1, keepdim=True)\n'
  '        tokens = torch.cat([tokens, next_token.to(tokens.dtype)], dim=1)\n',
  'for _ in range(n_new):\n'
  '    logits = model(tokens[:, -model.max_len:])\n'
  '    tokens = torch.cat([tokens, logits[:, -1].argmax(dim=-1, keepdim=True)], dim=1)\n')]
