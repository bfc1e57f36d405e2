"""The Annotated Transformer's attention(): matmul with key.transpose(-2, -1), / math.sqrt(d_k), masked_fill, then the weights' matmul with value

Source: harvardnlp/annotated-transformer, the_annotated_transformer.py, function ``attention``
(MIT licence). Written after its formulation, not copied: the search tools' terms keep public
code out of this repository's commits, so each step below follows the source's order and
operations, in the kit's names.
Changes for the contract, all conventions: the source's mask keeps where it is 1 (``mask == 0``
is blocked), here True is blocked; the source fills -1e9, here -inf (with the contract's zero row
for a fully blocked query, which the source's -1e9 would give uniform weights); ``scores.softmax``
is replaced by this file's own softmax (the assignment bans PyTorch's); dropout is dropped. The
functions the source does not have (softmax, the masks) come from the reference.
"""
BUG = ("/ math.sqrt(d_k)", "")  # the classic: no scaling
BUG_NAMES = ["no_scaling"]


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = q.size(-1)
    scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d_k)  # noqa: F821
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    p_attn = softmax(scores, dim=-1)  # noqa: F821
    return torch.matmul(p_attn, v), p_attn  # noqa: F821
