"""Blocked scores set to 0 instead of -inf

A score of 0 is an ordinary score: exp(0) = 1, so a "blocked" key still gets
weight. Set blocked scores to -inf before the softmax; exp(-inf) = 0 makes their
weight exactly zero and the remaining weights renormalise to sum to 1.
"""
CAUGHT_BY = [
    "hidden/test_mha_forward.py::test_masks_match_torch",
    "hidden/test_mha_forward.py::test_float32",
    "hidden/test_mha_forward.py::test_fully_blocked_rows",
    "hidden/test_mha_grad.py::test_gradients_match_torch",
    "public/test_multihead_public.py::test_matches_torch_small",
]
PATCH = [('if self.in_proj_bias is not None:\n'
  '    b_q, b_k, b_v = self.in_proj_bias.chunk(3, dim=0)\n'
  'else:\n'
  '    b_q = b_k = b_v = None\n',
  'b_q, b_k, b_v = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)\n'),
 ('scores = scores.masked_fill(mask, float("-inf"))\n', 'scores = scores.masked_fill(mask, 0.0)\n'),
 ('heads = weights @ v\nout = self.out_proj(merge_heads(heads))\nreturn out, weights\n',
  'return self.out_proj(merge_heads(weights @ v)), weights\n')]
