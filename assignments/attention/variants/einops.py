"""einops formulation: scores and the weighted sum written with einops.einsum (a submission may import einops)

The contract allows the standard library, torch, numpy and einops; this proves einops imports in grading.
"""

import einops


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = einops.einsum(q, k, "... q d, ... k d -> ... q k") / math.sqrt(q.shape[-1])  # noqa: F821
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = softmax(scores, dim=-1)  # noqa: F821
    return einops.einsum(weights, v, "... q k, ... k d -> ... q d"), weights
