"""Another CS336 student's attention: einops.rearrange of k, matmul, division by torch.sqrt of d_k as a tensor, in-place masked_fill_

Source: bitkira/Stanford-CS336, assignment1-basics-main/cs336_basics/ScaledDotProductAttention.py,
function ``scaled_dot_product_attention`` (no licence file in the stored snapshot). Written after
its formulation, not copied (the search tools' terms keep public code out of this repository's
commits): k rearranged "... seq_len d_k -> ... d_k seq_len", q @ k, divided by
torch.sqrt(torch.tensor(d_k, dtype=q.dtype)), masked_fill_ with -inf, softmax, @ v.
Changes for the contract, all conventions: the source blocks where ``~mask`` (CS336: True = may
look), here True is blocked; the source returns only the output, here (output, weights); its
softmax comes from its own module, here the reference's (the assignment's own softmax), which
gives zeros for a fully blocked row as the contract asks. The masks come from the reference.
"""

from einops import rearrange

BUG = ("torch.sqrt(torch.tensor(q.shape[-1], dtype=q.dtype))", "q.shape[-1]")  # scaled by d_k, not sqrt(d_k)
BUG_NAMES = ["scale_by_dk"]


def scaled_dot_product_attention(q, k, v, mask=None):
    k = rearrange(k, "... seq_len d_k -> ... d_k seq_len")
    out = torch.matmul(q, k) / torch.sqrt(torch.tensor(q.shape[-1], dtype=q.dtype))  # noqa: F821
    if mask is not None:
        out.masked_fill_(mask, float("-inf"))
    weights = softmax(out, dim=-1)  # noqa: F821
    return torch.matmul(weights, v), weights  # noqa: F821
