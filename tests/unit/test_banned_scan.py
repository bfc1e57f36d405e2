"""The grader's reading of banned names (autograder/banned.py): which of the file's functions a banned name
reaches, however the file binds it. The red team's (2026-12-05): a ``for`` loop at the top level bound PyTorch's
softmax where the scan did not look (100 points instead of 11); an int of 4,000 hex digits made the scan crash."""

from __future__ import annotations

import pytest

from autograder.banned import MODULE_LEVEL, refers_to, scan_source
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


def test_top_level_code_charges_no_function():
    source = "import torch\n_f = None\nprint(torch.softmax(torch.zeros(2), 0))\n"
    found = scan_source(source + FUNCTIONS, BANNED)
    assert set(found) == {MODULE_LEVEL}, found


def test_a_name_that_once_held_a_banned_function_keeps_it():
    """Bindings are read in no order (the scan does not run the file): `_g = _f` before `_f = None` still holds
    PyTorch's softmax (the review's, round 5), so a name that ever held one counts."""
    source = "import torch\n_f = torch.softmax\n_g = _f\n_f = None\n\n\ndef softmax(x, dim=-1):\n    return _g(x, dim)\n"
    assert "torch.softmax" in scan_source(source, BANNED).get("softmax", {})


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


CORRECT = "import torch\n\n\ndef softmax(x, dim=-1):\n    e = (x - x.amax(dim, keepdim=True)).exp()\n    return e / e.sum(dim, keepdim=True)\n"
MAIN_CHECKS = {  # the review's (round 5): self-checks a student keeps in the file, each scored 19 after round 4
    "model.eval()": "    m = torch.nn.Linear(2, 2)\n    m.eval()\n    print(torch.softmax(torch.zeros(2), 0))\n",
    "re-imports torch": "    import torch\n    x = torch.randn(3, 4)\n    print(torch.allclose(softmax(x), torch.softmax(x, -1)))\n",
    "imports F": "    import torch.nn.functional as F\n    print(F.softmax(torch.zeros(2), 0))\n",
    "sets a global": "    DEVICE = 'cpu'\n    print(torch.softmax(torch.zeros(2, device=DEVICE), 0))\n",
    "walrus": "    print((y := torch.softmax(torch.zeros(2), 0)))\n",
    "dict with the name": "    out = {'softmax': softmax(torch.zeros(2))}\n    print(out['softmax'])\n",
}


@pytest.mark.parametrize("check", list(MAIN_CHECKS), ids=list(MAIN_CHECKS))
def test_a_self_check_under_main_charges_no_function(check):
    source = CORRECT + "\n\nDEVICE = 'cpu'\n\n\nif __name__ == '__main__':\n" + MAIN_CHECKS[check]
    found = scan_source(source, BANNED)
    assert "softmax" not in found, found  # names the block binds (`y`) may be listed: no test calls them


EVASIONS = {  # the review's (round 5): each reached PyTorch's softmax unseen
    "parameter named like a class": "class x:\n    pass\n\n\ndef softmax(x, dim=-1):\n    return x.softmax(dim)\n",
    "class of torch.Tensor": "class T(torch.Tensor):\n    pass\n\n\ndef softmax(x, dim=-1):\n    return T.softmax(x, dim)\n",
    "class name rebound": "class F:\n    pass\n\n\nimport torch.nn.functional as F\n\n\ndef softmax(x, dim=-1):\n    return F.softmax(x, dim)\n",
    "attribute set on the class": "class ops:\n    pass\n\n\nops.softmax = torch.softmax\n\n\ndef softmax(x, dim=-1):\n    return ops.softmax(x, dim)\n",
    "dict item": "_fns = {}\n_fns['f'] = torch.softmax\n\n\ndef softmax(x, dim=-1):\n    return _fns['f'](x, dim)\n",
    "namespace attribute": "import types\nns = types.SimpleNamespace()\nns.f = torch.softmax\n\n\ndef softmax(x, dim=-1):\n    return ns.f(x, dim)\n",
    "list append": "_l = []\n_l.append(torch.softmax)\n\n\ndef softmax(x, dim=-1):\n    return _l[0](x, dim)\n",
    "global in a function never run": "_f = torch.softmax\n\n\ndef _never():\n    global _f\n    _f = None\n\n\ndef softmax(x, dim=-1):\n    return _f(x, dim)\n",
    "class body reading the global": "sm = torch.softmax\n\n\nclass Ops:\n    sm = sm\n\n\ndef softmax(x, dim=-1):\n    return Ops.sm(x, dim)\n",
    "walrus in a comprehension": "_ = [(_f := torch.softmax) for _ in 'a']\n\n\ndef softmax(x, dim=-1):\n    return _f(x, dim)\n",
    "vars().get": "def softmax(x, dim=-1):\n    return vars(torch).get('softmax')(x, dim)\n",
    "__getattribute__": "def softmax(x, dim=-1):\n    return torch.__getattribute__('softmax')(x, dim)\n",
    "attrgetter": "import operator\n\n\ndef softmax(x, dim=-1):\n    return operator.attrgetter('softmax')(torch)(x, dim)\n",
    "builtins.getattr": "import builtins\n\n\ndef softmax(x, dim=-1):\n    return builtins.getattr(torch, 'softmax')(x, dim)\n",
    "star import": "from torch.nn.functional import *\n\n\ndef attend(q, k, v):\n    return scaled_dot_product_attention(q, k, v)\n",
}


@pytest.mark.parametrize("case", list(EVASIONS), ids=list(EVASIONS))
def test_evasions_of_the_review_are_read(case):
    banned = BANNED + ["torch.nn.functional.scaled_dot_product_attention"]
    found = scan_source("import torch\n\n\n" + EVASIONS[case], banned)
    graded = "attend" if "attend" in EVASIONS[case] else "softmax"
    assert found.get(graded), found


def test_the_most_specific_name_is_reported():
    found = scan_source(
        "import torch\n\n\ndef softmax(x, dim=-1):\n    return torch._log_softmax(x, dim, False).exp()\n",
        BANNED + ["torch.log_softmax"],
    )
    assert list(found["softmax"]) == ["torch.log_softmax"]


NOT_CHARGED = {  # the second review's (round 5) false positives: correct code, each graded function listed
    "import line shared": ("from torch.nn.functional import pad, softmax as ref_softmax\n\n\n"
                           "def padding_mask(lengths, n):\n    return pad(lengths, (0, 1)) > 0\n\n\n"
                           "def _check(x):\n    return ref_softmax(x, -1)\n", "padding_mask"),
    "add in a main block": ("def softmax(x, dim=-1):\n    e = x.exp()\n    return e / e.sum(dim, keepdim=True)\n\n\n"
                            "if __name__ == '__main__':\n    x = torch.zeros(3)\n"
                            "    print(softmax(x).add(-torch.softmax(x, -1)).abs().max())\n"
                            "    print(torch.softmax(x, -1).add(-softmax(x)).abs().max())\n", "softmax"),
    "setattr(self) in a module": ("class MHA(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                                  "        setattr(self, 'in_proj_bias', None)\n\n    def forward(self, x):\n"
                                  "        out = x.exp()\n        return out / out.sum(-1, keepdim=True)\n\n\n"
                                  "out = torch.softmax(torch.zeros(2), 0)\n", "MHA"),
    "own method through self.core": ("class Core:\n    def softmax(self, x, dim=-1):\n        e = x.exp()\n"
                                     "        return e / e.sum(dim, keepdim=True)\n\n\nclass Attn(torch.nn.Module):\n"
                                     "    def __init__(self):\n        super().__init__()\n        self.core = Core()\n\n"
                                     "    def forward(self, x):\n        return self.core.softmax(x)\n", "Attn"),
    "own method through an instance": ("class Stable:\n    def softmax(self, x, dim=-1):\n        e = x.exp()\n"
                                       "        return e / e.sum(dim, keepdim=True)\n\n\n_ops = Stable()\n\n\n"
                                       "def softmax(x, dim=-1):\n    return _ops.softmax(x, dim) + Stable().softmax(x, dim) * 0\n", "softmax"),
    "star import then own def": ("from torch.nn.functional import *\n\n\ndef softmax(x, dim=-1):\n    e = x.exp()\n"
                                 "    return e / e.sum(dim, keepdim=True)\n", "softmax"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(NOT_CHARGED), ids=list(NOT_CHARGED))
def test_the_second_reviews_correct_code_is_not_charged(case):
    source, graded = NOT_CHARGED[case]
    found = scan_source("import torch\n\n\n" + source, BANNED)
    assert graded not in found, found


CAUGHT = {  # the second review's evasions: each reached PyTorch's softmax unseen
    "a parameter named self": "def softmax(self, dim=-1):\n    return self.softmax(dim)\n",
    "a class that deletes its method": "class T(torch.Tensor):\n    def softmax(self):\n        pass\n\n    del softmax\n\n\n"
                                       "def softmax(x, dim=-1):\n    return T.softmax(x, dim)\n",
    "an alias as the graded name": "softmax = torch.softmax\n",
    "a lambda as the graded name": "softmax = lambda x, dim=-1: torch.softmax(x, dim)\n",
    "imported as the graded name": "from torch.nn.functional import softmax\n",
    "a def under if": "if True:\n    def softmax(x, dim=-1):\n        return torch.softmax(x, dim)\n",
    "sys.modules": "import sys\n\n\ndef softmax(x, dim=-1):\n    return x\n\n\nsys.modules[__name__].softmax = torch.softmax\n",
    "stored by a helper run at import": "_T = {}\n\n\ndef _init():\n    _T['f'] = torch.softmax\n\n\n_init()\n\n\n"
                                        "def softmax(x, dim=-1):\n    return _T['f'](x, dim)\n",
    "set on the function by a helper": "def softmax(x, dim=-1):\n    return softmax.impl(x, dim)\n\n\n"
                                       "def _init():\n    softmax.impl = torch.softmax\n\n\n_init()\n",
    "match on attributes": "def softmax(x, dim=-1):\n    match torch:\n        case object(softmax=f):\n            return f(x, dim)\n",
    "reduce(getattr)": "import functools\n\n\ndef softmax(x, dim=-1):\n"
                       "    return functools.reduce(getattr, ['nn', 'functional', 'softmax'], torch)(x, dim)\n",
    "dir() scan": "def softmax(x, dim=-1):\n    return [getattr(torch, n) for n in dir(torch) if n == 'softmax'][0](x, dim)\n",
    "nn.LogSoftmax": "def softmax(x, dim=-1):\n    return torch.nn.LogSoftmax(dim)(x).exp()\n",
    "torch._C._special": "def softmax(x, dim=-1):\n    return torch._C._special.special_softmax(x, dim, None)\n",
}  # fmt: skip


@pytest.mark.parametrize("case", list(CAUGHT), ids=list(CAUGHT))
def test_the_second_reviews_evasions_are_read(case):
    found = scan_source("import torch\n\n\n" + CAUGHT[case], BANNED + ["torch.log_softmax"])
    assert found.get("softmax"), found


def test_thousands_of_chained_aliases_cost_about_a_second():
    """A 1 MB upload is allowed: the scan and the grader's reading of calls walk each reference once."""
    import time

    n = 20_000
    source = "import torch\n" + "".join(f"a{i} = a{i + 1}\n" for i in range(n)) + f"a{n} = torch.softmax\n"
    source += "def softmax(x, dim=-1):\n    return a0(x, dim)\n"
    started = time.process_time()
    assert "softmax" in scan_source(source, BANNED) and len(refers_to(source)["softmax"]) == n + 1
    assert time.process_time() - started < 8.0
