"""Scores divided by sqrt(d_v), the value width, instead of sqrt(d_k).

Your scores were divided by the square root of the value width (v.shape[-1]).
The scale comes from the dot product q·k, a sum of d_k terms: divide by
sqrt(d_k) with d_k = q.shape[-1] (= k.shape[-1]). The two widths differ in
cross-attention and in general.
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_matches_reference",
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_gradients",
    "hidden/test_banned.py::test_sdpa_by_hand",
    "public/test_attention_public.py::test_worked_example",
    "hidden/test_sdpa.py::test_properties",
    "hidden/test_sdpa.py::test_blocked_weights_zero",
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "hidden/test_sdpa.py::test_fully_blocked_gradients",
    "hidden/test_sdpa.py::test_output_dtype",
]
PATCH = [('d_k = q.shape[-1]\nscores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n',
  'scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])\n'),
 ('output = weights @ v\nreturn output, weights\n', 'return weights @ v, weights\n')]
