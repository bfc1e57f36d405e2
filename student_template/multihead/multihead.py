"""Assignment `multihead`: multi-head attention and sinusoidal positions.

Implement each function below; the docstrings are the contract the grader
checks. Mask convention: a boolean entry ``True`` means *blocked* (that query
may not look at that key), as in ``nn.MultiheadAttention``'s ``attn_mask``;
``F.scaled_dot_product_attention`` uses the opposite.

Your ``MultiHeadAttention`` must compute attention itself: do not use PyTorch's
``nn.MultiheadAttention`` (not even as a parent class),
``F.multi_head_attention_forward`` or ``F.scaled_dot_product_attention``; the
grader detects them when your code runs. A softmax (PyTorch's or your own) is
fine, but read the note on fully blocked rows in ``MultiHeadAttention.forward``.

Shapes: B = batch, T = sequence length, d = d_model, h = n_heads,
d_h = d / h (the width of one head), n_q / n_k = number of queries / keys.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """Cut the feature axis into ``n_heads`` heads: (B, T, d) -> (B, h, T, d/h).

    Head i holds features ``[i*d/h, (i+1)*d/h)`` of every position (the layout
    ``nn.MultiheadAttention`` uses). Raise ``ValueError`` if d is not divisible
    by ``n_heads``. Hint: a plain ``view(B, h, T, d_h)`` mixes positions into
    heads; reshape to (B, T, h, d_h) first, then swap the T and h axes.
    """
    # TODO(split_heads): replace this line with your implementation.
    raise NotImplementedError("split_heads is not implemented yet")


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Concatenate the heads back: (B, h, T, d_h) -> (B, T, h*d_h).

    The exact inverse of ``split_heads``: ``merge_heads(split_heads(x, h))``
    equals ``x``. Position t of the result is head 0's features, then head 1's,
    and so on (concatenation, not an average).
    """
    # TODO(merge_heads): replace this line with your implementation.
    raise NotImplementedError("merge_heads is not implemented yet")


def sinusoidal_positions(n_positions: int, d_model: int) -> torch.Tensor:
    """The original Transformer's position table, float32 (n_positions, d_model).

    ``PE[pos, 2i] = sin(pos / 10000^(2i/d_model))`` and
    ``PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))``: each pair of columns is
    one frequency, from one turn per 2π positions (i = 0) down to one turn per
    about 2π·10000 positions. Raise ``ValueError`` for an odd ``d_model``.
    """
    # TODO(sinusoidal_positions): replace this line with your implementation.
    raise NotImplementedError("sinusoidal_positions is not implemented yet")


class MultiHeadAttention(nn.Module):
    """Multi-head attention with ``nn.MultiheadAttention``'s parameters.

    ``__init__(d_model, n_heads, bias=True)``: raise ``ValueError`` if d_model
    is not divisible by n_heads. Create exactly these parameters (the names and
    shapes ``nn.MultiheadAttention(d_model, n_heads, bias=bias)`` uses, so
    ``load_state_dict(torch_mha.state_dict())`` works with ``strict=True``):

    * ``in_proj_weight`` (3d, d): rows ``[0, d)`` are W_Q, ``[d, 2d)`` W_K, ``[2d, 3d)`` W_V;
    * ``in_proj_bias`` (3d,), only when ``bias=True`` (``None`` otherwise), same row split;
    * ``out_proj``: an ``nn.Linear(d, d, bias=bias)`` submodule (W_O and its bias).

    Start ``__init__`` with ``super().__init__()``. Initialise the parameters
    as you like (e.g. Xavier-uniform weights, zero biases): the grader loads
    its own weights.
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = True) -> None:
        # TODO(MultiHeadAttention.__init__): replace this line with your implementation.
        raise NotImplementedError("MultiHeadAttention.__init__ is not implemented yet")

    def forward(self, query, key, value, mask=None):
        """Attend from ``query`` to ``key``/``value`` with h heads.

        query: (B, n_q, d); key, value: (B, n_k, d) (n_q may differ from n_k).
        mask: None or bool, True = blocked, of shape (n_q, n_k),
        (B or 1, h or 1, n_q, n_k) or (B or 1, 1, 1, n_k).
        Returns ``(out, weights)``: out (B, n_q, d) and the attention weights of
        every head, (B, h, n_q, n_k) (not averaged over heads).

        Steps: project (Q = query W_Qᵀ + b_Q, likewise K and V), split into heads,
        ``softmax(Q Kᵀ / sqrt(d_h))`` per head with blocked scores set to -inf,
        weights @ V, merge (concatenate) the heads, project with ``out_proj``.
        A query whose keys are all blocked gets zero weights (not NaN), so its
        output row is ``out_proj.bias`` (zero without bias). ``torch.softmax``
        of an all ``-inf`` row is NaN: handle that case.
        """
        # TODO(MultiHeadAttention.forward): replace this line with your implementation.
        raise NotImplementedError("MultiHeadAttention.forward is not implemented yet")
