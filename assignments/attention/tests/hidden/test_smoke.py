import torch
from autograder.checks import expect_close


def test_softmax_small(student, reference, gen):
    """softmax: matches the float64 reference"""
    x = torch.randn(4, 7, generator=gen, dtype=torch.float64)
    expect_close(student.softmax(x), reference.softmax(x), "softmax(x)", atol=1e-12, call={"fn": "softmax", "args": (x,), "kwargs": {}})


def test_causal(student):
    """causal_mask: True above the diagonal"""
    expect_close(student.causal_mask(4), torch.ones(4, 4, dtype=torch.bool).triu(1), "causal_mask(4)")
