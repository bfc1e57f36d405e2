"""The mask is ignored

A blocked key (mask entry True) must get a score of -inf before the softmax so
its weight is exactly 0; your weights are the unmasked ones. Apply the mask to
the (B, h, n_q, n_k) scores with masked_fill(mask, float("-inf")): a
(n_q, n_k) or (B or 1, h or 1, ...) mask broadcasts over the missing axes.
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
 ('if mask is not None:\n    scores = scores.masked_fill(mask, float("-inf"))\n', ''),
 ('heads = weights @ v\nout = self.out_proj(merge_heads(heads))\nreturn out, weights\n',
  'return self.out_proj(merge_heads(weights @ v)), weights\n')]
