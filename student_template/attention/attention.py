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
    # TODO(softmax): replace this line with your implementation.
    raise NotImplementedError("softmax is not implemented yet")


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
    # TODO(scaled_dot_product_attention): replace this line with your implementation.
    raise NotImplementedError("scaled_dot_product_attention is not implemented yet")


def causal_mask(n: int) -> torch.Tensor:
    """Bool (n, n), True strictly above the diagonal: query i may not see keys j > i."""
    # TODO(causal_mask): replace this line with your implementation.
    raise NotImplementedError("causal_mask is not implemented yet")


def padding_mask(lengths: torch.Tensor, n: int) -> torch.Tensor:
    """Bool (B, n), True at positions ``>= lengths[b]`` (the padding of sequence b).

    lengths: int tensor (B,). Use it as ``mask[:, None, :]`` (B, 1, n) to block
    padded keys for every query.
    """
    # TODO(padding_mask): replace this line with your implementation.
    raise NotImplementedError("padding_mask is not implemented yet")
