"""Assignment `attention`: stable softmax, scaled dot-product attention and masks.

Implement each function below; the docstrings are the contract the grader
checks. Mask convention throughout: a boolean entry ``True`` means *blocked*
(that query may not look at that key), as in ``nn.MultiheadAttention``'s
``attn_mask``; ``F.scaled_dot_product_attention`` uses the opposite.

Do not call PyTorch's softmax or attention in any form (``torch.softmax``,
``torch.nn.functional.softmax``, ``Tensor.softmax``, ``torch.log_softmax``,
``F.log_softmax``, ``Tensor.log_softmax``, ``torch.nn.Softmax``,
``torch.special.softmax``, ``F.scaled_dot_product_attention``): the grader finds
them both by reading your file (a function that names one, directly or through
your other functions, fails its tests even if that line never runs) and while
your code runs. Calling your own functions is fine.

Dtype: tests run in float32 and float64 and compare float64 results with a
float64 reference within 1e-10 (1e-12 for softmax): compute in the input's
dtype (no ``.float()`` casts, no float32 constants).
"""

from __future__ import annotations

import math

import torch


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Numerically stable softmax of ``x`` along ``dim``.

    x: any shape (...); returns the same shape and dtype, each slice along
    ``dim`` non-negative and summing to 1:
        softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m),   m = max_j x_j
    Subtracting the max changes nothing mathematically but keeps scores of
    magnitude 1e4 from overflowing. An entry of ``-inf`` gets weight exactly 0;
    a slice that is entirely ``-inf`` gives all zeros (not NaN): there
    m = -inf and x - m would be -inf - (-inf) = NaN.
    """
    # BEGIN SOLUTION
    m = x.amax(dim=dim, keepdim=True)                        # (..., 1, ...) max of each slice
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # all -inf slice: shift by 0, not -inf
    e = torch.exp(x - m)                                     # (...) in [0, 1], exp(-inf) = 0
    total = e.sum(dim=dim, keepdim=True)                     # (..., 1, ...)
    return e / torch.where(total > 0, total, torch.ones_like(total))  # all-zero slice stays 0
    # END SOLUTION


def scaled_dot_product_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention read: ``softmax(q kᵀ / sqrt(d_k)) v`` with blocked keys removed.

    q: (..., n_q, d_k)   k: (..., n_k, d_k)   v: (..., n_k, d_v); leading dims broadcast.
    mask: None or bool, broadcastable to (..., n_q, n_k); True = blocked
    (blocked scores become -inf BEFORE the softmax, so their weight is exactly 0).
    Returns (output (..., n_q, d_v), weights (..., n_q, n_k)) in q's dtype,
    the softmax taken over the keys (the last dim), using your ``softmax``.
    A query whose keys are all blocked gets zero weights and a zero output row,
    with zero (not NaN) gradients.
    """
    # BEGIN SOLUTION
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)        # (..., n_q, n_k)
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))     # blocked keys get -inf before the softmax
    weights = softmax(scores, dim=-1)                        # (..., n_q, n_k), rows sum to 1 (or 0)
    output = weights @ v                                     # (..., n_q, d_v)
    return output, weights
    # END SOLUTION


def causal_mask(n: int) -> torch.Tensor:
    """Bool (n, n), True strictly above the diagonal: query i may not see keys j > i."""
    # BEGIN SOLUTION
    return torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)  # (n, n)
    # END SOLUTION


def padding_mask(lengths: torch.Tensor, n: int) -> torch.Tensor:
    """Bool (B, n), True at positions ``>= lengths[b]`` (the padding of sequence b).

    lengths: int tensor (B,). Use it as ``mask[:, None, :]`` (B, 1, n) to block
    padded keys for every query.
    """
    # BEGIN SOLUTION
    positions = torch.arange(n, device=lengths.device)       # (n,)
    return positions[None, :] >= lengths[:, None]            # (B, n)
    # END SOLUTION
