"""split_heads / merge_heads: the exact head layout of nn.MultiheadAttention."""

import pytest
import torch

from autograder.checks import expect_close, expect_raises, expect_shape

SHAPES = [(1, 1, 4, 1), (2, 5, 8, 2), (3, 7, 12, 3), (2, 4, 16, 8), (2, 6, 16, 16)]  # (B, T, d, h)


def _ids(shapes):
    return [f"B={B},T={T},d={d},h={h}" for B, T, d, h in shapes]


@pytest.mark.grades("split_heads")
@pytest.mark.parametrize("B,T,d,h", SHAPES, ids=_ids(SHAPES))
def test_split_heads_layout(student, gen, B, T, d, h):
    """split_heads: head i holds features [i*d/h, (i+1)*d/h) of every position"""
    x = torch.randn(B, T, d, generator=gen, dtype=torch.float64)
    d_h = d // h
    want = torch.stack([x[:, :, i * d_h:(i + 1) * d_h] for i in range(h)], dim=1)  # (B, h, T, d_h)
    got = student.split_heads(x, h)
    expect_shape(got, (B, h, T, d_h), f"split_heads(x of shape {(B, T, d)}, n_heads={h})")
    # exact: splitting only moves numbers around
    expect_close(
        got, want, f"split_heads(x of shape {(B, T, d)}, n_heads={h})", atol=0.0,
        hint="Head i must hold features [i*d/h, (i+1)*d/h) of each position: reshape to (B, T, h, d_h), then "
        "transpose(1, 2). A direct view(B, h, T, d_h) mixes different positions into one head.",
    )


@pytest.mark.grades("merge_heads")
@pytest.mark.parametrize("B,T,d,h", SHAPES, ids=_ids(SHAPES))
def test_merge_heads_inverse(student, reference, gen, B, T, d, h):
    """merge_heads: concatenates the heads back, the exact inverse of split_heads"""
    d_h = d // h
    heads = torch.randn(B, h, T, d_h, generator=gen, dtype=torch.float64)
    want = torch.cat([heads[:, i] for i in range(h)], dim=-1)  # (B, T, h*d_h): head 0's features first
    got = student.merge_heads(heads)
    expect_shape(got, (B, T, d), f"merge_heads(x of shape {(B, h, T, d_h)})")
    expect_close(
        got, want, f"merge_heads(x of shape {(B, h, T, d_h)})", atol=0.0,
        hint="Position t of the result must be head 0's d_h features, then head 1's, ... (concatenation): "
        "transpose(1, 2) back to (B, T, h, d_h) before reshaping to (B, T, h*d_h).",
    )
    x = torch.randn(B, T, d, generator=gen, dtype=torch.float64)
    back = student.merge_heads(reference.split_heads(x, h))  # the contract's split: only merge_heads is graded here
    expect_close(
        back, x, f"merge_heads(split_heads(x, {h})) for x of shape {(B, T, d)} (split by the reference)", atol=0.0,
        hint="merge_heads must undo split_heads exactly; if you transpose in one, transpose back in the other.",
    )


@pytest.mark.grades("split_heads")
def test_split_heads_value_error(student, gen):
    """split_heads: ValueError when d is not divisible by n_heads (and none when it is)"""
    x = torch.randn(2, 3, 10, generator=gen)
    expect_raises(lambda: student.split_heads(x, 4), (ValueError,), "split_heads(x of shape (2, 3, 10), n_heads=4)")
    x = torch.randn(1, 2, 6, generator=gen)
    expect_raises(lambda: student.split_heads(x, 4), (ValueError,), "split_heads(x of shape (1, 2, 6), n_heads=4)")
    # a valid call next to it returns the right heads: ValueError on every call, or any answer to the valid one,
    # would otherwise pass (what pays is the grader's observation of both calls, never the raise alone)
    x = torch.randn(1, 2, 8, generator=gen, dtype=torch.float64)
    want = torch.stack([x[:, :, 2 * i : 2 * i + 2] for i in range(4)], dim=1)  # (1, 4, 2, 2)
    expect_close(
        student.split_heads(x, 4), want, "split_heads(x of shape (1, 2, 8), n_heads=4), a valid call beside those",
        atol=0.0, hint="Validate first, then split as for any valid input: head i holds features [i*d/h, (i+1)*d/h).",
    )
