"""Masking with -1e9 instead of -inf: fully blocked rows get uniform weights.

For an ordinary row a fill value of -1e9 works (exp(-1e9 - max) is 0), but a
query whose keys are ALL blocked then has equal scores everywhere and the
softmax spreads its weight evenly over the blocked keys, returning their mean
value. Such a query must get zero weights and a zero output: fill with -inf
and let the softmax return zeros for an all -inf slice.
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "hidden/test_sdpa.py::test_fully_blocked_gradients",
    "public/test_attention_public.py::test_fully_blocked_query",
]
PATCH = [('d_k = q.shape[-1]\nscores = q @ k.transpose(-2, -1) / math.sqrt(d_k)\n',
  'scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])\n'),
 ('scores = scores.masked_fill(mask, float("-inf"))\n', 'scores = scores.masked_fill(mask, -1e9)\n'),
 ('output = weights @ v\nreturn output, weights\n', 'return weights @ v, weights\n')]
