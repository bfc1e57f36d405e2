"""The grader's reading of banned names (autograder/banned.py): which of the file's functions a banned name
reaches, however the file binds it. The red team's (2026-12-05): a ``for`` loop at the top level bound PyTorch's
softmax where the scan did not look (100 points instead of 11); an int of 4,000 hex digits made the scan crash."""

from __future__ import annotations

import pytest

from autograder.banned import MODULE_LEVEL, scan_source
from autograder.worker import guards

BANNED = ["torch.softmax", "torch.nn.functional.softmax", "torch.Tensor.softmax"]
FUNCTIONS = """
def softmax(x, dim=-1):
    return _f(x, dim)


def causal_mask(n):
    return torch.ones(n, n, dtype=torch.bool).triu(1)
"""


@pytest.mark.parametrize(
    "binding",
    [
        "for _f in [getattr(torch.softmax, '__wrapped__', torch.softmax)]:\n    pass",
        "if True:\n    _f = torch.softmax",
        "try:\n    _f = torch.softmax\nexcept Exception:\n    pass",
        "import contextlib\nwith contextlib.nullcontext(torch.softmax) as _f:\n    pass",
        "(_f := torch.softmax)",
        "_f = torch.softmax\n_f = _f",
        "_f = torch.softmax\nif False:\n    _f = None",
        "def _setup():\n    global _f\n    _f = torch.softmax\n\n\n_setup()",
    ],
    ids=["for", "if", "try", "with", "walrus", "rebound-to-itself", "maybe-rebound", "global-in-a-function"],
)
def test_a_banned_name_bound_by_any_statement_reaches_the_function_using_it(binding):
    found = scan_source("import torch\n" + binding + "\n" + FUNCTIONS, BANNED)
    assert "torch.softmax" in found.get("softmax", {}), found
    assert "causal_mask" not in found, "a function that uses nothing banned is not charged"


@pytest.mark.parametrize(
    "binding",
    ["globals()['_f'] = torch.softmax", "import sys\nsetattr(sys.modules[__name__], '_f', torch.softmax)"],
)
def test_a_banned_name_bound_out_of_sight_reaches_every_function(binding):
    """The scan cannot tell which name ``globals()`` or ``setattr`` binds: every function is charged."""
    found = scan_source("import torch\n" + binding + "\n" + FUNCTIONS, BANNED)
    assert "torch.softmax" in found.get("softmax", {}) and "torch.softmax" in found.get("causal_mask", {}), found


def test_a_replaced_binding_and_top_level_code_charge_no_function():
    source = "import torch\n_f = torch.softmax\n_f = lambda x, d: x\nprint(torch.softmax(torch.zeros(2), 0))\n"
    found = scan_source(source + FUNCTIONS, BANNED)
    assert set(found) == {MODULE_LEVEL}, found


def test_an_int_too_long_to_print_is_read_not_a_crash():
    source = "import torch\n\n\ndef _never_called():\n    return (0x" + "f" * 4000 + ").softmax\n"
    assert set(scan_source(source + FUNCTIONS.replace("_f(x, dim)", "_never_called()"), BANNED)) == {"_never_called", "softmax"}


def test_the_runtime_guard_does_not_hand_out_the_original():
    torch = pytest.importorskip("torch")
    original = torch.softmax
    with guards.active(["torch.softmax"]):
        assert not hasattr(torch.softmax, "__wrapped__")
        getattr(torch.softmax, "__wrapped__", torch.softmax)(torch.zeros(2), 0)
        assert guards.used() == ["torch.softmax"]
    assert torch.softmax is original


@pytest.mark.parametrize(
    "softmax",
    [
        "torch._safe_softmax(x, dim)",
        "torch._softmax(x, dim, False)",
        "torch.ops.aten._softmax(x, dim, False)",
        'vars(torch._C.TensorBase)["softmax"](x, dim)',
        'torch.Tensor.__dict__["softmax"](x, dim)',
    ],
)
def test_pytorchs_private_softmax_kernels_are_its_softmax(softmax):
    """The red team's (round 5): `torch._safe_softmax` and the unwrapped `Tensor.softmax` of `torch._C.TensorBase`
    scored 100 where `torch.softmax` scores 19: neither signal knew them."""
    source = f"import torch\n\n\ndef softmax(x, dim=-1):\n    return {softmax}\n"
    assert "torch.softmax" in scan_source(source, BANNED).get("softmax", {})


def test_private_attention_kernels_are_its_attention():
    source = "import torch\n\n\ndef attend(q, k, v):\n    return torch._scaled_dot_product_flash_attention_for_cpu(q, k, v)[0]\n"
    assert scan_source(source, ["torch.nn.functional.scaled_dot_product_attention"]).get("attend")


@pytest.mark.parametrize(
    "source",
    [
        # a correct softmax kept in a namespace class of the file's own: calling your own functions is fine
        "import torch\n\n\nclass ops:\n    @staticmethod\n    def softmax(x, dim):\n        e = (x - x.amax(dim, keepdim=True)).exp()\n"
        "        return e / e.sum(dim, keepdim=True)\n\n\ndef softmax(x, dim=-1):\n    return ops.softmax(x, dim)\n",
        # a self-check against PyTorch that never runs when graded: its `x` is not softmax's parameter `x`
        "import torch\n\n\ndef softmax(x, dim=-1):\n    e = (x - x.amax(dim, keepdim=True)).exp()\n    return e / e.sum(dim, keepdim=True)\n\n\n"
        'if __name__ == "__main__":\n    x = torch.randn(2, 5)\n    print((softmax(x) - torch.softmax(x, dim=-1)).abs().max())\n',
    ],
    ids=["own-class", "main-block-check"],
)
def test_correct_code_is_not_charged(source):
    """The red team's false positives (round 5): both scored 19 for a correct file (81 points lost)."""
    assert "softmax" not in scan_source(source, BANNED), scan_source(source, BANNED)


@pytest.mark.parametrize(
    "binding",
    [
        "def softmax(x, dim=-1, f=torch.softmax):\n    return f(x, dim)",
        "_f = torch.softmax\n\n\ndef softmax(x, dim=-1, f=_f):\n    return f(x, dim)",
        "def _wrap(g):\n    return lambda x, dim=-1: torch.softmax(x, dim)\n\n\n@_wrap\ndef softmax(x, dim=-1):\n    return x",
        "class ops:\n    softmax = torch.softmax\n\n\ndef softmax(x, dim=-1):\n    return ops.softmax(x, dim)",
    ],
    ids=["default", "default-alias", "decorator", "own-class-holding-it"],
)
def test_what_a_def_evaluates_in_the_modules_scope_is_read(binding):
    assert "torch.softmax" in scan_source("import torch\n\n\n" + binding + "\n", BANNED).get("softmax", {})
