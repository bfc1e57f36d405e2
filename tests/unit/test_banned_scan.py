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
