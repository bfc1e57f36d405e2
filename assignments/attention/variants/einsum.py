"""einsum formulation: scores and the weighted sum written with torch.einsum.

Correct: einsum with '...' broadcasts the leading dimensions exactly like @.
"""


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", q, k) * (q.shape[-1] ** -0.5)  # (..., n_q, n_k)
    if mask is not None:
        scores = torch.where(mask, torch.full_like(scores, float("-inf")), scores)
    weights = softmax(scores, dim=-1)                                           # (..., n_q, n_k)
    output = torch.einsum("...qk,...kv->...qv", weights, v)                     # (..., n_q, d_v)
    return output, weights
