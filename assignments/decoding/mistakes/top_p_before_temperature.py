"""top-p applied before the temperature: the nucleus is chosen on the wrong distribution.

Your nucleus was chosen from softmax(logits), before the temperature: the temperature changes which tokens make up
the top_p mass (a high temperature flattens the distribution, so the nucleus grows). The order is temperature, then
top-k, then top-p on the renormalised result.
"""
CAUGHT_BY = ["hidden/test_sampling.py::test_top_p_after_temperature_and_top_k"]

_reference_next_token_probs = next_token_probs


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature <= 0 or top_p is None or not 0 < top_p <= 1:
        return _reference_next_token_probs(logits, temperature, top_k, top_p)
    kept = _reference_next_token_probs(logits, 1.0, top_k, top_p) > 0
    filtered = logits.masked_fill(~kept, float("-inf"))
    return torch.softmax(filtered / temperature, dim=-1)
