"""top-k keeps every token tied with the k-th: k + 1 (or more) tokens survive.

With ties at the k-th largest logit your top-k kept more than k tokens: `logits >= kth_largest` keeps every token
equal to the threshold. Top-k keeps exactly k: select k indices (torch.topk, or a sort, and keep the first k).
"""
CAUGHT_BY = ["hidden/test_sampling.py::test_top_k_ties_keep_exactly_k"]

_reference_next_token_probs = next_token_probs


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0 or top_k is None or top_k < 1:
        return _reference_next_token_probs(logits, temperature, top_k, top_p)
    scaled = logits / temperature
    kth = scaled.topk(min(top_k, scaled.shape[-1]), dim=-1).values[..., -1:]
    filtered = scaled.masked_fill(scaled < kth, float("-inf"))
    return _reference_next_token_probs(filtered, 1.0, None, top_p)
