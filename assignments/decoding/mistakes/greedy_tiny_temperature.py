"""temperature 0 done as a tiny temperature (softmax(logits / 1e-8)) instead of the argmax.

Your temperature-0 probabilities are not one-hot on the argmax: dividing by a tiny temperature instead of treating
T = 0 as greedy splits the probability between tied maxima (and between maxima closer than about the tiny
temperature), and for large logits logits / 1e-8 overflows to inf, so the softmax computes inf - inf = NaN. Greedy is
not a limit you can approach numerically: special-case temperature 0 as a one-hot row on the argmax (the first of
tied maxima, as torch.argmax gives), and in sample_next return the argmax without drawing.
"""
CAUGHT_BY = [
    "hidden/test_sampling.py::test_greedy_first_argmax",
    "hidden/test_sampling.py::test_sample_next_greedy_first_argmax",
]

_reference_next_token_probs = next_token_probs


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0:
        temperature = 1e-8                                  # "the limit T -> 0"
    return _reference_next_token_probs(logits, temperature, top_k, top_p)


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = next_token_probs(logits, temperature, top_k, top_p)
    return torch.multinomial(probs, 1, generator=generator)[:, 0]
