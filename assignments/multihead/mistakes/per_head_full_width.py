"""Every head gets its own full-width (d x d) projections: parameters grow with h

The course's table: at d_model = 64, 1, 2, 4 and 8 heads all have
4·64² + 4·64 = 16,640 parameters. Heads do not add weights; they cut the same
W_Q, W_K, W_V (each d x d) into h slices of width d/h. Your module builds
separate d x d projections per head, so it has (3h + 1)·d² + ... parameters and
cannot load nn.MultiheadAttention's weights.
"""
CAUGHT_BY = [
    "hidden/test_mha_params.py::test_parameter_names_and_shapes",
    "hidden/test_mha_params.py::test_parameter_count",
    "hidden/test_mha_forward.py::test_matches_torch_float64",
    "hidden/test_mha_forward.py::test_masks_match_torch",
    "hidden/test_mha_grad.py::test_gradients_match_torch",
    "public/test_multihead_public.py::test_parameter_count_table",
    "public/test_multihead_public.py::test_matches_torch_small",
    "hidden/test_mha_forward.py::test_float32",
    "hidden/test_mha_forward.py::test_fully_blocked_rows",
    "hidden/test_mha_grad.py::test_gradients_reach_every_parameter",
    "hidden/test_order.py::test_self_attention_is_permutation_equivariant",
]
PATCH = [('super().__init__()\n', 'nn.Module.__init__(self)\n'),
 ('self.d_model = d_model\n'
  'self.n_heads = n_heads\n'
  'self.d_head = d_model // n_heads\n'
  'self.in_proj_weight = nn.Parameter(torch.empty(3 * d_model, d_model))\n'
  'nn.init.xavier_uniform_(self.in_proj_weight)\n',
  'self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model\n'
  'self.in_proj_weight = nn.Parameter(nn.init.xavier_uniform_(torch.empty(3 * n_heads * d_model, '
  'd_model)))\n'),
 ('self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model))\n',
  'self.in_proj_bias = nn.Parameter(torch.zeros(3 * n_heads * d_model))\n'),
 ('self.out_proj = nn.Linear(d_model, d_model, bias=bias)\n'
  'if bias:\n'
  '    nn.init.zeros_(self.out_proj.bias)\n',
  'self.out_proj = nn.Linear(n_heads * d_model, d_model, bias=bias)\n'),
 ('if self.in_proj_bias is not None:\n'
  '    b_q, b_k, b_v = self.in_proj_bias.chunk(3, dim=0)\n'
  'else:\n'
  '    b_q = b_k = b_v = None\n',
  'b_q, b_k, b_v = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)\n'),
 ('heads = weights @ v\nout = self.out_proj(merge_heads(heads))\nreturn out, weights\n',
  'return self.out_proj(merge_heads(weights @ v)), weights\n')]
