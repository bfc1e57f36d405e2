"""MultiHeadAttention.forward against torch's nn.MultiheadAttention (float64 on the grader side)."""

import pytest
import torch
from support_multihead import (
    MASK_SHAPES,
    case,
    max_score,
    random_mask,
    random_torch_mha,
    state_dict_of,
    student_mha,
    torch_forward,
)

from autograder.checks import expect_close, expect_dtype, expect_shape

pytestmark = pytest.mark.grades("MultiHeadAttention")  # the function these tests grade (summary, dashboard, pytest -m)

HINT_OUT = (
    "Check, in order: Q, K, V come from rows [0,d), [d,2d), [2d,3d) of in_proj_weight (plus in_proj_bias); "
    "scores are divided by sqrt(d_h) = sqrt(d_model / n_heads); the head outputs are concatenated "
    "(merge_heads), not averaged, and then projected by out_proj."
)
HINT_WEIGHTS = (
    "weights must be the softmax over keys for every head separately, shape (B, h, n_q, n_k): "
    "not averaged over heads, scaled by 1/sqrt(d_h), with blocked (True) keys at exactly 0."
)


def _compare(student, d, h, bias, B, n_q, n_k, mask_shape, gen, what_mask):
    mha = random_torch_mha(d, h, bias, gen)
    sd = state_dict_of(mha)
    q = torch.randn(B, n_q, d, generator=gen, dtype=torch.float64)
    if n_q == n_k:  # self-attention: one sequence gives queries, keys and values
        k = v = q
    else:  # cross-attention: keys and values from another sequence
        k = torch.randn(B, n_k, d, generator=gen, dtype=torch.float64)
        v = torch.randn(B, n_k, d, generator=gen, dtype=torch.float64)
    mask = None if mask_shape is None else random_mask(mask_shape, gen)
    want_out, want_w = torch_forward(mha, q, k, v, mask)
    m = student_mha(student, d, h, bias, sd)
    out, w = m(q, k, v, mask=mask)
    where = f"MultiHeadAttention({d}, {h}, bias={bias}) in float64, {case(B, h, d, n_q, n_k)}, {what_mask}"
    expect_shape(w, (B, h, n_q, n_k), f"{where}: weights (one attention pattern per head)")
    # 1e-10: both sides compute the same float64 formula; only the order of additions differs
    expect_close(out, want_out, f"{where}: output", atol=1e-10, hint=HINT_OUT)
    expect_close(w, want_w, f"{where}: per-head weights", atol=1e-10, hint=HINT_WEIGHTS)


CASES = [(h, bias, n_q, n_k) for h in (1, 2, 4, 8) for bias, n_q, n_k in ((True, 5, 7), (False, 6, 6))]


@pytest.mark.parametrize("h,bias,n_q,n_k", CASES, ids=[f"h={h},bias={b},n_q={q},n_k={k}" for h, b, q, k in CASES])
def test_matches_torch_float64(student, gen, h, bias, n_q, n_k):
    """MultiHeadAttention: equals nn.MultiheadAttention with the same weights (float64, no mask)"""
    _compare(student, 16, h, bias, 2, n_q, n_k, None, gen, "mask=None")


MASK_CASES = list(MASK_SHAPES)


@pytest.mark.parametrize("mask_name", MASK_CASES, ids=MASK_CASES)
def test_masks_match_torch(student, gen, mask_name):
    """MultiHeadAttention: masks of every allowed shape block exactly like nn.MultiheadAttention's attn_mask"""
    B, h, d, n_q, n_k = 3, 4, 16, 5, 7
    bias = MASK_CASES.index(mask_name) % 2 == 0
    shape = MASK_SHAPES[mask_name](B, h, n_q, n_k)
    _compare(student, d, h, bias, B, n_q, n_k, shape, gen, f"bool mask of shape {shape} (True = blocked)")


@pytest.mark.parametrize("scale", [1.0, 3.0], ids=["scale=1", "scale=3"])
def test_float32(student, gen, scale):
    """MultiHeadAttention: works in float32 and matches nn.MultiheadAttention within float32 accuracy"""
    B, h, d, n_q, n_k = 2, 4, 32, 9, 13
    mha = random_torch_mha(d, h, True, gen, scale=scale)
    sd32 = state_dict_of(mha, torch.float32)
    q = torch.randn(B, n_q, d, generator=gen) * scale
    k = torch.randn(B, n_k, d, generator=gen) * scale
    v = torch.randn(B, n_k, d, generator=gen) * scale
    mask = random_mask((B, 1, 1, n_k), gen)
    want_out, want_w = torch_forward(mha, q.double(), k.double(), v.double(), mask)  # float64 on the same numbers
    m = student_mha(student, d, h, True, sd32, double=False)
    out, w = m(q, k, v, mask=mask)
    where = f"MultiHeadAttention({d}, {h}) in float32, {case(B, h, d, n_q, n_k)}, weights scaled by {scale}"
    expect_dtype(out, torch.float32, f"{where}: output")
    expect_dtype(w, torch.float32, f"{where}: weights")
    S = max_score(mha, q, k)
    # float32 keeps ~6e-8 relative precision; the reference's own float32 error, measured over 1200
    # random cases, stays below 1.3e-7·(1+S)·max(1,|out|) for outputs and 9e-8·(1+S) for weights
    # (S = largest |score|), so these bounds leave a margin of about 12x
    scale_out = (1 + S) * max(1.0, float(want_out.abs().max()))
    expect_close(out, want_out, f"{where}: output", atol=2e-6 * scale_out, hint=HINT_OUT)
    expect_close(w, want_w, f"{where}: per-head weights", atol=1e-6 * (1 + S), hint=HINT_WEIGHTS)


@pytest.mark.parametrize("bias", [True, False], ids=["bias=True", "bias=False"])
def test_fully_blocked_rows(student, reference, gen, bias):
    """MultiHeadAttention: a query with every key blocked gets zero weights and output out_proj.bias (no NaN)"""
    B, h, d, n_q, n_k = 2, 4, 16, 5, 6
    mha = random_torch_mha(d, h, bias, gen)
    sd = state_dict_of(mha)
    q = torch.randn(B, n_q, d, generator=gen, dtype=torch.float64)
    k = torch.randn(B, n_k, d, generator=gen, dtype=torch.float64)
    v = torch.randn(B, n_k, d, generator=gen, dtype=torch.float64)
    m = student_mha(student, d, h, bias, sd)
    b_out = sd["out_proj.bias"] if bias else torch.zeros(d, dtype=torch.float64)

    # 1) a 2-D mask whose row 2 blocks every key: query 2 sees nothing in any head
    mask = random_mask((n_q, n_k), gen)
    mask[2] = True
    where = f"MultiHeadAttention({d}, {h}, bias={bias}), {case(B, h, d, n_q, n_k)}, mask (n_q, n_k) with row 2 all True"
    out, w = m(q, k, v, mask=mask)
    want_out, want_w = torch_forward(mha, q, k, v, mask)  # torch: NaN in query 2's row, right elsewhere
    want_w[:, :, 2] = 0.0                                  # the contract: zero weights for query 2 ...
    want_out[:, 2] = b_out                                 # ... so its output row is out_proj.bias
    blocked_hint = (
        "Query 2 has every key blocked: its weights must be exactly 0 in every head, not NaN "
        "(torch.softmax of an all -inf row is NaN) and not a uniform 1/n_k (what a large negative fill such as "
        "-1e9 gives instead of -inf); zero weights give zero head outputs, and out_proj maps zeros to its bias. "
    )
    # 1e-10: the same float64 formula on both sides (query 2's row is exact: zeros, then the bias)
    expect_close(w, want_w, f"{where}: per-head weights", atol=1e-10, hint=blocked_hint + HINT_WEIGHTS)
    expect_close(out, want_out, f"{where}: output", atol=1e-10, hint=blocked_hint + HINT_OUT)

    # 2) a (B, h, n_q, n_k) mask that blocks query 1 of batch 0 in head 3 only: that head adds nothing there
    mask4 = random_mask((B, h, n_q, n_k), gen)
    mask4[0, 3, 1] = True
    where = (f"MultiHeadAttention({d}, {h}, bias={bias}), {case(B, h, d, n_q, n_k)}, mask (B, h, n_q, n_k) "
             "blocking every key of query 1 in head 3 of batch 0 only")
    out, w = m(q, k, v, mask=mask4)
    ref = reference.MultiHeadAttention(d, h, bias=bias).double()
    ref.load_state_dict(sd, strict=True)
    with torch.no_grad():
        want_out, want_w = ref(q, k, v, mask=mask4)
    expect_close(w, want_w, f"{where}: per-head weights", atol=1e-10, hint=HINT_WEIGHTS)
    expect_close(out, want_out, f"{where}: output", atol=1e-10,
                 hint="The blocked head contributes zeros to the concatenation; the other heads work as usual.")
