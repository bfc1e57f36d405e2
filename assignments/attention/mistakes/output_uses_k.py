"""Output computed from the keys: weights @ k instead of weights @ v.

Your output mixes the keys, not the values. Keys are what a query is matched
against; values are what is read out: output = weights @ v, of shape
(..., n_q, d_v).
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_matches_reference",
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_properties",
    "public/test_attention_public.py::test_worked_example",
    "public/test_attention_public.py::test_shapes",
]


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = softmax(scores, dim=-1)
    return weights @ k, weights
