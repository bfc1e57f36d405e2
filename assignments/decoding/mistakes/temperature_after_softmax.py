"""temperature applied after the softmax: it changes nothing.

Your probabilities do not depend on the temperature: dividing probabilities by T and renormalising gives the same
distribution back. Temperature divides the LOGITS before the softmax, softmax(logits / T): T < 1 sharpens the
distribution, T > 1 flattens it (see "Temperature" in the handout).
"""
CAUGHT_BY = [
    "public/test_decoding_public.py::test_probs_worked_example",
    "hidden/test_sampling.py::test_probs_temperature",
    "hidden/test_sampling.py::test_top_k_matches_reference",
    "hidden/test_sampling.py::test_top_p_after_temperature_and_top_k",
]

_reference_next_token_probs = next_token_probs


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0 or temperature < 0:
        return _reference_next_token_probs(logits, temperature, top_k, top_p)
    probs = torch.softmax(logits, dim=-1) / temperature
    probs = probs / probs.sum(dim=-1, keepdim=True)
    return _reference_next_token_probs(torch.log(probs), 1.0, top_k, top_p)
