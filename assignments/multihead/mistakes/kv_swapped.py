"""K and V taken from the wrong slices of in_proj_weight (swapped)

``in_proj_weight`` stacks [W_Q; W_K; W_V] along its rows: rows [0, d) give the
queries, [d, 2d) the keys, [2d, 3d) the values (``chunk(3, dim=0)`` in that
order), and ``in_proj_bias`` splits the same way. Your keys and values come from
each other's slices.
"""
CAUGHT_BY = [
    "hidden/test_mha_forward.py::test_matches_torch_float64",
    "hidden/test_mha_forward.py::test_masks_match_torch",
    "hidden/test_mha_forward.py::test_float32",
    "hidden/test_mha_grad.py::test_gradients_match_torch",
    "public/test_multihead_public.py::test_matches_torch_small",
    "hidden/test_mha_forward.py::test_fully_blocked_rows",
    "hidden/test_order.py::test_self_attention_is_permutation_equivariant",
]
PATCH = [('w_q, w_k, w_v = self.in_proj_weight.chunk(3, dim=0)\n'
  'if self.in_proj_bias is not None:\n'
  '    b_q, b_k, b_v = self.in_proj_bias.chunk(3, dim=0)\n'
  'else:\n'
  '    b_q = b_k = b_v = None\n',
  'w_q, w_v, w_k = self.in_proj_weight.chunk(3, dim=0)\n'
  'b_q, b_v, b_k = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)\n'),
 ('heads = weights @ v\nout = self.out_proj(merge_heads(heads))\nreturn out, weights\n',
  'return self.out_proj(merge_heads(weights @ v)), weights\n')]
