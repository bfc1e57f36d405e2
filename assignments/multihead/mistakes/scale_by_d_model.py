"""Scores divided by sqrt(d_model) instead of sqrt(d_h)

Each head computes dot products of d_h = d_model / n_heads features, so its
scores are divided by sqrt(d_h) (sqrt(64) = 8 for 8 heads on d = 512, not
sqrt(512)). Dividing by sqrt(d_model) only agrees when there is one head.
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
PATCH = [('if self.in_proj_bias is not None:\n'
  '    b_q, b_k, b_v = self.in_proj_bias.chunk(3, dim=0)\n'
  'else:\n'
  '    b_q = b_k = b_v = None\n',
  'b_q, b_k, b_v = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)\n'),
 ('scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)\n',
  'scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_model)\n'),
 ('heads = weights @ v\nout = self.out_proj(merge_heads(heads))\nreturn out, weights\n',
  'return self.out_proj(merge_heads(weights @ v)), weights\n')]
