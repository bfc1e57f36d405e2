"""Heads averaged instead of concatenated

Your output matches multi-head attention whose heads are *averaged*: one
averaged attention pattern applied to the full-width values. The course stresses
that the head outputs are concatenated, not averaged: each head reads its own
d/h-wide slice of V with its own weights, merge_heads puts the h slices side by
side (width h * d/h = d), and only then does W_O (out_proj) mix them.
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
 ('v = split_heads(F.linear(value, w_v, b_v), self.n_heads)\n',
  'v = F.linear(value, w_v, b_v)                                  # (B, n_k, d): never split\n'),
 ('heads = weights @ v\nout = self.out_proj(merge_heads(heads))\n',
  'out = self.out_proj(weights.mean(dim=1) @ v)                   # average over heads\n')]
