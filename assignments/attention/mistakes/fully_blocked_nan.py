"""Fully blocked rows give NaN: the stable softmax without the all -inf guard.

A query whose keys are all blocked has scores that are all -inf; then
max = -inf, x - max = -inf - (-inf) = NaN, and the NaN spreads to the output
and to every gradient. Such a query must get zero weights and a zero output:
use 0 as the max of an all -inf slice, and divide by 1 where the sum is 0.
(scaled_dot_product_attention's tests grade a fully blocked query around
this: they charge it to softmax alone.)
"""
CAUGHT_BY = [
    "hidden/test_softmax.py::test_all_neg_inf_slice",
    "public/test_attention_public.py::test_softmax_all_neg_inf_row",
]
PATCH = [('m = x.amax(dim=dim, keepdim=True)\n'
  'm = torch.where(torch.isfinite(m), m, torch.zeros_like(m))\n'
  'e = torch.exp(x - m)\n'
  'total = e.sum(dim=dim, keepdim=True)\n'
  'return e / torch.where(total > 0, total, torch.ones_like(total))\n',
  'e = torch.exp(x - x.amax(dim=dim, keepdim=True))\nreturn e / e.sum(dim=dim, keepdim=True)\n')]
