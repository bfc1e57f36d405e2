"""Scores divided by sqrt(n_k), the number of keys, instead of sqrt(d_k).

Your scores were divided by the square root of the number of keys
(k.shape[-2]). The scale corrects the variance of one dot product q·k, a sum
of d_k terms, so it is sqrt(d_k) with d_k = q.shape[-1], whatever the
sequence length.
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_matches_reference",
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_gradients",
    "public/test_attention_public.py::test_worked_example",
    "hidden/test_banned.py::test_sdpa_by_hand",
    "hidden/test_sdpa.py::test_properties",
    "hidden/test_sdpa.py::test_blocked_weights_zero",
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "hidden/test_sdpa.py::test_fully_blocked_gradients",
    "hidden/test_sdpa.py::test_output_dtype",
]
PATCH = [('d_k = q.shape[-1]\nscores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n',
  'scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-2])\n'),
 ('output = weights @ v\nreturn output, weights\n', 'return weights @ v, weights\n')]
