"""Scores divided by d_k instead of sqrt(d_k).

Your weights are too flat: the scores were divided by d_k, not by sqrt(d_k).
q·k has variance d_k, i.e. a standard deviation of sqrt(d_k); dividing by
sqrt(d_k) brings it back to 1, dividing by d_k shrinks it to 1/sqrt(d_k) and
the attention blurs towards uniform weights.
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
  'scores = q @ k.transpose(-2, -1) / q.shape[-1]\n'),
 ('output = weights @ v\nreturn output, weights\n', 'return weights @ v, weights\n')]
