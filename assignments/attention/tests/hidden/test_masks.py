"""Hidden tests of causal_mask and padding_mask, alone and driving attention."""

import pytest
import torch
from support_attention import randn

from autograder.checks import as_float64, expect_close, expect_dtype, expect_shape, expect_true

SDPA = "scaled_dot_product_attention"


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


def _attend(student, x, mask):
    """Self-attention of x with itself (q = k = v = x), as in the course's leakage demo."""
    if mask is None:
        return as_float64(student.scaled_dot_product_attention(x, x, x)[0], "the self-attention output")
    return as_float64(student.scaled_dot_product_attention(x, x, x, mask=mask)[0], "the self-attention output")


@pytest.mark.grades("causal_mask")
@pytest.mark.parametrize("t", [1, 3, 5])
def test_future_independence(student, gen, t):
    """causal_mask: with it, changing tokens at positions >= t leaves outputs before t unchanged"""
    T, d = 7, 4
    x = randn(gen, (2, T, d))
    x2 = x.clone()
    x2[:, t:] = randn(gen, (2, T - t, d))  # a different future
    mask = student.causal_mask(T)
    before, after = _attend(student, x, mask), _attend(student, x2, mask)
    # the outputs before t use exactly the same numbers both times; 1e-12 allows any summation order
    expect_close(
        after[:, :t], before[:, :t],
        f"self-attention outputs at positions 0..{t - 1} (x of shape (2, {T}, {d}), float64, "
        f"mask=causal_mask({T})) after changing positions {t}..{T - 1}",
        atol=1e-12,
        hint="They must not change: position i may only read keys j <= i. Either the causal mask blocks the "
        "wrong triangle, or True is not treated as blocked.",
    )
    changed = (_attend(student, x2, None)[:, :t] - _attend(student, x, None)[:, :t]).abs().max()
    expect_true(
        float(changed) > 1e-6,
        f"without a mask, self-attention outputs at positions 0..{t - 1} did not change when positions "
        f"{t}..{T - 1} changed (x of shape (2, {T}, {d})): with mask=None every query must see every key.",
    )


@pytest.mark.grades("padding_mask")
def test_padding_and_causal(student, reference, gen):
    """padding_mask: combined with causal_mask by broadcasting, drives attention correctly"""
    B, T, d = 3, 6, 5
    lengths = torch.tensor([T, 4, 2])
    x = randn(gen, (B, T, d))
    causal, pad = student.causal_mask(T), student.padding_mask(lengths, T)
    mask = torch.as_tensor(causal)[None, :, :] | torch.as_tensor(pad)[:, None, :]  # (B, T, T)
    want_mask = reference.causal_mask(T)[None, :, :] | reference.padding_mask(lengths, T)[:, None, :]
    where = f"causal_mask({T})[None] | padding_mask({lengths.tolist()}, {T})[:, None] (shape ({B}, {T}, {T}))"
    expect_close(
        mask, want_mask, where,
        hint="Query i of sequence b may see key j only when j <= i and j < lengths[b].",
    )
    out, w = student.scaled_dot_product_attention(x, x, x, mask=mask)
    w = as_float64(w, "the attention weights")
    pad_weight = w.masked_fill(~want_mask, 0.0).abs().sum()
    expect_true(
        float(pad_weight) == 0.0,
        f"self-attention with mask {where}: the blocked (future or padding) keys got total weight "
        f"{float(pad_weight):.3g}; it must be exactly 0.",
    )
    want_out, want_w = reference.scaled_dot_product_attention(x, x, x, want_mask)
    expect_close(w, want_w, f"the attention weights with mask {where}", atol=1e-10,
                 call={"fn": SDPA, "args": (x, x, x), "kwargs": {"mask": want_mask}, "output": 1})
    expect_close(out, want_out, f"the attention output with mask {where}", atol=1e-10,
                 call={"fn": SDPA, "args": (x, x, x), "kwargs": {"mask": want_mask}, "output": 0})
