"""Softmax taken over the queries (dim=-2) instead of the keys

The scores are (B, h, n_q, n_k): row i holds query i's scores for every key,
and each query's weights over the keys must sum to 1, so the softmax runs over
the last axis (dim=-1). Normalising over dim=-2 makes each *key's* column sum to 1.
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
 ('weights = _softmax_last(scores)\n'
  'heads = weights @ v\n'
  'out = self.out_proj(merge_heads(heads))\n'
  'return out, weights\n',
  'weights = _softmax_last(scores.transpose(-2, -1)).transpose(-2, -1)\n'
  'return self.out_proj(merge_heads(weights @ v)), weights\n')]
