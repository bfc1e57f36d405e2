"""Attention softmax over the queries (dim=-2) instead of over the keys.

Your attention weights are normalised down each column (over the queries), so a
query's weights over the keys do not sum to 1. Each query needs a probability
distribution over the keys: softmax(scores, dim=-1) on scores of shape (..., n_q, n_k).
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_matches_reference",
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_properties",
    "hidden/test_sdpa.py::test_gradients",
    "public/test_attention_public.py::test_worked_example",
    "public/test_attention_public.py::test_shapes",
    "public/test_attention_public.py::test_fully_blocked_query",
    "hidden/test_banned.py::test_sdpa_by_hand",
    "hidden/test_sdpa.py::test_blocked_weights_zero",
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "hidden/test_sdpa.py::test_fully_blocked_gradients",
    "hidden/test_sdpa.py::test_output_dtype",
]
PATCH = [('d_k = q.shape[-1]\nscores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n',
  'scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n'),
 ('weights = softmax(scores, dim=-1)\noutput = weights @ v\nreturn output, weights\n',
  'weights = softmax(scores, dim=-2)\nreturn weights @ v, weights\n')]
