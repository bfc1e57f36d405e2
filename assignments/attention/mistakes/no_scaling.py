"""No scaling: scores are q·k, not q·k / sqrt(d_k).

Your weights are too sharp: the scores were not divided by sqrt(d_k). A dot
product of d_k components with variance 1 has variance d_k, so unscaled scores
grow with the key width and the softmax saturates (one weight near 1, gradients
near 0: at d_k = 1024 the largest weight is 0.97 instead of 0.32). Divide by
sqrt(d_k), with d_k = q.shape[-1].
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
  'scores = q @ k.transpose(-2, -1)\n'),
 ('output = weights @ v\nreturn output, weights\n', 'return weights @ v, weights\n')]
