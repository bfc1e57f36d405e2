"""Causal mask transposed: the lower triangle (the past) blocked instead of the future.

Your causal mask blocks the past and lets every query read the future, so the
model can copy the answer. Rows are queries, columns are keys: entry [i, j]
must be True (blocked) when j > i, the strict upper triangle
(torch.triu(..., diagonal=1)).
"""
CAUGHT_BY = [
    "hidden/test_masks.py::test_causal_mask",
    "hidden/test_masks.py::test_future_independence",
    "public/test_attention_public.py::test_causal_mask_4",
]
PATCH = [('return torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)\n',
  'return torch.ones(n, n, dtype=torch.bool).tril(diagonal=-1)\n')]
