"""A CS336 (Stanford, assignment 1) student's softmax and attention: max-shifted exp, einops.einsum for the scores and the output

Source: philippmwirth/cs336-assignment1-basics, cs336_basics/transformer/utils.py, functions
``softmax`` and ``scaled_dot_product_attention`` (no licence file in the stored snapshot).
Written after its formulation, not copied (the search tools' terms keep public code out of
this repository's commits): softmax as (x - max).exp() over its sum; scores with
einops.einsum("... seq1 d, ... seq2 d -> ... seq1 seq2") / sqrt(d_k); output with einsum.
Changes for the contract, all conventions: CS336's mask is True where a query MAY look (the
source writes ``qk[..., ~mask] = -inf``), here True is blocked; the source returns only the
output, here (output, weights); mask defaults to None; a slice that is all -inf gives zeros
(CS336 never has one; the source would give NaN), guarded as the contract asks.
"""

import einops

BUG = ("(x - m).exp()", "x.exp()")  # the classic: no max subtraction
BUG_NAMES = ["softmax_no_max"]


def softmax(x, dim=-1):
    m = x.max(dim=dim, keepdim=True).values
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # noqa: F821 - all -inf slice (contract)
    y = (x - m).exp()
    total = y.sum(dim=dim, keepdim=True)
    return y / torch.where(total > 0, total, torch.ones_like(total))  # noqa: F821


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = k.shape[-1]
    qk_scaled = einops.einsum(q, k, "... seq1 d, ... seq2 d -> ... seq1 seq2") / math.sqrt(d_k)  # noqa: F821
    if mask is not None:
        qk_scaled = qk_scaled.masked_fill(mask, -math.inf)  # noqa: F821
    weights = softmax(qk_scaled, dim=-1)
    return einops.einsum(weights, v, "... seq1 seq2, ... seq2 d -> ... seq1 d"), weights
