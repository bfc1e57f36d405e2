"""top-p drops the token that crosses the threshold.

Your nucleus keeps only the tokens whose running total stays at or below top_p, so it drops the token that crosses
it (and with a small top_p it keeps nothing at all). The nucleus is the SMALLEST set whose mass reaches top_p: keep a
token when the mass of the tokens before it is below top_p (cumsum - p < top_p), the crossing token included.
"""
CAUGHT_BY = [
    "hidden/test_sampling.py::test_top_p_matches_reference",
    "hidden/test_sampling.py::test_single_token_exact",
]

_reference_next_token_probs = next_token_probs


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0 or top_p is None or not 0 < top_p <= 1:
        return _reference_next_token_probs(logits, temperature, top_k, top_p)
    probs = _reference_next_token_probs(logits, temperature, top_k, None)
    sorted_probs, order = probs.sort(dim=-1, descending=True, stable=True)
    # "at or below top_p" with a tolerance far above float64 round-off, so that this mistake does the same on every
    # machine: at top_p = 1.0 the running total reaches 1 only up to round-off, and every token is kept
    keep_sorted = sorted_probs.cumsum(dim=-1) <= top_p + 1e-9
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    probs = torch.where(keep, probs, torch.zeros_like(probs))
    return probs / probs.sum(dim=-1, keepdim=True)
