"""Blocked scores set to a large negative number (-1e9, finfo.min) instead of -inf: a fully blocked query gets uniform weights

Filling with a large negative number works while a query has at least one open
key, but when every key is blocked all its scores are equal (-1e9) and the
softmax spreads weight 1/n_k over keys it may not see. Use -inf, and turn an
all -inf row into zero weights (not NaN): the contract says a fully blocked
query's output row is just out_proj.bias.
"""
CAUGHT_BY = [
    "hidden/test_mha_forward.py::test_fully_blocked_rows",
]
PATCH = [('if self.in_proj_bias is not None:\n'
  '    b_q, b_k, b_v = self.in_proj_bias.chunk(3, dim=0)\n'
  'else:\n'
  '    b_q = b_k = b_v = None\n',
  'b_q, b_k, b_v = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)\n'),
 ('scores = scores.masked_fill(mask, float("-inf"))\n', 'scores = scores.masked_fill(mask, -1e9)\n'),
 ('heads = weights @ v\nout = self.out_proj(merge_heads(heads))\nreturn out, weights\n',
  'return self.out_proj(merge_heads(weights @ v)), weights\n')]
