"""top-k without renormalising: the kept probabilities no longer sum to 1.

After top-k your rows sum to less than 1: the dropped tokens were set to 0 but the kept ones were not divided by their
total. (torch.multinomial would still draw correctly, but next_token_probs must return a distribution.) Divide by the
sum of the kept probabilities, or apply the softmax to the filtered logits (dropped ones set to -inf).
"""
CAUGHT_BY = ["hidden/test_sampling.py::test_top_k_matches_reference"]

_reference_next_token_probs = next_token_probs


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0 or top_k is None or top_k < 1:
        return _reference_next_token_probs(logits, temperature, top_k, top_p)
    probs = torch.softmax(logits / temperature, dim=-1)
    kept = probs.topk(min(top_k, probs.shape[-1]), dim=-1).indices
    probs = torch.zeros_like(probs).scatter(-1, kept, probs.gather(-1, kept))
    if top_p is not None:
        return _reference_next_token_probs(torch.log(probs), 1.0, None, top_p)
    return probs
