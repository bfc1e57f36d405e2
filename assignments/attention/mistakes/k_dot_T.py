"""k.T on a batch: reverses every dimension instead of transposing the last two.

Your attention is right for 2-D inputs but not for batches: on a tensor with
more than two dimensions, k.T reverses ALL dimensions ((B, n_k, d_k) becomes
(d_k, n_k, B)). Transpose only the last two: k.transpose(-2, -1) (or k.mT).
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_matches_reference",
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_gradients",
    "public/test_attention_public.py::test_shapes",
    "hidden/test_banned.py::test_sdpa_by_hand",
    "hidden/test_sdpa.py::test_properties",
    "hidden/test_sdpa.py::test_blocked_weights_zero",
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "hidden/test_sdpa.py::test_fully_blocked_gradients",
    "hidden/test_sdpa.py::test_output_dtype",
]
PATCH = [('d_k = q.shape[-1]\nscores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n',
  'scores = q @ k.T / math.sqrt(q.shape[-1])\n'),
 ('output = weights @ v\nreturn output, weights\n', 'return weights @ v, weights\n')]
