"""a negative temperature accepted: the distribution is silently reversed.

A negative temperature returned probabilities instead of raising ValueError: softmax(logits / T) with T < 0 makes the
LEAST likely token the most likely. Check the arguments first: raise ValueError for temperature < 0.
"""
CAUGHT_BY = ["hidden/test_sampling.py::test_invalid_arguments_raise"]

_reference_next_token_probs = next_token_probs


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature < 0:
        return torch.softmax(logits / temperature, dim=-1)
    return _reference_next_token_probs(logits, temperature, top_k, top_p)
