"""Returns the attention weights computed before masking.

Your output uses the masked weights, but the weights you return are those of
the unmasked scores, so blocked keys appear to get attention. Return the
weights that actually produced the output: the softmax of the masked scores.
"""
CAUGHT_BY = [
    "hidden/test_sdpa.py::test_broadcast_masks",
    "hidden/test_sdpa.py::test_blocked_weights_zero",
    "hidden/test_sdpa.py::test_fully_blocked_rows",
    "hidden/test_masks.py::test_padding_and_causal",
]


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    weights = softmax(scores, dim=-1)
    if mask is not None:
        masked = softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        return masked @ v, weights
    return weights @ v, weights
