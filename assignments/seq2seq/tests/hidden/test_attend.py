"""Hidden tests for attend(query, enc)."""

import pytest
import torch

from autograder.checks import expect_close, expect_shape, expect_true

pytestmark = pytest.mark.grades("attend")  # the function these tests grade (summary, dashboard, pytest -m)

SHAPES = [(3, 5, 4), (1, 1, 8), (4, 9, 32), (2, 16, 7)]  # (B, T, h); T = 1 and odd h included


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "B{}xT{}xh{}".format(*s))
def test_attend_matches_reference(student, reference, gen, shape):
    """attend: context and weights equal the float64 reference"""
    B, T, h = shape
    # Scale 2 makes the scores spread out (weights far from uniform), so a missing
    # 1/sqrt(h) or a softmax over the wrong dimension changes them visibly.
    query = 2 * torch.randn(B, h, generator=gen, dtype=torch.float64)
    enc = 2 * torch.randn(B, T, h, generator=gen, dtype=torch.float64)
    got = student.attend(query, enc)
    expect_true(
        isinstance(got, (tuple, list)) and len(got) == 2,
        f"attend(query {tuple(query.shape)}, enc {tuple(enc.shape)}) must return a pair (context, weights); "
        f"got {type(got).__name__}{f' of length {len(got)}' if isinstance(got, (tuple, list)) else ''}.",
    )
    want_context, want_weights = reference.attend(query, enc)
    expect_shape(got[1], (B, T), f"attend weights for query {tuple(query.shape)}, enc {tuple(enc.shape)}")
    # 1e-10: float64 inputs of size ~10; a different but correct order of operations
    # (einsum, matmul, a hand-written softmax) differs by ~1e-15.
    expect_close(
        got[1], want_weights, f"attend weights (query {tuple(query.shape)}, enc {tuple(enc.shape)}, float64)",
        atol=1e-10,
        hint="weights = softmax(enc · query / sqrt(h)) over the T encoder positions; check the 1/sqrt(h) "
        "scaling (h = the hidden size, the last dimension of enc) and the softmax dimension (dim=1, T).",
    )
    expect_close(
        got[0], want_context, f"attend context (query {tuple(query.shape)}, enc {tuple(enc.shape)}, float64)",
        atol=1e-10,
        hint="context = Σ_t weights[:, t] · enc[:, t]: the weighted average of the encoder states "
        "(enc is both the keys and the values), shape (B, h).",
    )
    if T == 1:  # one position: its weight is 1 whatever the scores, so the case pays only with a real one beside it
        test_attend_matches_reference(student, reference, gen, (B, 4, h))


def test_attend_is_a_convex_combination(student, reference, gen):
    """attend: weights are a distribution over T and the context lies inside the encoder states' range"""
    B, T, h = 6, 7, 5
    query = 3 * torch.randn(B, h, generator=gen, dtype=torch.float64)
    enc = torch.rand(B, T, h, generator=gen, dtype=torch.float64)  # in [0, 1): a query of size ~3 is far outside
    context, weights = student.attend(query, enc)
    where = f"query {tuple(query.shape)}, enc {tuple(enc.shape)}"
    expect_shape(weights, (B, T), f"attend weights ({where})")
    expect_shape(context, (B, h), f"attend context ({where})")
    weights = torch.as_tensor(weights, dtype=torch.float64)
    context = torch.as_tensor(context, dtype=torch.float64)
    # 1e-12: a sum of 7 float64 numbers in [0, 1] is exact to ~1e-16.
    sums = weights.sum(dim=1)
    worst = int((sums - 1).abs().argmax())
    expect_true(
        bool(((sums - 1).abs() < 1e-12).all()),
        f"attend ({where}): the weights of batch element {worst} sum to {float(sums[worst]):.6g}, not 1. "
        "The softmax must run over the T encoder positions (dim=1), not over the batch (dim=0).",
    )
    expect_true(
        bool((weights >= 0).all()),
        f"attend ({where}): some weights are negative (smallest {float(weights.min()):.3g}); softmax weights never are.",
    )
    low, high = enc.amin(dim=1), enc.amax(dim=1)  # (B, h) range of the encoder states per feature
    # 1e-12: a convex combination of float64 numbers stays inside their range up to rounding.
    outside = (context < low - 1e-12) | (context > high + 1e-12)
    if outside.any():
        b, j = (int(i) for i in outside.nonzero()[0])
        expect_true(
            False,
            f"attend ({where}): context[{b}, {j}] = {float(context[b, j]):.4g} lies outside the range of the "
            f"encoder states enc[{b}, :, {j}], [{float(low[b, j]):.4g}, {float(high[b, j]):.4g}]. The context "
            "is a weighted average of the encoder states (the values), so it must lie inside their range; "
            "did you average the query instead of enc, or use weights that do not sum to 1?",
        )
    # pays only when the same call's values are right too (uniform weights and the mean state are convex too)
    want_context, want_weights = reference.attend(query, enc)
    for got, want, name in ((weights, want_weights, "weights"), (context, want_context, "context")):
        expect_close(got, want, f"attend {name} ({where}, float64)", atol=1e-10,
                     hint="(This test checks properties, and pays only when the values of the same call are right too.)")
