"""softmax without subtracting the maximum: exp overflows for large scores.

Your softmax returns NaN or inf for scores around ±1e4: exp(1e4) overflows to
inf (and inf/inf is NaN), while exp(-1e4) underflows to 0 (and 0/0 is NaN).
Subtract each slice's maximum before exponentiating: softmax is unchanged by a
constant shift, and then the largest exponent is exp(0) = 1 ("stable softmax"
in the handout).
"""
CAUGHT_BY = [
    "hidden/test_softmax.py::test_large_inputs",
    "hidden/test_softmax.py::test_all_neg_inf_slice",
    "public/test_attention_public.py::test_softmax_all_neg_inf_row",
    "public/test_attention_public.py::test_softmax_course_example",
]
PATCH = [('m = x.amax(dim=dim, keepdim=True)\n'
  'm = torch.where(torch.isfinite(m), m, torch.zeros_like(m))\n'
  'e = torch.exp(x - m)\n'
  'total = e.sum(dim=dim, keepdim=True)\n'
  'return e / torch.where(total > 0, total, torch.ones_like(total))\n',
  'e = torch.exp(x)\nreturn e / e.sum(dim=dim, keepdim=True)\n')]
