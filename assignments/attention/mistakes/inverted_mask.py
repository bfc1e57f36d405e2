"""Inverted mask: True treated as allowed (the F.scaled_dot_product_attention convention).

Your attention blocks the keys the mask allows and lets through the blocked
ones. In this assignment, as in nn.MultiheadAttention's attn_mask, True means
BLOCKED: fill the scores where the mask is True with -inf.
F.scaled_dot_product_attention uses the opposite convention (True = take part).
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_blocked_weights_zero",
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "hidden/test_banned.py::test_sdpa_by_hand",
    "public/test_attention_public.py::test_fully_blocked_query",
    "hidden/test_sdpa.py::test_properties",
    "hidden/test_sdpa.py::test_fully_blocked_gradients",
    "hidden/test_sdpa.py::test_gradients",
]
PATCH = [('d_k = q.shape[-1]\nscores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n',
  'scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n'),
 ('scores = scores.masked_fill(mask, float("-inf"))\n',
  'scores = scores.masked_fill(~mask, float("-inf"))\n'),
 ('output = weights @ v\nreturn output, weights\n', 'return weights @ v, weights\n')]
