"""Grader-side helpers for the hidden attention tests (never shipped to students).

Random inputs come from the test's seeded generator; references are computed
in float64 from the very same numbers the student receives.
"""

from __future__ import annotations

import math

import torch

from autograder.checks import as_float64, expect_close, expect_follows_scores

DTYPES = {"float32": torch.float32, "float64": torch.float64}

# Shapes for scaled_dot_product_attention: (q, k, v) with n_q != n_k and d_k != d_v
# everywhere, so scaling by sqrt(d_v) or sqrt(n_k), or reading k instead of v, shows up.
SDPA_SHAPES = {
    "unbatched": ((3, 8), (5, 8), (5, 3)),
    "batch": ((2, 4, 6), (2, 7, 6), (2, 7, 10)),
    "batch+heads": ((2, 3, 5, 4), (2, 3, 9, 4), (2, 3, 9, 7)),
    "shared-keys": ((2, 3, 5, 12), (3, 6, 12), (3, 6, 5)),  # k, v broadcast over q's first dim
    # batch = n_k = d_k: here k.T (which reverses ALL dims of a 3-D tensor) runs without
    # an error and gives wrong numbers, the silent form of that mistake
    "B=n_k=d_k": ((4, 3, 4), (4, 4, 4), (4, 4, 6)),
}


def uniform(gen: torch.Generator, shape: tuple, low: float, high: float, dtype=torch.float64) -> torch.Tensor:
    """Uniform numbers in [low, high), drawn in float64 then cast (same numbers for every dtype)."""
    return (torch.rand(shape, generator=gen, dtype=torch.float64) * (high - low) + low).to(dtype)


def randn(gen: torch.Generator, shape: tuple, dtype=torch.float64, scale: float = 1.0) -> torch.Tensor:
    return (torch.randn(shape, generator=gen, dtype=torch.float64) * scale).to(dtype)


def qkv(gen: torch.Generator, case: str, dtype=torch.float64, scale: float = 1.0) -> tuple:
    sq, sk, sv = SDPA_SHAPES[case]
    return randn(gen, sq, dtype, scale), randn(gen, sk, dtype, scale), randn(gen, sv, dtype, scale)


def random_mask(gen: torch.Generator, shape: tuple, p: float = 0.4) -> torch.Tensor:
    """Bool mask, True = blocked with probability p, never blocking a whole row (last dim)."""
    mask = torch.rand(shape, generator=gen) < p
    keep = torch.randint(0, shape[-1], shape[:-1], generator=gen)  # one allowed key per row
    return mask.scatter(-1, keep.unsqueeze(-1), False)


def scores_bound(q: torch.Tensor, k: torch.Tensor) -> float:
    """An upper bound on |q·k| / sqrt(d_k) over all query-key pairs."""
    qa, ka = q.double().abs(), k.double().abs()
    return float((qa @ ka.transpose(-2, -1)).max()) / math.sqrt(q.shape[-1])


def sdpa_tolerances(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[float, float]:
    """(weights tolerance, output tolerance) for a student result in q's dtype.

    float64: the contract's 1e-10 (rounding there is about 1e-15). float32: the
    rounding error of a score grows with its size, and a weight's error with
    its score's error, so 1e-6 x (1 + largest possible |score|); the output
    adds the values' size. Measured errors of correct float32 solutions (the
    reference, einsum, loops, logsumexp, float64 inside) stay below 5e-8 of
    these scales, so the tolerance has a 20x margin and is still 1000x smaller
    than what any catalogued mistake produces.
    """
    if q.dtype == torch.float64:
        return 1e-10, 1e-10
    scale = 1.0 + scores_bound(q, k)
    return 1e-6 * scale, 1e-6 * scale * max(1.0, float(v.double().abs().max()))


def value_range(v: torch.Tensor, n_q: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-feature min and max over the keys of v, broadcast to (..., n_q, d_v)."""
    lo = v.double().amin(dim=-2, keepdim=True)
    hi = v.double().amax(dim=-2, keepdim=True)
    shape = (*v.shape[:-2], n_q, v.shape[-1])
    return lo.expand(shape), hi.expand(shape)


def expect_attends(q, k, v, mask, out, weights, where: str) -> None:
    """Properties a do-nothing answer fails: the weights follow the scores q·k (a larger score, a larger
    weight) and the output is the weights' average of v (out = weights @ v, with the student's own weights)."""
    scores = q.double() @ k.double().transpose(-2, -1)                         # (..., n_q, n_k), order only
    w = as_float64(weights)
    blocked = None if mask is None else torch.as_tensor(mask).expand(scores.shape)
    expect_follows_scores(scores.expand(w.shape) if w.dim() >= scores.dim() else scores, w,
                          f"the attention weights for {where}", blocked=blocked)
    mixed = w @ v.double()                                                      # (..., n_q, d_v)
    # float32: weights within ~1e-6 and |v| up to a few units, summed over at most 12 keys
    tol = 1e-12 if q.dtype == torch.float64 else 1e-4 * (1 + float(v.abs().max()))
    expect_close(as_float64(out, f"the attention output for {where}"), mixed, f"the attention output for {where} against "
                 "(your weights) @ v", atol=tol, hint="Each output row is the weighted average of the rows of v "
                 "with that query's weights: output = weights @ v.")


def expect_reference_values(reference, q, k, v, mask, out, weights, where: str) -> None:
    """The same call's weights and output equal the float64 reference's (within sdpa_tolerances): a property
    test (zeros where blocked, q's dtype kept, rows summing to 1) pays only together with correct values."""
    want_out, want_w = reference.scaled_dot_product_attention(q.double(), k.double(), v.double(), mask)
    tol_w, tol_out = sdpa_tolerances(q, k, v)
    expect_close(as_float64(weights), want_w, f"the attention weights for {where}", atol=tol_w,
                 hint="(This test checks a property, and pays only when the values of the same call are right too.)")
    expect_close(as_float64(out, f"the attention output for {where}"), want_out, f"the attention output for {where}", atol=tol_out)


def own_blocked_row(student, n_k: int, dtype) -> torch.Tensor | None:
    """What the student's own ``softmax`` gives for one all -inf row of ``n_k`` scores (float64), when that is
    not the contract's zeros (a softmax without the all -inf guard gives NaN); None when it is, or raises."""
    try:
        row = as_float64(student.softmax(torch.full((n_k,), float("-inf"), dtype=dtype)))
    except Exception:  # noqa: BLE001 - a softmax that raises here is charged by softmax's own tests
        return None
    if tuple(row.shape) != (n_k,) or bool((row == 0).all()):
        return None
    return row


def _same(got: torch.Tensor, want: torch.Tensor, atol: float) -> bool:
    """NaN exactly where ``want`` has NaN (NaN is NaN on every CPU; its payload is not compared), and the
    finite entries within ``atol``."""
    nan = torch.isnan(want)
    if not torch.equal(torch.isnan(got), nan):
        return False
    return bool(((got - want).abs()[~nan] <= atol).all())


def excuse_own_softmax(student, q, k, v, mask, out, weights) -> tuple[torch.Tensor, torch.Tensor]:
    """(output, weights) as float64, the rows of each fully blocked query set to the contract's zeros when they
    are exactly what the student's own softmax gives for an all -inf row, and that row @ v.

    scaled_dot_product_attention calls the student's softmax (the contract allows it); a softmax without the
    all -inf guard gives NaN there, and softmax's own test (test_all_neg_inf_slice) charges that mistake, so
    these tests do not charge it again. Rows that differ from it (a -1e9 fill's equal weights, NaN beside a
    guarded softmax) are left as they are, and fail as before. Every other query is graded as it was returned.
    """
    w = as_float64(weights)
    o = as_float64(out, "the attention output")
    if mask is None or w.dim() < 2 or tuple(o.shape[:-1]) != tuple(w.shape[:-1]) or w.shape[-1] != k.shape[-2]:
        return o, w
    try:
        blocked = torch.as_tensor(mask).expand(w.shape).all(-1)  # (..., n_q): every key blocked
    except RuntimeError:
        return o, w
    if not bool(blocked.any()):
        return o, w
    row = own_blocked_row(student, k.shape[-2], q.dtype)
    if row is None:
        return o, w
    values = v.double().expand(*w.shape[:-2], *v.shape[-2:])  # (..., n_k, d_v), aligned with the weights
    tol_w, tol_out = sdpa_tolerances(q, k, v)
    for index in blocked.nonzero().tolist():
        *lead, i = index
        want_out = row @ values[tuple(lead)]
        if not (_same(w[(*lead, i)], row, tol_w) and _same(o[(*lead, i)], want_out, tol_out)):
            return o, w
    w, o = w.clone(), o.clone()
    w[blocked] = 0.0
    o[blocked] = 0.0
    return o, w


def own_softmax_grad_v(student, reference, q, k, v, mask, g_out) -> torch.Tensor | None:
    """The gradient with respect to v that the reference gives when each fully blocked query's weights are the
    student's own softmax of an all -inf row (NaN for a softmax without the guard): weightsᵀ @ g_out. None when
    the student's softmax returns the contract's zeros there (then the reference's gradient is the answer)."""
    row = own_blocked_row(student, k.shape[-2], q.dtype)
    if row is None or mask is None:
        return None
    _, w = reference.scaled_dot_product_attention(q.double(), k.double(), v.double(), mask)
    blocked = torch.as_tensor(mask).expand(w.shape).all(-1)
    w = w.clone()
    w[blocked] = row
    grad = w.transpose(-2, -1) @ g_out.double()
    return grad.sum_to_size(v.shape)


def same_with_nan(got: torch.Tensor, want: torch.Tensor, atol: float) -> bool:
    """``got`` equals ``want``: NaN exactly where ``want`` has NaN, finite entries within ``atol``."""
    return tuple(got.shape) == tuple(want.shape) and _same(got.double(), want.double(), atol)
