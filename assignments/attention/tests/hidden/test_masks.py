"""Hidden tests of causal_mask and padding_mask, alone and driving attention."""

import pytest
import torch
from support_attention import randn

from autograder.checks import expect_close, expect_dtype, expect_shape, expect_true


@pytest.mark.grades("causal_mask")
@pytest.mark.parametrize("n", [2, 4, 9])  # not 1: an empty mask would pass there
def test_causal_mask(student, n):
    """causal_mask: True strictly above the diagonal, dtype bool"""
    got = student.causal_mask(n)
    what = f"causal_mask({n})"
    expect_shape(got, (n, n), what)
    expect_dtype(got, torch.bool, what + " (a boolean mask)")
    want = torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
    expect_close(
        got, want, what,
        hint="Entry [i, j] is True (blocked) exactly when key j comes after query i (j > i): the strict upper "
        "triangle, torch.triu(..., diagonal=1). A query always sees itself, so the diagonal is False.",
    )


@pytest.mark.grades("padding_mask")
@pytest.mark.parametrize("case", ["mixed lengths", "empty and full"])
def test_padding_mask(student, gen, case):
    """padding_mask: True at positions >= length, dtype bool"""
    n = 7
    if case == "mixed lengths":
        lengths = torch.randint(1, n + 1, (5,), generator=gen)
    else:
        lengths = torch.tensor([0, n, 3])
    got = student.padding_mask(lengths, n)
    what = f"padding_mask(lengths={lengths.tolist()}, n={n})"
    expect_shape(got, (len(lengths), n), what)
    expect_dtype(got, torch.bool, what + " (a boolean mask)")
    want = torch.arange(n)[None, :] >= lengths[:, None]
    expect_close(
        got, want, what,
        hint="Sequence b has lengths[b] real tokens at positions 0 .. lengths[b]-1; positions >= lengths[b] are "
        "padding (True = blocked). Compare torch.arange(n) with lengths[:, None].",
    )


@pytest.mark.grades("causal_mask")
@pytest.mark.parametrize("t", [1, 3, 5])
def test_future_independence(student, reference, gen, t):
    """causal_mask: with it, changing tokens at positions >= t leaves outputs before t unchanged"""
    # The student's mask through the reference's attention: a mistake in scaled_dot_product_attention costs
    # its own tests, not causal_mask's points.
    T, d = 7, 4
    x = randn(gen, (2, T, d))
    x2 = x.clone()
    x2[:, t:] = randn(gen, (2, T - t, d))  # a different future
    mask = torch.as_tensor(student.causal_mask(T))
    expect_shape(mask, (T, T), f"causal_mask({T})")
    expect_dtype(mask, torch.bool, f"causal_mask({T}) (a boolean mask)")
    before = reference.scaled_dot_product_attention(x, x, x, mask)[0]
    after = reference.scaled_dot_product_attention(x2, x2, x2, mask)[0]
    # the outputs before t use exactly the same numbers both times; 1e-12 allows any summation order
    expect_close(
        after[:, :t], before[:, :t],
        f"self-attention outputs at positions 0..{t - 1} (x of shape (2, {T}, {d}), float64, "
        f"mask=causal_mask({T})) after changing positions {t}..{T - 1}",
        atol=1e-12,
        hint="They must not change: position i may only read keys j <= i. The mask blocks the wrong triangle, "
        "or marks the keys to keep rather than the blocked ones (True = blocked).",
    )
    # pays only when the same call's mask is right too: one that blocks more (every key, or the diagonal) is
    # also blind to the future
    expect_close(mask, torch.ones(T, T, dtype=torch.bool).triu(diagonal=1), f"causal_mask({T})",
                 hint="(This test checks a property, and pays only when the values of the same call are right too.)")


@pytest.mark.grades("padding_mask")
def test_padding_and_causal(student, reference, gen):
    """padding_mask: combined with the causal mask by broadcasting, blocks exactly the future and padding keys"""
    # Only the student's padding_mask: the causal mask and the attention are the reference's, so a mistake in
    # causal_mask or scaled_dot_product_attention costs their own tests, not padding_mask's points.
    B, T, d = 3, 6, 5
    lengths = torch.tensor([T, 4, 2])
    x = randn(gen, (B, T, d))
    pad = torch.as_tensor(student.padding_mask(lengths, T))
    expect_shape(pad, (B, T), f"padding_mask({lengths.tolist()}, {T})")
    expect_dtype(pad, torch.bool, f"padding_mask({lengths.tolist()}, {T}) (a boolean mask)")
    causal = reference.causal_mask(T)
    mask = causal[None, :, :] | pad[:, None, :]  # (B, T, T)
    want_mask = causal[None, :, :] | reference.padding_mask(lengths, T)[:, None, :]
    where = f"causal_mask({T})[None] | padding_mask({lengths.tolist()}, {T})[:, None] (shape ({B}, {T}, {T}))"
    expect_close(
        mask, want_mask, where,
        hint="Query i of sequence b may see key j only when j <= i and j < lengths[b].",
    )
    _, w = reference.scaled_dot_product_attention(x, x, x, mask)
    pad_weight = w.masked_fill(~want_mask, 0.0).abs().sum()
    expect_true(
        float(pad_weight) == 0.0,
        f"self-attention with mask {where}: the blocked (future or padding) keys got total weight "
        f"{float(pad_weight):.3g}; it must be exactly 0.",
    )
