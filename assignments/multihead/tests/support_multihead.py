"""Grader-side helpers for the multihead hidden tests (never shipped to students).

The reference for every MultiHeadAttention check is PyTorch's own
``nn.MultiheadAttention`` run in float64 on the grader side, with random
weights *and random biases* (torch initialises biases to zero, which would
hide a forgotten bias).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from autograder.checks import expect_close
from autograder.worker import ops

# The mask shapes the contract allows, as functions of (B, h, n_q, n_k).
MASK_SHAPES = {
    "(n_q,n_k)": lambda B, h, nq, nk: (nq, nk),
    "(B,h,n_q,n_k)": lambda B, h, nq, nk: (B, h, nq, nk),
    "(1,h,n_q,n_k)": lambda B, h, nq, nk: (1, h, nq, nk),
    "(B,1,n_q,n_k)": lambda B, h, nq, nk: (B, 1, nq, nk),
    "(B,1,1,n_k)": lambda B, h, nq, nk: (B, 1, 1, nk),
    "(1,1,1,n_k)": lambda B, h, nq, nk: (1, 1, 1, nk),
}


def random_torch_mha(d: int, h: int, bias: bool, gen: torch.Generator, scale: float = 1.0) -> nn.MultiheadAttention:
    """A float64 ``nn.MultiheadAttention(d, h, bias=bias, batch_first=True)`` with random weights and biases.

    Weights ~ N(0, scale²/d), so projected features have unit variance
    (times ``scale``); biases ~ N(0, 0.25·scale²). Every value is rounded to
    float32 first, so loading before or after ``.double()`` gives the same module.
    """
    mha = nn.MultiheadAttention(d, h, bias=bias, batch_first=True).double()
    with torch.no_grad():
        for _name, p in mha.named_parameters():
            if p.dim() == 2:
                value = torch.randn(p.shape, generator=gen, dtype=torch.float64) * scale / math.sqrt(d)
            else:
                value = torch.randn(p.shape, generator=gen, dtype=torch.float64) * 0.5 * scale
            p.copy_(value.float().double())
    return mha


def state_dict_of(mha: nn.Module, dtype: torch.dtype = torch.float64) -> dict:
    """Plain {name: tensor} copy of a module's state, to send to the student."""
    return {k: v.detach().clone().to(dtype) for k, v in mha.state_dict().items()}


def torch_attn_mask(mask: torch.Tensor | None, B: int, h: int, n_q: int, n_k: int) -> torch.Tensor | None:
    """The contract's mask as torch's ``attn_mask``: 2-D as is, 4-D expanded to (B·h, n_q, n_k)."""
    if mask is None or mask.dim() == 2:
        return mask
    return mask.expand(B, h, n_q, n_k).reshape(B * h, n_q, n_k)


def torch_forward(mha: nn.MultiheadAttention, q, k, v, mask=None):
    """``(out (B, n_q, d), weights (B, h, n_q, n_k))`` from torch, with the contract's mask."""
    B, n_q, _ = q.shape
    n_k = k.shape[1]
    with torch.no_grad():
        out, w = mha(
            q, k, v,
            attn_mask=torch_attn_mask(mask, B, mha.num_heads, n_q, n_k),
            need_weights=True,
            average_attn_weights=False,
        )
    return out, w


class TorchMHA(nn.MultiheadAttention):
    """torch's module with the contract's ``forward(query, key, value, mask=None)``; same parameter names."""

    def forward(self, query, key, value, mask=None):
        B, n_q, _ = query.shape
        n_k = key.shape[1]
        return super().forward(
            query, key, value,
            attn_mask=torch_attn_mask(mask, B, self.num_heads, n_q, n_k),
            need_weights=True,
            average_attn_weights=False,
        )


def torch_gradients(sd: dict, d: int, h: int, bias: bool, args: tuple, mask, grad_outputs) -> dict:
    """Gradients through torch's attention with ``ops.gradients`` (the recipe the worker uses)."""
    ref = TorchMHA(d, h, bias=bias, batch_first=True).double()
    ref.load_state_dict(sd, strict=True)
    return ops.gradients(ref, args, {"mask": mask}, wrt=(0, 1, 2), grad_outputs=grad_outputs, params=True)


def random_mask(shape: tuple, gen: torch.Generator, p_blocked: float = 0.4) -> torch.Tensor:
    """Random bool mask (True = blocked) with at least one open key in every row.

    Every row of the broadcast (B, h, n_q, n_k) mask is a row of this one, so
    no query is ever fully blocked (torch would give NaN there).
    """
    mask = torch.rand(shape, generator=gen) < p_blocked
    rows = mask.reshape(-1, shape[-1])
    keep = torch.randint(shape[-1], (rows.shape[0],), generator=gen)
    rows[torch.arange(rows.shape[0]), keep] = False
    return rows.reshape(shape)


def student_mha(student, d: int, h: int, bias: bool, sd: dict, double: bool = True):
    """The student's module with ``sd`` loaded (strict), in float64 unless ``double=False``."""
    m = student.MultiHeadAttention(d, h, bias=bias)
    if double:
        m.double()
    m.load_state_dict(sd, strict=True)
    return m


def case(B: int, h: int, d: int, n_q: int, n_k: int) -> str:
    return f"B={B}, h={h}, d_model={d}, n_q={n_q}, n_k={n_k}"


def max_score(mha: nn.MultiheadAttention, q: torch.Tensor, k: torch.Tensor) -> float:
    """Largest |Q Kᵀ / sqrt(d_h)| over all heads (float64): the scale float32 errors grow with."""
    d, h = mha.embed_dim, mha.num_heads
    w_q, w_k, _ = mha.in_proj_weight.detach().double().chunk(3, dim=0)
    b_q = b_k = None
    if mha.in_proj_bias is not None:
        b_q, b_k, _ = mha.in_proj_bias.detach().double().chunk(3, dim=0)
    Q = torch.nn.functional.linear(q.double(), w_q, b_q).unflatten(-1, (h, d // h)).transpose(1, 2)
    K = torch.nn.functional.linear(k.double(), w_k, b_k).unflatten(-1, (h, d // h)).transpose(1, 2)
    return float((Q @ K.transpose(-2, -1)).abs().max()) / math.sqrt(d // h)


def formula(n: int, d: int) -> torch.Tensor:
    """PE[pos, 2i] = sin(pos / 10000^(2i/d)), PE[pos, 2i+1] = cos(same), in float64."""
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    two_i = torch.arange(0, d, 2, dtype=torch.float64)[None, :]
    angles = pos / 10000.0 ** (two_i / d)
    pe = torch.empty(n, d, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = angles.sin(), angles.cos()
    return pe


def expect_table(pe: torch.Tensor, n: int, d: int) -> None:
    """A property test of the table (rows apart, order seen) pays only when the same call's values are the
    formula's (1e-4, as test_matches_formula; its dtype is that test's to check): a random table has the property."""
    expect_close(pe, formula(n, d), f"sinusoidal_positions({n}, {d})", atol=1e-4,
                 hint="(This test checks a property, and pays only when the values of the same call are right too.)")
