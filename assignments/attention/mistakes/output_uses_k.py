"""Output computed from the keys: weights @ k instead of weights @ v.

Your output mixes the keys, not the values. Keys are what a query is matched
against; values are what is read out: output = weights @ v, of shape
(..., n_q, d_v).
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_matches_reference",
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_properties",
    "public/test_attention_public.py::test_worked_example",
    "public/test_attention_public.py::test_shapes",
    "public/test_attention_public.py::test_fully_blocked_query",
    "hidden/test_banned.py::test_sdpa_by_hand",
    "hidden/test_sdpa.py::test_blocked_weights_zero",
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "hidden/test_sdpa.py::test_fully_blocked_gradients",
    "hidden/test_sdpa.py::test_gradients",
    "hidden/test_sdpa.py::test_output_dtype",
]
PATCH = [('d_k = q.shape[-1]\nscores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n',
  'scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n'),
 ('output = weights @ v\nreturn output, weights\n', 'return weights @ k, weights\n')]
