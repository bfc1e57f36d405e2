"""Mask applied after the softmax: blocked weights zeroed without renormalising.

Your blocked weights are 0, but the remaining weights of a row no longer sum
to 1: the softmax had already shared the probability with the blocked keys.
Mask BEFORE the softmax: set blocked scores to -inf (exp(-inf) = 0), so the
softmax renormalises over the allowed keys only.
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_properties",
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "hidden/test_banned.py::test_sdpa_by_hand",
    "public/test_attention_public.py::test_fully_blocked_query",
    "hidden/test_sdpa.py::test_blocked_weights_zero",
    "hidden/test_sdpa.py::test_fully_blocked_gradients",
    "hidden/test_sdpa.py::test_gradients",
]
PATCH = [('d_k = q.shape[-1]\nscores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n',
  'scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\nweights = softmax(scores, dim=-1)\n'),
 ('if mask is not None:\n'
  '    scores = scores.masked_fill(mask, float("-inf"))\n'
  'weights = softmax(scores, dim=-1)\n'
  'output = weights @ v\n'
  'return output, weights\n',
  'if mask is not None:\n    weights = weights.masked_fill(mask, 0.0)\nreturn weights @ v, weights\n')]
