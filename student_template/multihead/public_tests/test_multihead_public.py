"""Public checks for multihead.py: run `pytest` in this folder.

A fast subset of the grader's tests, comparing with the formulas and with
PyTorch's nn.MultiheadAttention. Passing them does not guarantee full marks:
the grader also tries masks of every shape, float32, gradients and more.
"""

import math

import pytest
import torch
from torch import nn

from autograder.checks import expect_close, expect_shape, expect_true


@pytest.mark.grades("split_heads")
def test_split_heads(student, gen):
    """split_heads: head layout on a (2, 3, 8) input with 2 heads"""
    x = torch.randn(2, 3, 8, generator=gen, dtype=torch.float64)
    heads = student.split_heads(x, 2)
    expect_shape(heads, (2, 2, 3, 4), "split_heads(x of shape (2, 3, 8), n_heads=2)")
    expect_close(heads[:, 0], x[:, :, :4], "split_heads(x, 2)[:, 0] (head 0 = features 0..3 of every position)",
                 atol=0.0, hint="Reshape to (B, T, h, d_h), then transpose(1, 2).")
    expect_close(heads[:, 1], x[:, :, 4:], "split_heads(x, 2)[:, 1] (head 1 = features 4..7 of every position)",
                 atol=0.0, hint="Reshape to (B, T, h, d_h), then transpose(1, 2).")


@pytest.mark.grades("merge_heads")
def test_merge_heads(student, gen):
    """merge_heads: concatenates 2 heads of shape (2, 3, 4) back into (2, 3, 8)"""
    heads = torch.randn(2, 2, 3, 4, generator=gen, dtype=torch.float64)
    want = torch.cat([heads[:, 0], heads[:, 1]], dim=-1)  # (2, 3, 8): head 0's features, then head 1's
    expect_close(student.merge_heads(heads), want, "merge_heads(x of shape (2, 2, 3, 4))", atol=0.0,
                 hint="Transpose back to (B, T, h, d_h), then reshape to (B, T, h*d_h): the heads are concatenated.")


@pytest.mark.grades("sinusoidal_positions")
def test_sinusoidal_positions_small(student):
    """sinusoidal_positions: the formula on 50 positions, d_model=16, float32"""
    pe = student.sinusoidal_positions(50, 16)
    expect_shape(pe, (50, 16), "sinusoidal_positions(50, 16)")
    expect_true(pe.dtype == torch.float32, f"sinusoidal_positions(50, 16): expected float32, got {pe.dtype}")
    want = torch.empty(50, 16, dtype=torch.float64)
    for pos in range(50):
        for i in range(8):
            angle = pos / 10000 ** (2 * i / 16)
            want[pos, 2 * i], want[pos, 2 * i + 1] = math.sin(angle), math.cos(angle)
    # 1e-4: float32 rounding of the angles
    expect_close(pe, want, "sinusoidal_positions(50, 16)", atol=1e-4,
                 hint="PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(the same angle). "
                 "Row 0 must be [0, 1, 0, 1, ...].")


@pytest.mark.grades("MultiHeadAttention")
def test_parameter_count_table(student):
    """MultiHeadAttention: the course's table, 16,640 parameters at d_model=64 for 1, 2, 4, 8 heads"""
    for h in (1, 2, 4, 8):
        m = student.MultiHeadAttention(64, h)
        count = sum(int(v.numel()) for v in m.state_dict().values())
        expect_true(count == 4 * 64 * 64 + 4 * 64,
                    f"MultiHeadAttention(64, {h}) has {count} parameters, expected 4*64*64 + 4*64 = 16,640: "
                    "in_proj_weight (192, 64), in_proj_bias (192,), out_proj.weight (64, 64), out_proj.bias (64,).")


@pytest.mark.grades("MultiHeadAttention")
def test_matches_torch_small(student, gen):
    """MultiHeadAttention: equals nn.MultiheadAttention on the course's example (d_model=8, 2 heads, float64)"""
    d, h = 8, 2
    mha = nn.MultiheadAttention(d, h, batch_first=True).double()
    with torch.no_grad():
        for p in mha.parameters():  # random biases too (torch starts them at 0)
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64) * 0.5)
    sd = {k: v.detach().clone() for k, v in mha.state_dict().items()}
    x = torch.randn(1, 5, d, generator=gen, dtype=torch.float64)
    mask = torch.ones(5, 5, dtype=torch.bool).triu(diagonal=1)  # causal: True = blocked
    with torch.no_grad():
        want_out, want_w = mha(x, x, x, attn_mask=mask, need_weights=True, average_attn_weights=False)
    m = student.MultiHeadAttention(d, h)
    m.double()
    m.load_state_dict(sd, strict=True)
    out, w = m(x, x, x, mask=mask)
    expect_shape(w, (1, h, 5, 5), "MultiHeadAttention(8, 2) weights (B, h, n_q, n_k)")
    # 1e-10: the same float64 formula on both sides
    expect_close(out, want_out, "MultiHeadAttention(8, 2) output on x (1, 5, 8) with a causal mask", atol=1e-10,
                 hint="Project with in_proj_weight (W_Q, W_K, W_V stacked), split heads, softmax(QKᵀ/sqrt(d_h)) "
                 "with blocked scores at -inf, weights @ V, merge (concatenate) heads, out_proj.")
    expect_close(w, want_w, "MultiHeadAttention(8, 2) per-head weights with a causal mask", atol=1e-10)
