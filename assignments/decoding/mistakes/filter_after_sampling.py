"""filtering after sampling: the draw comes from the unfiltered distribution.

Your draws include tokens that top-k / top-p removed: the token was drawn from softmax(logits / T) and the filter
was applied afterwards (or not to the distribution you drew from). Filter first, then draw from the filtered
distribution: torch.multinomial(next_token_probs(...), 1, generator=generator).
"""
CAUGHT_BY = [
    "hidden/test_sampling.py::test_sample_frequencies",
    "hidden/test_sampling.py::test_single_token_exact",
]


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = next_token_probs(logits, temperature, top_k, top_p)
    if temperature == 0:
        return probs.argmax(dim=-1)
    full = torch.softmax(logits / temperature, dim=-1)
    return torch.multinomial(full, 1, generator=generator)[:, 0]
