"""torch.softmax on a fully blocked row: NaN weights and a NaN output row

When every key of a query is blocked, its scores are all -inf and softmax
computes 0/0 = NaN, which then spreads through out_proj into that output row.
The contract asks for zero weights there (so the output row is out_proj.bias):
subtract a finite maximum (0 for an all -inf row) before exp, and divide by a
sum of 1 where the sum is 0, or replace the NaN rows with zeros.
"""
CAUGHT_BY = [
    "hidden/test_mha_forward.py::test_fully_blocked_rows",
]
PATCH = [('if self.in_proj_bias is not None:\n'
  '    b_q, b_k, b_v = self.in_proj_bias.chunk(3, dim=0)\n'
  'else:\n'
  '    b_q = b_k = b_v = None\n',
  'b_q, b_k, b_v = self.in_proj_bias.chunk(3) if self.in_proj_bias is not None else (None, None, None)\n'),
 ('weights = _softmax_last(scores)\n'
  'heads = weights @ v\n'
  'out = self.out_proj(merge_heads(heads))\n'
  'return out, weights\n',
  'weights = torch.softmax(scores, dim=-1)\nreturn self.out_proj(merge_heads(weights @ v)), weights\n')]
