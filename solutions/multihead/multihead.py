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
    # BEGIN SOLUTION
    B, T, d = x.shape
    if d % n_heads != 0:
        raise ValueError(f"d_model = {d} is not divisible by n_heads = {n_heads}")
    d_h = d // n_heads
    return x.reshape(B, T, n_heads, d_h).transpose(1, 2)     # (B, T, h, d_h) -> (B, h, T, d_h)
    # END SOLUTION


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """Concatenate the heads back: (B, h, T, d_h) -> (B, T, h*d_h).

    The exact inverse of ``split_heads``: ``merge_heads(split_heads(x, h))``
    equals ``x``. Position t of the result is head 0's features, then head 1's,
    and so on (concatenation, not an average).
    """
    # BEGIN SOLUTION
    B, h, T, d_h = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d_h)          # (B, T, h, d_h) -> (B, T, d)
    # END SOLUTION


def sinusoidal_positions(n_positions: int, d_model: int) -> torch.Tensor:
    """The original Transformer's position table, float32 (n_positions, d_model).

    ``PE[pos, 2i] = sin(pos / 10000^(2i/d_model))`` and
    ``PE[pos, 2i+1] = cos(pos / 10000^(2i/d_model))``: each pair of columns is
    one frequency, from one turn per 2π positions (i = 0) down to one turn per
    about 2π·10000 positions. Raise ``ValueError`` for an odd ``d_model``.
    """
    # BEGIN SOLUTION
    if d_model % 2 != 0:
        raise ValueError(f"d_model must be even to pair sines with cosines, got {d_model}")
    pos = torch.arange(n_positions, dtype=torch.float64)[:, None]      # (n, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)[None, :]  # (1, d/2): the values 2i
    angles = pos / 10000.0 ** (two_i / d_model)                        # (n, d/2)
    pe = torch.empty(n_positions, d_model, dtype=torch.float64)        # (n, d)
    pe[:, 0::2] = torch.sin(angles)                                    # even columns: sine
    pe[:, 1::2] = torch.cos(angles)                                    # odd columns: cosine
    return pe.to(torch.float32)                                        # (n, d) float32
    # END SOLUTION


# BEGIN HIDDEN
def _softmax_last(scores: torch.Tensor) -> torch.Tensor:
    """Stable softmax over the last axis; a row that is all -inf gives zeros, not NaN."""
    m = scores.amax(dim=-1, keepdim=True)                               # (..., 1)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))          # all-blocked row: shift by 0
    e = torch.exp(scores - m)                                           # (..., n_k), exp(-inf) = 0
    total = e.sum(dim=-1, keepdim=True)                                 # (..., 1)
    return e / torch.where(total > 0, total, torch.ones_like(total))    # (..., n_k), zero row stays 0


# END HIDDEN
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
        # BEGIN SOLUTION
        super().__init__()
        if d_model % n_heads != 0:
            raise ValueError(f"d_model = {d_model} is not divisible by n_heads = {n_heads}")
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_head = d_model // n_heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * d_model, d_model))  # (3d, d) = [W_Q; W_K; W_V]
        nn.init.xavier_uniform_(self.in_proj_weight)
        if bias:
            self.in_proj_bias = nn.Parameter(torch.zeros(3 * d_model))          # (3d,)
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)                  # W_O: (d, d)
        if bias:
            nn.init.zeros_(self.out_proj.bias)
        # END SOLUTION

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
        # BEGIN SOLUTION
        w_q, w_k, w_v = self.in_proj_weight.chunk(3, dim=0)                # each (d, d)
        if self.in_proj_bias is not None:
            b_q, b_k, b_v = self.in_proj_bias.chunk(3, dim=0)              # each (d,)
        else:
            b_q = b_k = b_v = None
        q = split_heads(F.linear(query, w_q, b_q), self.n_heads)           # (B, h, n_q, d_h)
        k = split_heads(F.linear(key, w_k, b_k), self.n_heads)             # (B, h, n_k, d_h)
        v = split_heads(F.linear(value, w_v, b_v), self.n_heads)           # (B, h, n_k, d_h)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)          # (B, h, n_q, n_k)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))               # (B, h, n_q, n_k), blocked = -inf
        weights = _softmax_last(scores)                                    # (B, h, n_q, n_k), rows sum to 1 or 0
        heads = weights @ v                                                # (B, h, n_q, d_h)
        out = self.out_proj(merge_heads(heads))                            # (B, n_q, d): concat, then W_O
        return out, weights
        # END SOLUTION
