"""Projection weights stored as buffers, not parameters: they never train

``register_buffer`` puts a tensor in the state_dict (so loading works) but not
in ``parameters()``: the optimiser never sees it and backward gives it no
gradient. W_Q, W_K, W_V (in_proj_weight) and their bias must be
``nn.Parameter``s, like out_proj's weight and bias.
"""
CAUGHT_BY = [
    "hidden/test_mha_grad.py::test_gradients_reach_every_parameter",
    "hidden/test_mha_grad.py::test_gradients_match_torch",
]
PATCH = [('super().__init__()\n', 'nn.Module.__init__(self)\n'),
 ('self.d_model = d_model\n'
  'self.n_heads = n_heads\n'
  'self.d_head = d_model // n_heads\n'
  'self.in_proj_weight = nn.Parameter(torch.empty(3 * d_model, d_model))\n'
  'nn.init.xavier_uniform_(self.in_proj_weight)\n'
  'if bias:\n'
  '    self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model))\n'
  'else:\n'
  '    self.register_parameter("in_proj_bias", None)\n',
  'self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads\n'
  'self.register_buffer("in_proj_weight", nn.init.xavier_uniform_(torch.empty(3 * d_model, d_model)))\n'
  'self.register_buffer("in_proj_bias", torch.zeros(3 * d_model) if bias else None)\n'),
 ('if bias:\n    nn.init.zeros_(self.out_proj.bias)\n', '')]
