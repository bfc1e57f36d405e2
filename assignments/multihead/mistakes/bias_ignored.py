"""in_proj_bias ignored when bias=True

nn.MultiheadAttention adds in_proj_bias to the projections: Q = query W_Qᵀ + b_Q,
and likewise for K and V, with b_Q, b_K, b_V = in_proj_bias.chunk(3). Your
projections leave the bias out (it starts at zero, so this only shows once the
bias has been trained or loaded).
"""
CAUGHT_BY = [
    "hidden/test_mha_forward.py::test_matches_torch_float64",
    "hidden/test_mha_forward.py::test_masks_match_torch",
    "hidden/test_mha_forward.py::test_float32",
    "hidden/test_mha_grad.py::test_gradients_reach_every_parameter",
    "hidden/test_mha_grad.py::test_gradients_match_torch",
    "public/test_multihead_public.py::test_matches_torch_small",
    "hidden/test_mha_forward.py::test_fully_blocked_rows",
    "hidden/test_order.py::test_self_attention_is_permutation_equivariant",
]
PATCH = [('if self.in_proj_bias is not None:\n'
  '    b_q, b_k, b_v = self.in_proj_bias.chunk(3, dim=0)\n'
  'else:\n'
  '    b_q = b_k = b_v = None\n'
  'q = split_heads(F.linear(query, w_q, b_q), self.n_heads)\n'
  'k = split_heads(F.linear(key, w_k, b_k), self.n_heads)\n'
  'v = split_heads(F.linear(value, w_v, b_v), self.n_heads)\n',
  'q = split_heads(query @ w_q.T, self.n_heads)\n'
  'k = split_heads(key @ w_k.T, self.n_heads)\n'
  'v = split_heads(value @ w_v.T, self.n_heads)\n'),
 ('heads = weights @ v\nout = self.out_proj(merge_heads(heads))\nreturn out, weights\n',
  'return self.out_proj(merge_heads(weights @ v)), weights\n')]
