"""Public tests: the course's worked numbers. Run them with `pytest` in this folder.

They are a quick sanity check, not the whole grade: the grader also checks
random shapes, masks, very large scores, fully blocked rows and gradients.
"""

import math

import pytest
import torch

from autograder.checks import expect_close, expect_dtype, expect_follows_scores, expect_shape


@pytest.mark.grades("scaled_dot_product_attention")
def test_worked_example(student):
    """scaled_dot_product_attention: the course's worked example gives 20.0"""
    q = torch.tensor([[1.0, 0.0]], dtype=torch.float64)                          # (1, 2)
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)  # (3, 2)
    v = torch.tensor([[10.0], [20.0], [30.0]], dtype=torch.float64)              # (3, 1)
    out, weights = student.scaled_dot_product_attention(q, k, v)
    # scores q·k / sqrt(2) = [0.707, 0, 0.707]; weights e^0.707/(2e^0.707+1) = 0.401 and 1/(2e^0.707+1) = 0.198
    a = math.exp(1 / math.sqrt(2))
    want_w = torch.tensor([[a, 1.0, a]], dtype=torch.float64) / (2 * a + 1)
    expect_close(
        weights, want_w, "the weights for the worked example (q [1, 0]; keys [1, 0], [0, 1], [1, 1])",
        atol=1e-9,
        hint="Expected about [0.401, 0.198, 0.401]: scores q·k / sqrt(d_k) with d_k = 2, then softmax over the keys. "
        "[0.422, 0.155, 0.422] means the scores were not divided by sqrt(d_k).",
    )
    expect_close(
        out, torch.tensor([[20.0]], dtype=torch.float64),
        "the output for the worked example (values 10, 20, 30)", atol=1e-9,
        hint="Expected 0.401·10 + 0.198·20 + 0.401·30 = 20.0: the output is weights @ v.",
    )


@pytest.mark.grades("softmax")
def test_softmax_course_example(student):
    """softmax: softmax([2, 0.5, -1]) ≈ [0.7856, 0.1753, 0.0391], also right for [1000, 999, -1000] (no overflow)"""
    x = torch.tensor([2.0, 0.5, -1.0], dtype=torch.float64)
    got = student.softmax(x)
    # the course rounds to 4 decimals
    expect_close(got, torch.tensor([0.7856, 0.1753, 0.0391], dtype=torch.float64), "softmax([2, 0.5, -1])",
                 atol=1e-4, hint="softmax(x)_i = exp(x_i - max x) / sum_j exp(x_j - max x).")
    # PyTorch may be used in tests, just not in your code
    expect_close(got, torch.softmax(x, dim=-1), "softmax([2, 0.5, -1]) against torch.softmax", atol=1e-12)
    big = torch.tensor([1000.0, 999.0, -1000.0], dtype=torch.float64)
    # float64 rounding at 1000 is about 1e-13, whichever correct formulation you use
    expect_close(
        student.softmax(big), torch.softmax(big, dim=-1), "softmax([1000, 999, -1000]) in float64", atol=1e-10,
        hint="exp(1000) overflows to inf: subtract the max first (the softmax does not change).",
    )


@pytest.mark.grades("scaled_dot_product_attention")
def test_shapes(student, gen):
    """scaled_dot_product_attention: output (n_q, d_v) and weights (n_q, n_k), batched too"""
    n_q, n_k, d_k, d_v = 3, 5, 4, 6
    q, k, v = torch.randn(2, n_q, d_k, generator=gen), torch.randn(2, n_k, d_k, generator=gen), \
        torch.randn(2, n_k, d_v, generator=gen)
    out, weights = student.scaled_dot_product_attention(q, k, v)
    where = "q (2, 3, 4), k (2, 5, 4), v (2, 5, 6)"
    expect_shape(out, (2, n_q, d_v), f"the attention output for {where}")
    expect_shape(weights, (2, n_q, n_k), f"the attention weights for {where}")
    expect_dtype(out, torch.float32, f"the attention output for {where} (float32 inputs)")
    sums = weights.sum(-1)
    expect_close(sums, torch.ones_like(sums), f"the row sums of the weights for {where}", atol=1e-5,
                 hint="softmax over the keys (the last dim): each query's weights sum to 1.")
    expect_follows_scores(q @ k.transpose(-2, -1), weights, f"the attention weights for {where}")
    # float32 weights within ~1e-6, values of unit size, 5 keys
    expect_close(out, torch.as_tensor(weights) @ v, f"the attention output for {where} against (your weights) @ v",
                 atol=1e-4, hint="Each output row is the weighted average of the rows of v: output = weights @ v.")


@pytest.mark.grades("causal_mask")
def test_causal_mask_4(student):
    """causal_mask: causal_mask(4) blocks the strict upper triangle"""
    got = student.causal_mask(4)
    want = torch.tensor([[False, True, True, True],
                         [False, False, True, True],
                         [False, False, False, True],
                         [False, False, False, False]])
    expect_dtype(got, torch.bool, "causal_mask(4)")
    expect_close(got, want, "causal_mask(4)",
                 hint="True = blocked: query i may not see keys j > i (it does see itself, j = i).")


@pytest.mark.grades("padding_mask")
def test_padding_mask_example(student):
    """padding_mask: lengths [3, 1, 4] in 4 positions"""
    got = student.padding_mask(torch.tensor([3, 1, 4]), 4)
    want = torch.tensor([[False, False, False, True],
                         [False, True, True, True],
                         [False, False, False, False]])
    expect_dtype(got, torch.bool, "padding_mask(torch.tensor([3, 1, 4]), 4)")
    expect_close(got, want, "padding_mask(torch.tensor([3, 1, 4]), 4)",
                 hint="Sequence b has real tokens at positions 0 .. lengths[b]-1; True (blocked) from lengths[b] on.")


@pytest.mark.grades("softmax")
@pytest.mark.callers_apart  # scaled_dot_product_attention's tests grade a fully blocked query around this failure
def test_softmax_all_neg_inf_row(student):
    """softmax: a row that is all -inf gives zeros, not NaN (a hidden test checks the same in both dtypes)"""
    x = torch.tensor([[1.0, 2.0, 3.0], [float("-inf")] * 3, [0.0, float("-inf"), 0.0]], dtype=torch.float64)
    got = student.softmax(x)
    want = torch.tensor([[0.09003057317038046, 0.24472847105479764, 0.6652409557748219], [0.0, 0.0, 0.0],
                         [0.5, 0.0, 0.5]], dtype=torch.float64)
    expect_close(got, want, "softmax(x) for x = [[1, 2, 3], [-inf, -inf, -inf], [0, -inf, 0]], float64", atol=1e-12,
                 hint="A row with nothing to attend to must give zeros: with max = -inf, x - max is -inf - (-inf) = "
                 "NaN. Replace a -inf max by 0 (and a zero sum by 1) before dividing.")


@pytest.mark.grades("scaled_dot_product_attention")
def test_fully_blocked_query(student):
    """scaled_dot_product_attention: a fully blocked query gets zero weights and a zero output, not NaN"""
    q = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)                 # (2, 2)
    k = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=torch.float64)     # (3, 2)
    v = torch.tensor([[10.0], [20.0], [30.0]], dtype=torch.float64)                 # (3, 1)
    mask = torch.tensor([[False, True, False], [True, True, True]])                 # query 1 sees nothing
    out, weights = student.scaled_dot_product_attention(q, k, v, mask=mask)
    where = "q (2, 2), k (3, 2), v (3, 1), float64, mask [[F, T, F], [T, T, T]] (query 1 fully blocked)"
    # Your softmax of an all -inf row: if it is not zeros, test_softmax_all_neg_inf_row says so, and query 1's
    # weights here are what your softmax gives (NaN, say): that mistake is softmax's, not this function's.
    own = torch.as_tensor(student.softmax(torch.full((3,), float("-inf"), dtype=torch.float64)))
    follows_own = _same_or_both_nan(weights[1], own) and _same_or_both_nan(out[1], own @ v.double())
    if bool((own == 0).all()) or not follows_own:
        expect_close(weights[1], torch.zeros(3, dtype=torch.float64), f"the weights of query 1 for {where}", atol=0.0,
                     hint="Every key of query 1 is blocked, so its weights are all 0 (not NaN, not 1/3 each): fill "
                     "blocked scores with -inf (not -1e9) and make the softmax return 0 for an all -inf row.")
        expect_close(out[1], torch.zeros(1, dtype=torch.float64), f"the output of query 1 for {where}", atol=0.0,
                     hint="A query that may see nothing reads nothing: its output row is 0.")
    expect_close(weights[0], torch.tensor([0.5, 0.0, 0.5], dtype=torch.float64), f"the weights of query 0 for {where}",
                 atol=1e-12, hint="Query 0 sees keys 0 and 2, whose scores q·k / sqrt(2) are equal; key 1 gets exactly 0.")


def _same_or_both_nan(got, want) -> bool:
    """``got`` equals ``want``, NaN exactly where ``want`` has NaN."""
    got, want = torch.as_tensor(got).double(), torch.as_tensor(want).double()
    nan = torch.isnan(want)
    return got.shape == want.shape and torch.equal(torch.isnan(got), nan) and bool(((got - want).abs()[~nan] <= 1e-9).all())
