"""temperature 0 divides by zero: NaN instead of greedy.

With temperature 0 your probabilities are NaN: logits / 0 is +inf or -inf, and the softmax of infinities computes
inf - inf = NaN. Temperature 0 is the limit T -> 0, all the probability on the argmax: treat it as a special case
(a one-hot row, or return the argmax directly in sample_next).
"""
CAUGHT_BY = ["hidden/test_sampling.py::test_temperature_zero_is_greedy"]

_reference_next_token_probs = next_token_probs


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0:
        with torch.no_grad():
            scaled = logits / torch.tensor(0.0, dtype=logits.dtype)
        probs = torch.softmax(scaled, dim=-1)
        return probs
    return _reference_next_token_probs(logits, temperature, top_k, top_p)
