"""Causal mask that also blocks the diagonal (triu with diagonal=0).

Your causal mask blocks each position from itself: the first query then sees
no key at all. A query at position i may look at keys 0..i, itself included;
only the strict future j > i is blocked: torch.triu(..., diagonal=1).
"""
CAUGHT_BY = [
    "hidden/test_masks.py::test_causal_mask",
    "public/test_attention_public.py::test_causal_mask_4",
    "hidden/test_masks.py::test_future_independence",
]
PATCH = [('return torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)\n',
  'return torch.ones(n, n, dtype=torch.bool).triu(diagonal=0)\n')]
