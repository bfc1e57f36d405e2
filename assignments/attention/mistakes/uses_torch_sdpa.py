"""Calls F.scaled_dot_product_attention instead of writing attention.

Your attention calls torch.nn.functional.scaled_dot_product_attention: the
assignment is to write softmax(q kᵀ / sqrt(d_k)) v yourself, with your own
softmax. (Careful too: that function's boolean mask means True = take part,
the opposite of this assignment's True = blocked.)
"""
CAUGHT_BY = [
    "hidden/test_banned.py::test_sdpa_by_hand",
    "hidden/test_sdpa.py::test_matches_reference",
    "hidden/test_sdpa.py::test_gradients",
    "public/test_attention_public.py::test_worked_example",
    "public/test_attention_public.py::test_shapes",
    "public/test_attention_public.py::test_fully_blocked_query",
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_properties",
    "hidden/test_sdpa.py::test_blocked_weights_zero",
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "hidden/test_sdpa.py::test_fully_blocked_gradients",
    "hidden/test_sdpa.py::test_output_dtype",
]
PATCH = [('d_k = q.shape[-1]\n'
  'scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n'
  'if mask is not None:\n'
  '    scores = scores.masked_fill(mask, float("-inf"))\n'
  'weights = softmax(scores, dim=-1)\n'
  'output = weights @ v\n',
  'allowed = None if mask is None else ~mask\n'
  'output = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=allowed)\n'
  'weights = softmax(q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + (0 if mask is None else\n'
  '                  torch.zeros_like(mask, dtype=q.dtype).masked_fill(mask, float("-inf"))), dim=-1)\n')]
