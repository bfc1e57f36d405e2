"""causal_mask returns the keep-mask (tril: True where a query MAY look), the opposite convention.

Your causal_mask is True on and below the diagonal, i.e. it marks the keys a query may see (the
convention of F.scaled_dot_product_attention's boolean attn_mask and of many tutorials' tril). In this
course True means BLOCKED (the nn.MultiheadAttention convention): the future j > i is True, the
diagonal and the past are False: torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1).
"""
CAUGHT_BY = [
    "hidden/test_masks.py::test_causal_mask",
    "public/test_attention_public.py::test_causal_mask_4",
    "hidden/test_masks.py::test_future_independence",
]
PATCH = [('return torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)\n',
  'return torch.ones(n, n, dtype=torch.bool).tril()\n')]
