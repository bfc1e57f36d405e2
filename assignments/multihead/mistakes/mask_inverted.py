"""The mask is inverted (True treated as allowed)

In this kit, as in nn.MultiheadAttention's attn_mask, True means *blocked*:
that query may not look at that key. F.scaled_dot_product_attention uses the
opposite convention (True = allowed); the two are easy to mix up. Fill the
scores where the mask is True with -inf.
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
 ('scores = scores.masked_fill(mask, float("-inf"))\n',
  'scores = scores.masked_fill(~mask, float("-inf"))\n'),
 ('heads = weights @ v\nout = self.out_proj(merge_heads(heads))\nreturn out, weights\n',
  'return self.out_proj(merge_heads(weights @ v)), weights\n')]
