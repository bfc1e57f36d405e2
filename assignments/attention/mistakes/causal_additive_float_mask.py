"""causal_mask returns an additive float mask (-inf above the diagonal, 0 elsewhere), not a boolean one.

Your causal_mask returns float scores to ADD (the convention of nn.Transformer.generate_square_subsequent_mask).
This course's masks are boolean, True = blocked, and attention fills the blocked scores with -inf itself:
return torch.ones(n, n, dtype=torch.bool).triu(diagonal=1).
"""
CAUGHT_BY = [
    "hidden/test_masks.py::test_causal_mask",
    "public/test_attention_public.py::test_causal_mask_4",
    "hidden/test_masks.py::test_future_independence",
]
PATCH = [('return torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)\n',
  'return torch.full((n, n), float("-inf")).triu(diagonal=1)\n')]
