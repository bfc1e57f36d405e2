"""k.T on a batch: reverses every dimension instead of transposing the last two.

Your attention is right for 2-D inputs but not for batches: on a tensor with
more than two dimensions, k.T reverses ALL dimensions ((B, n_k, d_k) becomes
(d_k, n_k, B)). Transpose only the last two: k.transpose(-2, -1) (or k.mT).
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_matches_reference",
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_gradients",
    "hidden/test_masks.py::test_future_independence",
    "public/test_attention_public.py::test_shapes",
]


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.T / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = softmax(scores, dim=-1)
    return weights @ v, weights
