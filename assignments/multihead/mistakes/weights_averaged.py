"""Returned weights averaged over the heads

The contract asks for every head's own attention pattern, shape
(B, h, n_q, n_k), as nn.MultiheadAttention returns with
average_attn_weights=False. Averaging them (torch's default) hides what each
head attends to.
"""
CAUGHT_BY = [
    "hidden/test_mha_forward.py::test_matches_torch_float64",
    "hidden/test_mha_forward.py::test_masks_match_torch",
    "hidden/test_mha_forward.py::test_float32",
    "public/test_multihead_public.py::test_matches_torch_small",
    "hidden/test_mha_forward.py::test_fully_blocked_rows",
    "hidden/test_mha_grad.py::test_gradients_reach_every_parameter",
    "hidden/test_mha_grad.py::test_gradients_match_torch",
    "hidden/test_order.py::test_self_attention_is_permutation_equivariant",
]
PATCH = [('if self.in_proj_bias is not None:\n'
  '    b_q, b_k, b_v = self.in_proj_bias.chunk(3, dim=0)\n'
  'else:\n'
  '    b_q = b_k = b_v = None\n',
  'b_q, b_k, b_v = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)\n'),
 ('heads = weights @ v\nout = self.out_proj(merge_heads(heads))\nreturn out, weights\n',
  'return self.out_proj(merge_heads(weights @ v)), weights.mean(dim=1)\n')]
