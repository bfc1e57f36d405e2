"""Scores divided by sqrt(d_v), the value width, instead of sqrt(d_k).

Your scores were divided by the square root of the value width (v.shape[-1]).
The scale comes from the dot product q·k, a sum of d_k terms: divide by
sqrt(d_k) with d_k = q.shape[-1] (= k.shape[-1]). The two widths differ in
cross-attention and in general.
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_matches_reference",
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_gradients",
    "hidden/test_banned.py::test_sdpa_by_hand",
]


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = softmax(scores, dim=-1)
    return weights @ v, weights
