"""Hidden tests of scaled_dot_product_attention(q, k, v, mask=None)."""

import pytest
import torch
from support_attention import (
    DTYPES,
    SDPA_SHAPES,
    excuse_own_softmax,
    expect_attends,
    expect_reference_values,
    own_softmax_grad_v,
    qkv,
    randn,
    random_mask,
    same_with_nan,
    sdpa_tolerances,
    value_range,
)

from autograder.checks import as_float64, expect_close, expect_dtype, expect_shape, expect_true
from autograder.worker import ops

pytestmark = pytest.mark.grades("scaled_dot_product_attention")  # the function these tests grade (summary, dashboard, pytest -m)

SDPA = "scaled_dot_product_attention"


def _shapes(q, k, v, mask=None):
    text = f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}, {str(q.dtype).replace('torch.', '')}"
    return text + (f", mask {tuple(mask.shape)}" if mask is not None else ", mask=None")


def _compare(student, reference, q, k, v, mask=None, hint=""):
    """The student's (output, weights) against the float64 reference on the same inputs."""
    got = student.scaled_dot_product_attention(q, k, v) if mask is None else \
        student.scaled_dot_product_attention(q, k, v, mask=mask)
    expect_true(
        isinstance(got, (tuple, list)) and len(got) == 2,
        f"{SDPA} should return a pair (output, weights); got {type(got).__name__} ({_shapes(q, k, v, mask)}).",
    )
    want_out, want_w = reference.scaled_dot_product_attention(q.double(), k.double(), v.double(), mask)
    tol_w, tol_out = sdpa_tolerances(q, k, v)
    where = _shapes(q, k, v, mask)
    expect_close(got[1], want_w, f"the attention weights for {where}", atol=tol_w, hint=hint)
    expect_close(got[0], want_out, f"the attention output for {where}", atol=tol_out, hint=hint)
    return got


@pytest.mark.parametrize("case", list(SDPA_SHAPES))
@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
def test_matches_reference(student, reference, gen, dtype, case):
    """scaled_dot_product_attention: matches the float64 reference (mask=None)"""
    q, k, v = qkv(gen, case, DTYPES[dtype])
    _compare(
        student, reference, q, k, v,
        hint="Expected softmax(q kᵀ / sqrt(d_k)) v with d_k = q.shape[-1], the softmax over the keys (last dim), "
        "kᵀ = k.transpose(-2, -1).",
    )


MASKS = {
    # name: (case, mask shape builder)
    "(n_q, n_k) for a batch": ("batch", lambda q, k: (q.shape[-2], k.shape[-2])),
    "(B, 1, n_k) padding-style": ("batch", lambda q, k: (q.shape[0], 1, k.shape[-2])),
    "(B, n_q, n_k)": ("batch", lambda q, k: (q.shape[0], q.shape[-2], k.shape[-2])),
    "(B, 1, 1, n_k) over heads": ("batch+heads", lambda q, k: (q.shape[0], 1, 1, k.shape[-2])),
    "(1, h, n_q, n_k) over heads": ("batch+heads", lambda q, k: (1, q.shape[1], q.shape[-2], k.shape[-2])),
}


@pytest.mark.parametrize("mask_case", list(MASKS))
@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
def test_broadcast_masks(student, reference, gen, dtype, mask_case):
    """scaled_dot_product_attention: matches the reference with masks that broadcast"""
    case, shape_of = MASKS[mask_case]
    q, k, v = qkv(gen, case, DTYPES[dtype])
    mask = random_mask(gen, shape_of(q, k))
    _compare(
        student, reference, q, k, v, mask,
        hint="True means blocked: set those scores to -inf BEFORE the softmax (scores.masked_fill(mask, "
        "float('-inf'))), so the other weights are renormalised; masked_fill broadcasts the mask for you.",
    )


@pytest.mark.parametrize("masked", [False, True], ids=["mask=None", "random mask"])
def test_properties(student, reference, gen, masked):
    """scaled_dot_product_attention: weights are non-negative, rows sum to 1, outputs inside the values' range"""
    q, k, v = qkv(gen, "batch+heads", torch.float32, scale=2.0)
    mask = random_mask(gen, (q.shape[0], 1, q.shape[-2], k.shape[-2])) if masked else None
    where = _shapes(q, k, v, mask)
    out, w = student.scaled_dot_product_attention(q, k, v, mask=mask) if masked else \
        student.scaled_dot_product_attention(q, k, v)
    w = as_float64(w)
    out = as_float64(out, "the attention output")
    expect_shape(w, (*q.shape[:-1], k.shape[-2]), f"the attention weights for {where}")
    expect_shape(out, (*q.shape[:-1], v.shape[-1]), f"the attention output for {where}")
    expect_true(
        bool((w >= 0).all()),
        f"the attention weights for {where}: {int((w < 0).sum())} are negative (smallest {float(w.min()):.3g}). "
        "Weights come out of a softmax, so they are never negative.",
    )
    sums = w.sum(-1)
    # float32 weights: each within ~1e-7, 9 per row
    expect_close(
        sums, torch.ones_like(sums), f"the row sums of the attention weights for {where}", atol=1e-5,
        hint="Every query's weights over the keys must sum to 1: softmax over the last dim, after masking "
        "(zeroing weights after the softmax leaves rows summing to less than 1).",
    )
    lo, hi = value_range(v, q.shape[-2])
    slack = 1e-5 * (1 + float(v.abs().max()))  # float32 rounding of a weighted average
    outside = (out < lo - slack) | (out > hi + slack)
    expect_true(
        not bool(outside.any()),
        f"the attention output for {where}: {int(outside.sum())} entries lie outside the range of the value "
        "rows. Each output row is a weighted average of the rows of v (weights >= 0 summing to 1), so every "
        "feature must lie between the smallest and largest value of that feature.",
    )
    expect_attends(q, k, v, mask, out, w, where)
    expect_reference_values(reference, q, k, v, mask, out, w, where)


@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
def test_blocked_weights_zero(student, reference, gen, dtype):
    """scaled_dot_product_attention: blocked keys get weight exactly 0"""
    q, k, v = qkv(gen, "batch", DTYPES[dtype], scale=3.0)
    mask = random_mask(gen, (q.shape[0], q.shape[-2], k.shape[-2]), p=0.5)
    where = _shapes(q, k, v, mask)
    out, w = student.scaled_dot_product_attention(q, k, v, mask=mask)
    expect_shape(as_float64(w), tuple(mask.shape), f"the attention weights for {where}")
    out, w = excuse_own_softmax(student, q, k, v, mask, out, w)  # a fully blocked query: softmax's to answer
    leaked = w.masked_fill(~mask, 0.0)
    expect_true(
        bool((leaked == 0).all()),
        f"the attention weights for {where}: {int((leaked != 0).sum())} of the {int(mask.sum())} blocked "
        f"positions got a non-zero weight (largest {float(leaked.abs().nan_to_num(1.0).max()):.3g}). True in the "
        "mask means blocked: fill those scores with -inf before the softmax, so their weight is exactly 0.",
        got=w,
    )
    expect_reference_values(reference, q, k, v, mask, out, w, where)


def _fully_blocked_inputs(gen, dtype):
    q, k, v = qkv(gen, "batch", dtype)
    mask = random_mask(gen, (q.shape[0], q.shape[-2], k.shape[-2]))
    mask[0, 1] = True   # query 1 of batch 0 may look at nothing
    mask[1, -1] = True  # nor may the last query of batch 1
    return q, k, v, mask


@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
def test_fully_blocked_rows(student, reference, gen, dtype):
    """scaled_dot_product_attention: a fully blocked query gets zero weights and a zero output, not NaN"""
    q, k, v, mask = _fully_blocked_inputs(gen, DTYPES[dtype])
    where = _shapes(q, k, v, mask)
    out, w = student.scaled_dot_product_attention(q, k, v, mask=mask)
    expect_shape(as_float64(w), tuple(mask.shape), f"the attention weights for {where}")
    # a softmax without the all -inf guard gives NaN here: softmax's own test charges it, not this one
    out, w = excuse_own_softmax(student, q, k, v, mask, out, w)
    rows = {(0, 1): "query 1 of batch 0", (1, -1): "the last query of batch 1"}
    for (b, i), name in rows.items():
        expect_true(
            not bool(torch.isnan(w[b, i]).any() or torch.isnan(out[b, i]).any()),
            f"{where}: every key of {name} is blocked, and your weights/output for it contain NaN. With all "
            "scores -inf, max = -inf and x - max = NaN: use 0 as the max of such a row and divide by 1 "
            "instead of a zero sum, so the row's weights are all 0.",
            got=w,
        )
        expect_true(
            bool((w[b, i] == 0).all()) and bool((out[b, i] == 0).all()),
            f"{where}: every key of {name} is blocked, so its weights and its output row must be all 0; got "
            f"weights {w[b, i].tolist()[:6]}{' ...' if w.shape[-1] > 6 else ''}. A large negative fill value such as -1e9 gives equal weights "
            "over the blocked keys instead: fill with -inf and make the softmax return 0 for an all -inf row.",
            got=w,
        )
    want_out, want_w = reference.scaled_dot_product_attention(q.double(), k.double(), v.double(), mask)
    tol_w, tol_out = sdpa_tolerances(q, k, v)
    expect_close(w, want_w, f"the attention weights for {where}", atol=tol_w)
    expect_close(out, want_out, f"the attention output for {where}", atol=tol_out)


def test_fully_blocked_gradients(student, reference, gen):
    """scaled_dot_product_attention: gradients through a fully blocked query are 0, never NaN"""
    q, k, v, mask = _fully_blocked_inputs(gen, torch.float64)
    g_out = randn(gen, (*q.shape[:-1], v.shape[-1]))
    g_w = randn(gen, tuple(mask.shape))
    got = student.gradients(SDPA, q, k, v, wrt=(0, 1, 2), grad_outputs=[g_out, g_w], mask=mask)
    want = ops.gradients(reference.scaled_dot_product_attention, (q, k, v), {"mask": mask}, wrt=(0, 1, 2),
                         grad_outputs=[g_out, g_w])
    # a softmax without the all -inf guard gives NaN weights for a fully blocked query, and so a NaN gradient
    # with respect to v (weightsᵀ @ g_out): softmax's own test charges that, so v's gradient is compared with
    # what the reference gives with those weights (q's and k's gradients through a blocked row are 0 either way)
    own_v = own_softmax_grad_v(student, reference, q, k, v, mask, g_out)
    for i, name in enumerate("qkv"):
        grad = got["inputs"][i]
        expect_true(grad is not None, f"no gradient reaches {name} ({_shapes(q, k, v, mask)}).")
        grad = torch.as_tensor(grad)
        if name == "v" and own_v is not None and same_with_nan(grad, own_v, 1e-10):
            continue
        expect_true(
            not bool(torch.isnan(grad).any()),
            f"the gradient with respect to {name} has {int(torch.isnan(grad).sum())} NaN entries "
            f"({_shapes(q, k, v, mask)}, two queries fully blocked). A NaN in a fully blocked row poisons the "
            "backward pass even if you replace it afterwards (nan_to_num, where): avoid computing -inf - (-inf) "
            "and 0/0 at all.",
        )
        # float64: gradients of the same formula agree to about 1e-14
        expect_close(grad, want["inputs"][i], f"the gradient with respect to {name} ({_shapes(q, k, v, mask)})",
                     atol=1e-10,
                     hint="A fully blocked query reads nothing, so it must send no gradient to k or v: with a "
                     "finite fill value such as -1e9 its weights are uniform and it still reads the mean of v.")


@pytest.mark.parametrize("masked", [False, True], ids=["mask=None", "random mask"])
def test_gradients(student, reference, gen, masked):
    """scaled_dot_product_attention: gradients with respect to q, k, v equal the reference's"""
    q, k, v = qkv(gen, "batch+heads", torch.float64)
    mask = random_mask(gen, (q.shape[0], 1, 1, k.shape[-2])) if masked else None
    g_out = randn(gen, (*q.shape[:-1], v.shape[-1]))
    g_w = randn(gen, (*q.shape[:-1], k.shape[-2]))
    kwargs = {"mask": mask} if masked else {}
    got = student.gradients(SDPA, q, k, v, wrt=(0, 1, 2), grad_outputs=[g_out, g_w], **kwargs)
    want = ops.gradients(reference.scaled_dot_product_attention, (q, k, v), kwargs, wrt=(0, 1, 2),
                         grad_outputs=[g_out, g_w])
    for i, name in enumerate("qkv"):
        grad = got["inputs"][i]
        expect_true(
            grad is not None,
            f"no gradient reaches {name} ({_shapes(q, k, v, mask)}): build the result from the inputs with torch "
            "operations only (no .detach(), .item(), .numpy() or torch.tensor(...)).",
        )
        # float64 end to end: the reference's own rounding is about 1e-15
        expect_close(grad, want["inputs"][i], f"the gradient with respect to {name} ({_shapes(q, k, v, mask)})",
                     atol=1e-10, hint="If the forward values are right, check for detached pieces.")


@pytest.mark.parametrize("dtype", list(DTYPES), ids=list(DTYPES))
def test_output_dtype(student, reference, gen, dtype):
    """scaled_dot_product_attention: output and weights keep q's dtype"""
    q, k, v = qkv(gen, "batch", DTYPES[dtype])
    out, w = student.scaled_dot_product_attention(q, k, v)
    where = _shapes(q, k, v)
    expect_dtype(out, q.dtype, f"the attention output for {where}")
    expect_dtype(w, q.dtype, f"the attention weights for {where}")
    expect_attends(q, k, v, None, out, w, where)  # the dtype of a real result
    expect_reference_values(reference, q, k, v, None, out, w, where)
