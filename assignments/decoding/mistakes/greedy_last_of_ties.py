"""greedy takes the last of tied maxima instead of the first.

With tied maxima your temperature-0 row puts its probability on the LAST of the tied tokens. The contract (like
torch.argmax) takes the FIRST: a scan that updates its best with `>=` instead of `>`, an argmax over the reversed
row, or the last index where logits == max all pick the last one. Use logits.argmax(dim=-1), or keep the first
index that reaches the maximum.
"""
CAUGHT_BY = [
    "hidden/test_sampling.py::test_greedy_first_argmax",
    "hidden/test_sampling.py::test_sample_next_greedy_first_argmax",
]

_reference_next_token_probs = next_token_probs


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    probs = _reference_next_token_probs(logits, temperature, top_k, top_p)  # the argument checks
    if temperature != 0:
        return probs
    last = logits.shape[-1] - 1 - logits.flip(-1).argmax(dim=-1, keepdim=True)  # the last of tied maxima
    return torch.zeros_like(logits).scatter_(-1, last, 1.0)
