"""Hidden tests of softmax(x, dim=-1): values, properties, stability, -inf, gradients."""

import pytest
import torch
from support_attention import DTYPES, randn, uniform

from autograder.checks import as_float64, derived, expect_close, expect_dtype, expect_follows_scores, expect_shape, expect_true
from autograder.worker import ops

pytestmark = pytest.mark.grades("softmax")  # the function these tests grade (summary, dashboard, pytest -m)

SHAPES = {"(4, 7)": (4, 7), "(2, 3, 5)": (2, 3, 5), "(2, 3, 4, 6)": (2, 3, 4, 6)}

# float64: the contract's 1e-12 (a float64 softmax rounds at about 1e-16).
# float32: the contract's 1e-6; a correct float32 softmax is within 3e-7 on these inputs.
TOL = {torch.float64: 1e-12, torch.float32: 1e-6}
# Largest |input|: the contract allows 30, but exp(x - logsumexp(x)) in float32 loses
# about |x| x 6e-8 (1e-6 at 30), so float32 inputs stay within 6 where every correct
# formulation is within 3e-7. float64 uses the full range.
MAGNITUDE = {torch.float64: 30.0, torch.float32: 6.0}


def _x(gen, shape, dtype):
    m = MAGNITUDE[dtype]
    return uniform(gen, shape, -m, m, dtype)


@pytest.mark.parametrize("shape", list(SHAPES), ids=list(SHAPES))
@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
def test_matches_reference(student, reference, gen, dtype, shape):
    """softmax: matches the float64 reference along the last dim"""
    x = _x(gen, SHAPES[shape], DTYPES[dtype])
    got = student.softmax(x)
    want = reference.softmax(x.double())
    expect_shape(got, tuple(x.shape), f"softmax(x) for x of shape {tuple(x.shape)}")
    expect_close(
        got, want, f"softmax(x) for x of shape {tuple(x.shape)}, {dtype}, dim=-1",
        atol=TOL[x.dtype],
        hint="Each slice along the last dim should be exp(x - max) divided by its sum.",
        # no call=: the seam records that `got` came from softmax(x), and diagnosis replays that
    )


@pytest.mark.parametrize("dim", [0, 1, -2], ids=["dim=0", "dim=1", "dim=-2"])
def test_other_dims(student, reference, gen, dim):
    """softmax: normalises along the dim it is given"""
    x = _x(gen, (3, 4, 5), torch.float64)
    got = student.softmax(x, dim=dim)
    want = reference.softmax(x, dim=dim)
    expect_close(
        got, want, f"softmax(x, dim={dim}) for x of shape (3, 4, 5), float64",
        atol=TOL[torch.float64],
        hint=f"Take the max and the sum along `dim` (keepdim=True), not along a fixed axis: here the slices "
        f"along dim {dim} must each sum to 1.",
    )


@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
def test_properties(student, reference, gen, dtype):
    """softmax: same shape and dtype, non-negative, each slice sums to 1"""
    x = _x(gen, (5, 2, 9), DTYPES[dtype])
    what = f"softmax(x, dim=1) for x of shape (5, 2, 9), {dtype}"
    got = student.softmax(x, dim=1)
    expect_shape(got, (5, 2, 9), what)
    expect_dtype(got, x.dtype, what + " (the output keeps the input's dtype)")
    g = as_float64(got, what)
    expect_true(
        bool((g >= 0).all()),
        f"{what}: {int((g < 0).sum())} weights are negative (smallest {float(g.min()):.3g}); exp(...) divided "
        "by a positive sum can never be negative.",
    )
    sums = g.sum(dim=1)
    # each weight is within 1e-6 (float32) of the true one, so 2 slices' sums stay within 1e-5
    tol = 1e-12 if dtype == "float64" else 1e-5
    expect_close(
        sums, torch.ones_like(sums), f"{what}: the sums along dim 1", atol=tol,
        hint="Divide by the sum along the same dim you normalise over.",
    )
    along_last = derived(got, torch.as_tensor(got).transpose(1, -1), then=lambda out: torch.as_tensor(out).transpose(1, -1))
    expect_follows_scores(x.transpose(1, -1), along_last, what)
    # pays only together with the right values on the same call (float32 rounding: within 1e-6)
    expect_close(g, reference.softmax(x.double(), dim=1), what, atol=1e-12 if dtype == "float64" else 1e-6,
                 hint="(This test checks properties, and pays only when the values of the same call are right too.)")


@pytest.mark.parametrize("case", ["mixed signs", "all large negative", "all large positive"])
@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
def test_large_inputs(student, gen, dtype, case):
    """softmax: stable for scores up to ±1e4"""
    dt = DTYPES[dtype]
    low, high = {"mixed signs": (-1e4, 1e4), "all large negative": (-1e4, -9e3), "all large positive": (9e3, 1e4)}[case]
    x = uniform(gen, (6, 11), low, high, dt)
    what = f"softmax(x) for x of shape (6, 11), {dtype}, entries between {low:g} and {high:g}"
    got = as_float64(student.softmax(x))
    bad = ~torch.isfinite(got)
    expect_true(
        not bool(bad.any()),
        f"{what}: {int(bad.sum())} entries are NaN or inf. exp(1e4) overflows (and exp(-1e4) underflows to 0, "
        "making 0/0): subtract each slice's max before exponentiating (softmax is unchanged by a shift).",
        got=got,
    )
    want = torch.softmax(x.double(), dim=-1)
    # the contract's 1e-3 for inputs up to 1e4 in either dtype: float32 spacing near 1e4 is
    # about 1e-3, so exp(x - logsumexp(x)) loses up to 5e-4 and is as good as subtracting the
    # max. The failure this test is about (overflow) gives NaN or inf, far outside any tolerance.
    tol = 1e-3
    expect_close(got, want, what, atol=tol)
    sums = got.sum(-1)
    expect_close(sums, torch.ones_like(sums), what + ": the row sums", atol=tol)


def test_neg_inf_entries(student, reference, gen):
    """softmax: an entry of -inf gets weight exactly 0"""
    x = _x(gen, (5, 8), torch.float64)
    blocked = torch.rand((5, 8), generator=gen) < 0.4
    blocked[:, 0] = False  # every row keeps a finite entry
    x = x.masked_fill(blocked, float("-inf"))
    got = as_float64(student.softmax(x))
    what = "softmax(x) for x of shape (5, 8), float64, with -inf entries"
    leaked = got.masked_fill(~blocked, 0.0)
    expect_true(
        bool((leaked == 0).all()),
        f"{what}: {int((leaked != 0).sum())} of the {int(blocked.sum())} -inf entries got a non-zero weight "
        "(or NaN); exp(-inf) is exactly 0.",
        got=got,
    )
    expect_close(got, reference.softmax(x), what, atol=1e-12)


@pytest.mark.callers_apart  # sdpa's tests grade a fully blocked query around this (support_attention.excuse_own_softmax)
@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
def test_all_neg_inf_slice(student, gen, dtype):
    """softmax: a slice that is all -inf gives zeros, not NaN"""
    dt = DTYPES[dtype]
    x = _x(gen, (4, 6), dt)
    x[1] = float("-inf")
    x[3, ::2] = float("-inf")
    what = f"softmax(x) for x of shape (4, 6), {dtype}, row 1 all -inf"
    got = as_float64(student.softmax(x))
    want = torch.softmax(x.double(), dim=-1).nan_to_num(0.0)  # torch gives NaN for row 1; the contract wants 0
    expect_close(
        got, want, what, atol=1e-12 if dt == torch.float64 else 1e-6,
        hint="A row with nothing to attend to must give zeros: with max = -inf, x - max is -inf - (-inf) = NaN. "
        "Replace a -inf max by 0 (and a zero sum by 1) before dividing.",
    )


@pytest.mark.parametrize("dim", [-1, 0], ids=["dim=-1", "dim=0"])
def test_gradients(student, reference, gen, dim):
    """softmax: gradients equal the reference's"""
    x = _x(gen, (4, 3, 7), torch.float64)
    g = randn(gen, (4, 3, 7))
    got = student.gradients("softmax", x, wrt=(0,), grad_outputs=g, dim=dim)
    want = ops.gradients(reference.softmax, (x,), {"dim": dim}, wrt=(0,), grad_outputs=g)
    grad = got["inputs"][0]
    expect_true(
        grad is not None,
        f"softmax(x, dim={dim}): no gradient reaches x (shape (4, 3, 7), float64). Build the result from x with "
        "torch operations only (no .item(), .numpy(), torch.tensor(...) or .detach()).",
    )
    # float64 gradients of the plain formula agree to about 1e-15; 1e-10 leaves room for other formulations
    expect_close(
        grad, want["inputs"][0], f"the gradient of softmax(x, dim={dim}) with respect to x (shape (4, 3, 7), float64)",
        atol=1e-10,
    )
