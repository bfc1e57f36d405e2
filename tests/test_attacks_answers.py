"""The answer's form is evidence: attacks that return the right *form* of nothing, graded end to end.

Each attack is a reference solution changed so that it computes nothing it is paid for, next to a
baseline that is exactly as wrong without the trick; the attack must earn no point the baseline does
not (per test), on every assignment, through ``grade-all`` with namespaces and without them
(``KIT_NO_NAMESPACES=1``, as on Gradescope most likely), and for ``attention`` through the Gradescope
entry point too:

* ``bool``: every function and method of the reference whose answer holds floating-point values
  returns ``answer != 0`` instead (True where the answer is non-zero: a bool tensor of the right
  shape). Baseline: the same answers, of their float dtype, plus a ramp (wrong values, the right kind and
  shape; the code's side effects, such as a cache it fills, and the errors it raises are the same in both).
* ``forged-raise`` (multihead): every ``ValueError`` raised as ``RuntimeError("raised ValueError ...")``,
  or as a RuntimeError subclass that calls itself ``builtins.ValueError``. Baseline: plain RuntimeError.
  A ValueError subclass with another name is a ValueError: it scores what the reference scores.
* ``forged-no-grad`` (transformer): no torch.no_grad() in train and generate, and the probe model's
  log of torch.is_grad_enabled() rewritten to say it was off. Baseline: the same without the rewrite.
* ``stub-value-error`` (multihead, decoding): the stub, raising ValueError instead of NotImplementedError in
  every function: the tests that only asked for a ValueError paid it (6 and 3 points, the red team's,
  2026-12-05). ``stub-forged-worker``: the stub, with the worker's own code that describes an exception
  patched to call every exception a ValueError (what the worker says of an exception is the student's word).
  Baseline: the stub, which earns nothing.
* ``banned-loop`` (attention): softmax is PyTorch's, bound at the top level by a ``for`` loop (a statement the
  banned-name scan did not read as binding a name) from the runtime guard's ``__wrapped__`` (the original
  function, which ``functools.wraps`` hands out): 100 points, the red team's, 2026-12-05. Baseline:
  ``banned-plain``, the same softmax bound by a plain assignment. ``hex-scan``: the reference with an uncalled
  function naming ``(0xfff...).softmax`` (4,000 digits: ``ast.unparse`` cannot write it back) must score 100
  (it was "an internal error"). Round 5: ``banned-private`` (``torch._safe_softmax``) and ``banned-unwrapped``
  (``vars(torch._C.TensorBase)["softmax"]``) scored 100 against ``banned-plain``'s 19; ``main-block-check``
  (the reference and a ``__main__`` self-check against ``torch.softmax``) scored 19 and must score 100.
* ``property`` (every assignment): the cheapest answer with a property a hidden test pays for (``_PROPERTY``).
  Baseline: do_nothing.py's constant in the same function.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import KIT, reference_source, validate_results

from autograder.config import list_assignments, load_assignment
from autograder.release import gradescope_sim
from autograder.sandbox import running_as_root

pytestmark = [
    pytest.mark.skipif(not running_as_root(), reason="attacks are graded as root, as on Gradescope and CI"),
    pytest.mark.proof,
]

# Appended to a reference: wraps every function and public method defined in the module so that an
# answer holding floating-point values, when it leaves the module, is replaced (``_kit_replace``).
_WRAP = '''

import functools as _kit_functools
import inspect as _kit_inspect

import numpy as _kit_np
import torch as _kit_torch


def _kit_replace(x):
    """x != 0 (mode bool), or x plus a ramp 1, 1.37, 1.74... over its entries (mode ramp: wrong values of the
    right kind and shape, which no reordering or comparison of the code with itself turns right)."""
    if _KIT_MODE == "bool":
        return x != 0
    if isinstance(x, float) or isinstance(x, _kit_np.floating):
        return x + 1.37
    ramp = 1 + 0.37 * _kit_np.arange(x.size if isinstance(x, _kit_np.ndarray) else x.numel()).reshape(x.shape)
    return x + (_kit_torch.as_tensor(ramp, dtype=x.dtype) if isinstance(x, _kit_torch.Tensor) else ramp)


def _kit_boolify(x):
    """(changed?, x with every floating-point tensor, array and number replaced: ``_kit_replace``)."""
    if isinstance(x, _kit_torch.Tensor) and x.is_floating_point():
        return True, _kit_replace(x.detach())
    if isinstance(x, _kit_np.ndarray) and x.dtype.kind == "f":
        return True, _kit_replace(x)
    if isinstance(x, float) or isinstance(x, _kit_np.floating):
        return True, _kit_replace(x) if _KIT_MODE != "bool" else bool(x != 0)
    if isinstance(x, (tuple, list)) and type(x) in (tuple, list):
        parts = [_kit_boolify(v) for v in x]
        return any(c for c, _ in parts), type(x)(v for _, v in parts)
    if isinstance(x, dict) and type(x) is dict:
        parts = {k: _kit_boolify(v) for k, v in x.items()}
        return any(c for c, _ in parts.values()), {k: v for k, (_, v) in parts.items()}
    return False, x


def _kit_from_inside():
    """Whether the wrapped function was called by this module's own code (through torch's Module.__call__
    or not): the module computes with true values; only what leaves it is replaced."""
    import sys as _sys

    frame = _sys._getframe(2)
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("torch"):
        frame = frame.f_back
    return frame is not None and frame.f_globals is globals()


def _kit_wrap(fn):
    @_kit_functools.wraps(fn)
    def wrapper(*args, **kwargs):
        answer = fn(*args, **kwargs)
        if _kit_from_inside():
            return answer
        return _kit_boolify(answer)[1]
    return wrapper


def _kit_wrap_module():
    for _name, _value in list(globals().items()):
        if _name.startswith("_") or getattr(_value, "__module__", None) != __name__:
            continue
        if _kit_inspect.isfunction(_value):
            globals()[_name] = _kit_wrap(_value)
        elif _kit_inspect.isclass(_value):
            for _attr, _member in list(vars(_value).items()):
                if _kit_inspect.isfunction(_member) and (_attr == "forward" or not _attr.startswith("_")):
                    setattr(_value, _attr, _kit_wrap(_member))


_kit_wrap_module()
'''


def _wrapped(assignment: str, mode: str) -> str:
    return reference_source(assignment) + f"\n_KIT_MODE = {mode!r}\n" + _WRAP


def _forged_raises(style: str) -> str:
    source = reference_source("multihead")
    assert "raise ValueError(" in source
    if style == "message":
        return source.replace("raise ValueError(", 'raise RuntimeError("raised ValueError: " + ')
    if style == "qualname":
        fake = '\n\nclass _KitFake(RuntimeError):\n    __module__ = "builtins"\n    __qualname__ = "ValueError"\n'
        return source.replace("raise ValueError(", "raise _KitFake(") + fake
    if style == "subclass":
        return source.replace("raise ValueError(", "raise ShapeError(") + "\n\nclass ShapeError(ValueError):\n    pass\n"
    return source.replace("raise ValueError(", "raise RuntimeError(")


_FORGE_LOG = """

_kit_generate, _kit_train = generate, train


def _kit_forge(model):
    try:
        real = model.call_log
    except AttributeError:
        return
    model.call_log = lambda: [dict(c, grad_enabled=False) if isinstance(c, dict) else c for c in real()]


def generate(model, prompt, n_new):
    _kit_forge(model)
    return _kit_generate(model, prompt, n_new)


def train(model, *args, **kwargs):
    _kit_forge(model)
    return _kit_train(model, *args, **kwargs)
"""


# Appended to a stub: the worker's code that describes the student's exceptions, found in sys.modules and
# patched to call every exception a ValueError.
_FORGE_WORKER = """

import sys as _kit_sys

for _kit_module in list(_kit_sys.modules.values()):
    if hasattr(_kit_module, "exception_classes") and hasattr(_kit_module, "describe_exception"):
        _kit_module.exception_classes = lambda cls: ["builtins.ValueError", "builtins.Exception", "builtins.BaseException"]
        _kit_describe = _kit_module.describe_exception

        def _kit_as_value_error(exc, *args, _kit_describe=_kit_describe):
            described = _kit_describe(exc, *args)
            described["type"] = "ValueError"
            return described

        _kit_module.describe_exception = _kit_as_value_error
"""


def _stub(assignment: str) -> str:
    module = load_assignment(assignment, KIT).module
    return (KIT / "student_template" / assignment / f"{module}.py").read_text()


_TORCH_SOFTMAX = '''
def softmax(x, dim=-1):
    """PyTorch's own softmax, with the all -inf slices set to 0."""
    blocked = torch.isneginf(x).all(dim=dim, keepdim=True)
    return _f(x.masked_fill(blocked, 0.0), dim).masked_fill(blocked, 0.0)
'''


def _banned_softmax(binding: str) -> str:
    """attention's reference, its softmax replaced by PyTorch's, bound to ``_f`` by ``binding``."""
    source = reference_source("attention")
    start = source.index("def softmax(")
    end = source.index("\ndef ", start + 1)
    return source[:start] + binding + "\n" + _TORCH_SOFTMAX + source[end:]


def _without_no_grad(forge: bool) -> str:
    source = reference_source("transformer")
    assert source.count("with torch.no_grad():") >= 2
    source = "import contextlib\n" + source.replace("with torch.no_grad():", "with contextlib.nullcontext():")
    return source + (_FORGE_LOG if forge else "")


# Round 6 (the red team's, 2026-12-05): the cheapest answer with a property a hidden test pays for, appended to the
# reference (a later definition wins), against do_nothing.py's constant in the same place. Each earned 3 to 9
# points more than the constant (an all-True causal mask, uniform weights and zero outputs, a seeded randn table,
# unit rows without an SVD, uniform draws from the generator, a bigram model, a loop that only nudges weights).
_PROPERTY = {
    "attention": (
        "def causal_mask(n):\n    return torch.ones(n, n, dtype=torch.bool)\n",
        "def causal_mask(n):\n    return torch.zeros(n, n, dtype=torch.bool)\n",
    ),
    "multihead": (
        "def sinusoidal_positions(n_positions, d_model):\n    if d_model % 2:\n        raise ValueError('odd d_model')\n"
        "    return torch.randn(n_positions, d_model, generator=torch.Generator().manual_seed(0))\n\n\n"
        "_Reference = MultiHeadAttention\n\n\nclass MultiHeadAttention(_Reference):\n"
        "    def forward(self, query, key, value, mask=None):\n        B, n_q, d = query.shape\n"
        "        w = torch.full((B, self.n_heads, n_q, key.shape[1]), 1.0 / key.shape[1], dtype=query.dtype)\n"
        "        return torch.zeros(B, n_q, d, dtype=query.dtype), w\n",
        "def sinusoidal_positions(n_positions, d_model):\n    if d_model % 2:\n        raise ValueError('odd d_model')\n"
        "    return torch.zeros(n_positions, d_model)\n\n\n"
        "_Reference = MultiHeadAttention\n\n\nclass MultiHeadAttention(_Reference):\n"
        "    def forward(self, query, key, value, mask=None):\n        raise NotImplementedError('forward')\n",
    ),
    "seq2seq": (
        "def attend(query, enc):\n    B, T, h = enc.shape\n"
        "    return enc.mean(dim=1), torch.full((B, T), 1.0 / T, dtype=enc.dtype)\n",
        "def attend(query, enc):\n    B, T, h = enc.shape\n"
        "    return torch.zeros(B, h, dtype=enc.dtype), torch.full((B, T), 1.0 / T, dtype=enc.dtype)\n",
    ),
    "embeddings": (
        "def svd_embeddings(M, k):\n    E = np.asarray(M, dtype=float)[:, :k] + np.eye(M.shape[0], k)\n"
        "    return E / np.linalg.norm(E, axis=1, keepdims=True)\n",
        "def svd_embeddings(M, k):\n    return np.zeros((M.shape[0], k))\n",
    ),
    "decoding": (
        "def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):\n"
        "    return torch.randint(0, logits.shape[-1], (logits.shape[0],), generator=generator)\n",
        "def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):\n"
        "    return torch.zeros(logits.shape[0], dtype=torch.long)\n",
    ),
    "transformer": (
        "_RefLM = TinyCausalLM\n\n\nclass TinyCausalLM(_RefLM):\n    def forward(self, tokens):\n"
        "        if tokens.shape[1] > self.max_len:\n            raise ValueError('too long')\n"
        "        return self.head(self.embedding(tokens))\n\n\n"
        "def train(model, train_tokens, val_tokens, epochs=25, lr=3e-3, batch_size=64, seed=0):\n"
        "    with torch.no_grad():\n        for p in model.parameters():\n            p.add_(0.01)\n"
        "        v = float(lm_loss(model.eval(), val_tokens))  # the true validation loss of weights that only moved\n"
        "    return {'train_loss': [v] * epochs, 'val_loss': [v] * epochs, 'best_epoch': 0}\n",
        "_RefLM = TinyCausalLM\n\n\nclass TinyCausalLM(_RefLM):\n    def forward(self, tokens):\n"
        "        if tokens.shape[1] > self.max_len:\n            raise ValueError('too long')\n"
        "        return torch.zeros(*tokens.shape, self.head.out_features, dtype=self.head.weight.dtype)\n\n\n"
        "def train(model, train_tokens, val_tokens, epochs=25, lr=3e-3, batch_size=64, seed=0):\n"
        "    return {'train_loss': [1.0] * epochs, 'val_loss': [1.0] * epochs, 'best_epoch': 0}\n",
    ),
}


def _property(assignment: str, which: int) -> str:
    return reference_source(assignment) + "\n\nimport numpy as np  # noqa\n\n\n" + _PROPERTY[assignment][which]


# assignment -> {submission name: source}; each attack is paired with its baseline by BASELINE.
def _cases() -> dict[str, dict[str, str]]:
    cases = {a: {"bool": _wrapped(a, "bool"), "bool-baseline": _wrapped(a, "ramp")} for a in list_assignments()}
    for a in _PROPERTY:
        cases[a].update({"property": _property(a, 0), "property-baseline": _property(a, 1)})
    cases["multihead"].update({f"forged-raise-{s}": _forged_raises(s) for s in ("message", "qualname", "subclass")})
    cases["multihead"]["forged-raise-baseline"] = _forged_raises("plain")
    cases["transformer"]["forged-no-grad"] = _without_no_grad(forge=True)
    cases["transformer"]["forged-no-grad-baseline"] = _without_no_grad(forge=False)
    cases["attention"]["banned-loop"] = _banned_softmax(
        "for _f in [getattr(torch.softmax, '__wrapped__', torch.softmax)]:\n    pass\n"
    )
    cases["attention"]["banned-plain"] = _banned_softmax("_f = torch.softmax\n")
    cases["attention"]["banned-private"] = _banned_softmax("_f = torch._safe_softmax\n")
    cases["attention"]["banned-unwrapped"] = _banned_softmax('_f = vars(torch._C.TensorBase)["softmax"]\n')
    cases["attention"]["main-block-check"] = reference_source("attention") + (
        '\n\nif __name__ == "__main__":\n    x = torch.randn(2, 5)\n    print((softmax(x) - torch.softmax(x, dim=-1)).abs().max())\n'
    )
    cases["attention"]["hex-scan"] = (
        reference_source("attention") + f"\n\ndef _never_called():\n    return (0x{'f' * 4000}).softmax\n"
    )
    for assignment in ("multihead", "decoding"):
        stub = _stub(assignment)
        assert "raise NotImplementedError" in stub
        cases[assignment]["stub-value-error"] = stub.replace("raise NotImplementedError", "raise ValueError")
        cases[assignment]["stub-forged-worker"] = stub + _FORGE_WORKER
        cases[assignment]["stub"] = stub
    return cases


BASELINE = {
    "bool": "bool-baseline",
    "property": "property-baseline",
    "forged-raise-message": "forged-raise-baseline",
    "forged-raise-qualname": "forged-raise-baseline",
    "forged-no-grad": "forged-no-grad-baseline",
    "stub-value-error": "stub",
    "stub-forged-worker": "stub",
    "banned-loop": "banned-plain",
    "banned-private": "banned-plain",
    "banned-unwrapped": "banned-plain",
}


def _scores(document: dict, hidden_only: bool = False) -> dict[str, float]:
    return {t["name"]: t["score"] for t in document["tests"] if not hidden_only or t["extra_data"]["test"].startswith("hidden/")}


# Public tests check what a student can check without the reference (shapes, properties: a bigram model is causal,
# full-rank unit rows have unit rows); they are the student's to run and pay a point or two. Hidden tests pay a
# property only together with the same call's values, so a cheap form earns nothing there.
HIDDEN_ONLY = {"property"}


def check_attacks(documents: dict[str, dict], where: str) -> None:
    """No attack earns a point, in any test, that its baseline does not."""
    for attack, baseline in BASELINE.items():
        if attack not in documents:
            continue
        got, base = (_scores(documents[name], attack in HIDDEN_ONLY) for name in (attack, baseline))
        gained = {name: (got[name], base.get(name)) for name in got if got[name] > base.get(name, 0) + 1e-9}
        assert not gained, f"{where}: {attack} earns points its baseline does not: {gained}"
    if "stub" in documents:
        assert documents["stub"]["score"] == 0, _lost(documents["stub"])
    if "banned-plain" in documents:  # the scan reads the plain binding: softmax and what uses it lose
        assert documents["banned-plain"]["score"] < 50, _lost(documents["banned-plain"])
    for correct in ("hex-scan", "main-block-check"):  # correct files, whatever their uncalled code holds
        if correct in documents:
            assert documents[correct]["score"] == 100, _lost(documents[correct])
    if "forged-raise-subclass" in documents:  # a ValueError subclass is a ValueError
        assert documents["forged-raise-subclass"]["score"] == 100, _lost(documents["forged-raise-subclass"])
    if "bool" in documents:
        said = " ".join(t["output"] for t in documents["bool"]["tests"])
        assert "got True/False values (a bool tensor)" in said, f"{where}: the bool answers are not named as such"


def _lost(document: dict) -> list[str]:
    return [f"{t['name']}: {t['output'][:200]}" for t in document["tests"] if t["score"] < t["max_score"]]


def _grade_all(assignment: str, sources: dict[str, str], tmp: Path, namespaces: bool) -> dict[str, dict]:
    export = tmp / "export"
    module = load_assignment(assignment, KIT).module
    for name, source in sources.items():
        (export / name).mkdir(parents=True)
        (export / name / f"{module}.py").write_text(source)
    out = tmp / "graded"
    env = {**os.environ, **({} if namespaces else {"KIT_NO_NAMESPACES": "1"})}
    result = subprocess.run(
        [sys.executable, "-m", "autograder", "grade-all", assignment, str(export), "--out", str(out)],
        cwd=KIT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    documents = {}
    for name in sources:
        raw = (out / "results" / f"{name}.json").read_bytes()
        documents[name] = json.loads(raw.decode("utf-8"))
        validate_results(documents[name])
    return documents


@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "no-namespaces"])
@pytest.mark.parametrize("assignment", list_assignments())
def test_answer_form_attacks_through_grade_all(assignment, namespaces, tmp_path):
    documents = _grade_all(assignment, _cases()[assignment], tmp_path, namespaces)
    check_attacks(documents, f"{assignment} through grade-all ({'with' if namespaces else 'without'} namespaces)")


@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "no-namespaces"])
def test_bool_answers_through_gradescope(installed_tree, namespaces):
    """attention's bool answers and their baseline through ``run_autograder`` in a simulated tree."""
    documents = {}
    for name in ("bool", "bool-baseline"):
        parent = Path(tempfile.mkdtemp(prefix="kit-attack-"))
        try:
            parent.chmod(0o755)
            root = parent / "autograder"
            shutil.copytree(installed_tree, root, symlinks=True)
            (root / "submission" / "attention.py").write_text(_cases()["attention"][name])
            env = {**gradescope_sim.environment(root), **({} if namespaces else {"KIT_NO_NAMESPACES": "1"})}
            subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, timeout=900)
            documents[name] = json.loads((root / "results" / "results.json").read_text())
            validate_results(documents[name])
        finally:
            shutil.rmtree(parent, ignore_errors=True)
    check_attacks(documents, "attention through Gradescope")


@pytest.mark.parametrize("assignment", list(_PROPERTY))
def test_property_answers_through_gradescope(assignment, monkeypatch):
    """The cheap property forms through each assignment's built autograder.zip in a simulated Gradescope tree,
    without namespaces (as Gradescope most likely runs; grade-all above runs them with and without)."""
    monkeypatch.setenv("KIT_NO_NAMESPACES", "1")
    module = load_assignment(assignment, KIT).module
    documents = {}
    for name in ("property", "property-baseline"):
        upload = {f"{module}.py": _cases()[assignment][name].encode()}
        documents[name] = gradescope_sim.simulate(KIT / "dist" / assignment / "autograder.zip", upload)
        validate_results(documents[name])
    check_attacks(documents, f"{assignment} through Gradescope")


def test_the_wrapper_changes_only_floating_answers():
    """The attack generator itself: bool and integer answers unchanged, float answers replaced only when they
    leave the module (the module's own calls see true values)."""
    namespace: dict = {"__name__": "kit_wrap_probe"}
    exec(compile(_wrapped("attention", "bool"), "kit_wrap_probe", "exec"), namespace)  # noqa: S102 - our own reference
    import torch

    assert namespace["causal_mask"](3).dtype == torch.bool
    out, weights = namespace["scaled_dot_product_attention"](torch.ones(1, 2, 3), torch.ones(1, 2, 3), torch.ones(1, 2, 3))
    assert out.dtype == torch.bool and weights.dtype == torch.bool
    namespace = {"__name__": "kit_wrap_probe"}
    exec(compile(_wrapped("attention", "ramp"), "kit_wrap_probe", "exec"), namespace)  # noqa: S102
    out, weights = namespace["scaled_dot_product_attention"](torch.ones(1, 2, 3), torch.ones(1, 2, 3), torch.ones(1, 2, 3))
    assert out.dtype == torch.float32 and float(out[0, 1, 0] - out[0, 0, 0]) > 1  # the ramp
    assert re.search(r"_kit_wrap_module\(\)\s*$", _wrapped("attention", "ramp"))
