"""Karpathy's "Let's build GPT" lecture's Head: wei = q @ k.transpose(-2, -1) * size ** -0.5, masked_fill where the tril buffer == 0, softmax, wei @ v

Source: karpathy/ng-video-lecture, gpt.py, class ``Head`` (``forward`` and its ``tril``
buffer, ``torch.tril(torch.ones(block_size, block_size))``) (MIT licence). Written after its
formulation, not copied (the search tools' terms keep public code out of this repository's
commits): the affinities are ``q @ k.transpose(-2, -1)`` times a power -0.5, the future is
filled with -inf where the lower-triangular matrix of ones is 0, the softmax runs over the
last axis and the output is ``wei @ v``.
Changes for the contract: the head's linear projections are outside the function (q, k and v
are given); the scale is ``k.shape[-1] ** -0.5``, the head size (the stored gpt.py multiplies
by ``C ** -0.5``, C being the embedding width of x, which the function does not see and which
equals the head size only with one head; later revisions of the lecture's code use the head
size); the mask is the caller's (True = blocked) instead of the tril buffer, and causal_mask
returns the source's blocked set ``tril(ones(n, n)) == 0`` as the contract's bool mask;
F.softmax is the reference's softmax (the assignment bans PyTorch's; it gives zeros for a
fully blocked row); dropout is dropped; the weights are returned with the output.
padding_mask and softmax come from the reference.
"""
BUG = ("torch.tril(torch.ones(n, n)) == 0", "torch.tril(torch.ones(n, n)).bool()")  # the tril buffer itself: True = may look
BUG_NAMES = ["causal_returns_keep_mask"]


def scaled_dot_product_attention(q, k, v, mask=None):
    wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5  # (..., T, T) affinities
    if mask is not None:
        wei = wei.masked_fill(mask, float("-inf"))
    wei = softmax(wei, dim=-1)  # noqa: F821
    out = wei @ v
    return out, wei


def causal_mask(n):
    return torch.tril(torch.ones(n, n)) == 0  # noqa: F821
