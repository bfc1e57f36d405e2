"""MultiHeadAttention: gradients flow to the inputs and to every parameter, as in torch."""

import pytest
import torch
from support_multihead import (
    case,
    random_mask,
    random_torch_mha,
    state_dict_of,
    student_mha,
    torch_gradients,
)

from autograder.checks import expect_close, expect_true

pytestmark = pytest.mark.grades("MultiHeadAttention")  # the function these tests grade (summary, dashboard, pytest -m)

B, H, D, N_Q, N_K = 2, 4, 16, 5, 7


def _setup(student, gen, bias):
    mha = random_torch_mha(D, H, bias, gen)
    sd = state_dict_of(mha)
    q = torch.randn(B, N_Q, D, generator=gen, dtype=torch.float64)
    k = torch.randn(B, N_K, D, generator=gen, dtype=torch.float64)
    v = torch.randn(B, N_K, D, generator=gen, dtype=torch.float64)
    mask = random_mask((B, 1, N_Q, N_K), gen)
    g_out = torch.randn(B, N_Q, D, generator=gen, dtype=torch.float64)       # upstream gradient of out
    g_w = torch.randn(B, H, N_Q, N_K, generator=gen, dtype=torch.float64)    # upstream gradient of weights
    m = student_mha(student, D, H, bias, sd)
    got = student.gradients(m, q, k, v, wrt=(0, 1, 2), grad_outputs=[g_out, g_w], params=True, mask=mask)
    want = torch_gradients(sd, D, H, bias, (q, k, v), mask, [g_out, g_w])
    return got, want


def _reached(params):
    """Names of the parameters with a non-zero gradient."""
    return sorted(k for k, g in (params or {}).items() if g is not None and bool(torch.as_tensor(g).abs().sum() > 0))


@pytest.mark.parametrize("bias", [True, False], ids=["bias=True", "bias=False"])
def test_gradients_reach_every_parameter(student, gen, bias):
    """MultiHeadAttention: backward gives a gradient to every parameter (in_proj_*, out_proj.*)"""
    got, want = _setup(student, gen, bias)
    params = got["params"] or {}
    for name in want["params"]:
        g = params.get(name)
        expect_true(
            g is not None and bool(torch.as_tensor(g).abs().sum() > 0),
            f"MultiHeadAttention({D}, {H}, bias={bias}), {case(B, H, D, N_Q, N_K)}: parameter '{name}' got "
            f"{'no gradient' if g is None else 'an all-zero gradient'} from backward (parameters with gradients: "
            f"{sorted(k for k, v in params.items() if v is not None)}). Is it an nn.Parameter (not a buffer or a "
            "plain tensor), used in forward (not skipped or detached)?",
            got=_reached(params),
        )


@pytest.mark.parametrize("bias", [True, False], ids=["bias=True", "bias=False"])
def test_gradients_match_torch(student, gen, bias):
    """MultiHeadAttention: gradients of query, key, value and every parameter equal torch's (float64)"""
    got, want = _setup(student, gen, bias)
    where = f"MultiHeadAttention({D}, {H}, bias={bias}) in float64, {case(B, H, D, N_Q, N_K)}, mask (B, 1, n_q, n_k)"
    for i, name in enumerate(("query", "key", "value")):
        expect_true(got["inputs"][i] is not None,
                    f"{where}: no gradient reached `{name}`; the output must depend on it through autograd.")
        # 1e-9: float64 backward through the same formula; sums of a few hundred terms
        expect_close(got["inputs"][i], want["inputs"][i], f"{where}: gradient with respect to {name}", atol=1e-9,
                     hint="A wrong gradient with a correct forward is rare: check that forward matches torch first.")
    params = got["params"] or {}
    for name, g_want in want["params"].items():
        g = params.get(name)
        expect_true(g is not None, f"{where}: parameter '{name}' received no gradient.", got=_reached(params))
        expect_close(g, g_want, f"{where}: gradient of parameter '{name}'", atol=1e-9)
