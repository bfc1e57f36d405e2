"""sinusoidal_positions: the original Transformer's position table."""

import pytest
import torch
from support_multihead import expect_table, formula

from autograder.checks import (
    as_float64,
    expect_close,
    expect_dtype,
    expect_raises,
    expect_shape,
    expect_true,
)

pytestmark = pytest.mark.grades("sinusoidal_positions")  # the function these tests grade (summary, dashboard, pytest -m)

SIZES = [(1, 2), (7, 2), (10, 4), (50, 16), (128, 64), (333, 6), (1024, 256)]  # (n_positions, d_model)


@pytest.mark.parametrize("n,d", SIZES, ids=[f"n={n},d={d}" for n, d in SIZES])
def test_matches_formula(student, n, d):
    """sinusoidal_positions: float32 table equal to the sin/cos formula within 1e-4"""
    got = student.sinusoidal_positions(n, d)
    what = f"sinusoidal_positions({n}, {d})"
    expect_shape(got, (n, d), what)
    expect_dtype(got, torch.float32, what)
    # 1e-4: float32 sin/cos of angles up to 1023 rad are off by ~6e-5 at worst (argument rounding)
    expect_close(
        got, formula(n, d), what, atol=1e-4,
        hint="Check the formula: even columns 2i hold sin(pos / 10000^(2i/d_model)), odd columns 2i+1 hold "
        "cos of the same angle; the exponent uses 2i (the even column index), not i.",
    )


def test_rows_distinct(student):
    """sinusoidal_positions: every position gets its own vector (1024 positions, d_model=64)"""
    pe = student.sinusoidal_positions(1024, 64)
    expect_shape(pe, (1024, 64), "sinusoidal_positions(1024, 64)")
    pe = as_float64(pe, "sinusoidal_positions(1024, 64)")
    dist = torch.cdist(pe, pe) + torch.eye(1024, dtype=torch.float64) * 1e9  # ignore each row against itself
    closest = float(dist.min())
    i, j = divmod(int(dist.argmin()), 1024)
    # the formula's closest pair of rows is 1.47 apart; 1e-3 only flags rows that coincide
    expect_true(
        closest > 1e-3,
        f"sinusoidal_positions(1024, 64): rows {i} and {j} are (almost) the same vector (distance {closest:.2g}). "
        "Positions must be told apart, otherwise attention cannot see word order: does the angle use pos?",
        got=pe,
    )
    expect_table(pe, 1024, 64)


def test_odd_d_model_raises(student):
    """sinusoidal_positions: ValueError for an odd d_model (and none for an even one)"""
    for d in (7, 1):
        expect_raises(lambda d=d: student.sinusoidal_positions(10, d), (ValueError,), f"sinusoidal_positions(10, {d})")
    # a valid call next to it returns: ValueError on every call would otherwise pass (a stub that raises it earns nothing)
    student.sinusoidal_positions(10, 8)
