"""Returns the attention weights computed before masking.

Your output uses the masked weights, but the weights you return are those of
the unmasked scores, so blocked keys appear to get attention. Return the
weights that actually produced the output: the softmax of the masked scores.
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_blocked_weights_zero",
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "public/test_attention_public.py::test_fully_blocked_query",
    "hidden/test_sdpa.py::test_properties",
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
  'if mask is not None:\n'
  '    masked = softmax(scores.masked_fill(mask, float("-inf")), dim=-1)\n'
  '    return masked @ v, weights\n'
  'return weights @ v, weights\n')]
