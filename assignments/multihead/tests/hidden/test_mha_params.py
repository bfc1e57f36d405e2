"""MultiHeadAttention: parameters named and shaped like nn.MultiheadAttention."""

import pytest
import torch
from support_multihead import random_torch_mha, state_dict_of
from torch import nn

from autograder.checks import expect_close, expect_raises, expect_true

pytestmark = pytest.mark.grades("MultiHeadAttention")  # the function these tests grade (summary, dashboard, pytest -m)


@pytest.mark.parametrize("bias", [True, False], ids=["bias=True", "bias=False"])
def test_parameter_names_and_shapes(student, gen, bias):
    """MultiHeadAttention: parameter names and shapes match nn.MultiheadAttention; strict loading works"""
    d, h = 16, 4
    want = {k: tuple(v.shape) for k, v in nn.MultiheadAttention(d, h, bias=bias, batch_first=True).state_dict().items()}
    m = student.MultiHeadAttention(d, h, bias=bias)
    got = {k: tuple(v.shape) for k, v in m.state_dict().items()}

    got_shapes = [f"{k} {v}" for k, v in sorted(got.items())]
    missing = sorted(set(want) - set(got))
    extra = sorted(set(got) - set(want))
    expect_true(
        not missing and not extra,
        f"MultiHeadAttention({d}, {h}, bias={bias}).state_dict(): expected exactly the keys {sorted(want)}, "
        f"got {sorted(got)}" + (f"; missing {missing}" if missing else "") + (f"; unexpected {extra}" if extra else "")
        + ". Use one in_proj_weight (3d, d) for W_Q, W_K, W_V stacked, an in_proj_bias (3d,) only when bias=True, "
        "and an nn.Linear(d, d, bias=bias) named out_proj.",
        got=got_shapes,
    )
    wrong = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
    expect_true(
        not wrong,
        f"MultiHeadAttention({d}, {h}, bias={bias}): wrong parameter shapes (got, expected): {wrong}. "
        "in_proj_weight is (3*d_model, d_model) whatever the number of heads: heads split the width.",
        got=got_shapes,
    )
    mha = random_torch_mha(d, h, bias, gen)
    sd = state_dict_of(mha, torch.float32)
    m.load_state_dict(sd, strict=True)
    loaded = m.state_dict()
    for k, v in sd.items():
        # exact: loading copies the numbers
        expect_close(loaded[k], v, f"MultiHeadAttention.state_dict()['{k}'] after load_state_dict", atol=0.0)


@pytest.mark.parametrize("h", [1, 2, 4, 8], ids=[f"h={h}" for h in (1, 2, 4, 8)])
def test_parameter_count(student, h):
    """MultiHeadAttention: 4d² + 4d = 16,640 parameters at d_model=64, whatever the number of heads"""
    m = student.MultiHeadAttention(64, h)
    sd = m.state_dict()
    count = sum(int(v.numel()) for v in sd.values())
    expect_true(
        count == 16640,
        f"MultiHeadAttention(64, {h}): {count} numbers in the state_dict, expected 4*64*64 + 4*64 = 16,640 "
        "(the course's table: the same for 1, 2, 4 and 8 heads). More heads do not add weights: each head "
        f"works in a d/h = {64 // h} dimensional slice of the same W_Q, W_K, W_V, W_O.",
        got=count,
    )


def test_init_value_error(student):
    """MultiHeadAttention: ValueError when d_model is not divisible by n_heads (and none when it is)"""
    expect_raises(lambda: student.MultiHeadAttention(10, 4), (ValueError,), "MultiHeadAttention(10, 4)")
    expect_raises(lambda: student.MultiHeadAttention(6, 4, bias=False), (ValueError,), "MultiHeadAttention(6, 4, bias=False)")
    # a valid call next to it returns: ValueError on every call would otherwise pass (a stub that raises it earns nothing)
    student.MultiHeadAttention(8, 4, bias=False)
