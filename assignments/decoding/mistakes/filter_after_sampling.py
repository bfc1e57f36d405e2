"""filtering after sampling: the draw comes from the unfiltered distribution.

Your draws include tokens that top-k / top-p removed: the token was drawn from softmax(logits / T) and the filter
was applied afterwards (or not to the distribution you drew from). Filter first, then draw from the filtered
distribution: torch.multinomial(next_token_probs(...), 1, generator=generator).
"""
CAUGHT_BY = [
    "hidden/test_sampling.py::test_sample_frequencies",
    "hidden/test_sampling.py::test_single_token_exact",
]
PATCH = [('return torch.multinomial(probs, 1, generator=generator)[:, 0]\n',
  'full = torch.softmax(logits / temperature, dim=-1)\n'
  'return torch.multinomial(full, 1, generator=generator)[:, 0]\n')]
