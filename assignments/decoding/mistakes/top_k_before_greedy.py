"""top-k applied before the temperature-0 argmax: another of the tied maxima is kept.

With temperature 0 and top_k, your greedy token on tied maxima is not the first of them: top-k ran on the logits
before the argmax and kept a different one of the tied tokens (which tied token a top-k keeps is up to the filter),
and the argmax then chose among what was left. At temperature 0 the answer is the first argmax of the logits,
whatever top_k and top_p are: handle T = 0 before any filter (the filters cannot remove the argmax anyway).
"""
CAUGHT_BY = [
    "hidden/test_sampling.py::test_greedy_first_argmax",
    "hidden/test_sampling.py::test_sample_next_greedy_first_argmax",
]

_reference_next_token_probs = next_token_probs


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0 and top_k is not None and 1 <= top_k < logits.shape[-1]:
        # top-k on the logits first; among tied tokens this filter keeps the later ones (a fixed choice, so the
        # mistake does the same on every machine; torch.topk's choice among ties is unspecified)
        order = logits.argsort(dim=-1, stable=True)                            # ascending, ties in index order
        logits = logits.scatter(-1, order[:, : logits.shape[-1] - top_k], float("-inf"))
    return _reference_next_token_probs(logits, temperature, top_k, top_p)
