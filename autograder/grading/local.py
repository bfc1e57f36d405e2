"""The ``student`` fixture's interface over a module in this process (trusted code only).

The same calls the seam (``seam.RemoteStudent``) makes into a worker, made here: arguments and
results copied as the wire copies them (a function that writes into its inputs does not touch the
test's), the module's own objects (a model, a cache) behind a proxy, each call a numbered step of
the test (``checks.checkpoint``), and an exception reported as a Feedback, as the seam reports
the student's. Used to run a test again on a catalogued mistake (``replay.py``) and to run the
suites on the reference (``release.determinism.reference_failures_by_seed``, ``bench``).
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import torch

from ..banned import refers_to, scan_source
from ..checks import Feedback, Outcome
from ..context import checkpoint
from ..worker import ops
from .grad_scope import grad_off_functions, grad_off_in


def _inward(x: Any) -> Any:
    """An argument as the worker receives it: plain data copied (a mistake that writes into its inputs must not
    touch the test's), the student's own objects (a cache, a model) as themselves."""
    if isinstance(x, LocalObject):
        return x._target
    if isinstance(x, torch.Tensor):
        return x.detach().clone().requires_grad_(x.requires_grad)
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, (list, tuple)) and type(x) in (list, tuple):
        return type(x)(_inward(v) for v in x)
    if isinstance(x, dict):
        return {k: _inward(v) for k, v in x.items()}
    return x


def _outward(x: Any) -> Any:
    """A result as the seam returns it: plain data copied at once, anything else behind a proxy."""
    if x is None or isinstance(x, (bool, int, float, str, bytes, np.generic)):
        return x
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, np.ndarray):
        return x.copy()
    if isinstance(x, (list, tuple)) and type(x) in (list, tuple):
        return type(x)(_outward(v) for v in x)
    if isinstance(x, dict):
        return {k: _outward(v) for k, v in x.items()}
    return LocalObject(x)


def _call(fn: Any, args: tuple, kwargs: dict) -> Any:
    """``fn`` called as the seam calls the student's code: a numbered step, copies in and out, a raise a Feedback."""
    checkpoint()
    try:
        result = fn(*_inward(args), **_inward(kwargs))
    except Exception as exc:  # noqa: BLE001 - as the seam reports the student's exceptions
        name = type(exc).__name__
        raise Feedback(f"raised {name}: {exc}", got=Outcome.of_exception(exc), kind="raised") from None
    return _outward(result)


class LocalObject:
    """What :class:`~autograder.grading.seam.RemoteObject` is in the worker, here: attributes and calls, copied as the seam copies."""

    def __init__(self, target: Any) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._target, name)
        return LocalObject(value) if callable(value) else _outward(value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _call(self._target, args, kwargs)


class ModuleStudent:
    """The ``student`` fixture's interface (:class:`.student.Student`) over a module already loaded in this process."""

    def __init__(self, module: Any, helpers: Any = None) -> None:
        self._module = module
        self._helpers = helpers
        self._used: set[str] = set()
        self._helper_ran = False

    @contextmanager
    def deadlines(self, deadlines: Any) -> Iterator[None]:
        used, self._used, helper_ran, self._helper_ran = self._used, set(), self._helper_ran, False  # one test's
        try:
            yield  # in-process: the diagnoser's budget bounds a replay (diagnosis.Budget)
        finally:
            self._used, self._helper_ran = used, helper_ran

    def output_mark(self) -> None:
        return None  # in-process: nothing is captured

    def output_since(self, mark: Any, max_chars: int) -> str:
        return ""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        self._used.add(name)
        value = getattr(self._module, name)
        return LocalObject(value) if callable(value) else _outward(value)

    def gradients(self, target: Any, *args: Any, wrt=(0,), grad_outputs=None, params: bool = False, **kwargs: Any) -> dict:
        checkpoint()
        target = getattr(self._module, target) if isinstance(target, str) else _inward(target)
        return _outward(
            ops.gradients(target, _inward(args), _inward(kwargs), wrt=wrt, grad_outputs=_inward(grad_outputs), params=params)
        )

    def _source(self) -> str:
        source = getattr(self._module, "__kit_source__", None)  # a catalogued mistake: its own source (diagnosis)
        try:
            return (
                source if isinstance(source, str) else Path(self._module.__file__).read_text(encoding="utf-8", errors="replace")
            )
        except (OSError, TypeError, AttributeError):
            return ""

    def source_uses(self, name: str, dotted: tuple[str, ...]) -> bool:
        """As ``RemoteStudent.source_uses``, on the module's file."""
        return name in scan_source(self._source(), dotted)

    def grad_off(self, name: str) -> bool:
        """As ``RemoteStudent.grad_off``, on the module's file (a catalogued mistake: its own source)."""
        try:
            source = self._source()
            return grad_off_in(name, grad_off_functions(source), refers_to(source))
        except (SyntaxError, ValueError):
            return False

    def names_used(self) -> set[str]:
        """As ``RemoteStudent.names_used``, on the module's file."""
        refers = refers_to(self._source()) if self._used else {}
        return set(self._used).union(*(refers.get(n, set()) for n in self._used))

    def names_run(self) -> set[str] | None:
        """As ``RemoteStudent.names_run``."""
        return None if self._helper_ran else self.names_used()

    def helper(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self._helper_ran = True
        if self._helpers is None:
            raise RuntimeError("this assignment has no worker_helpers.py")
        return _call(getattr(self._helpers, name), args, kwargs)


def local_student(module_name: str, student_file: Path, helpers_file: Path | None = None) -> ModuleStudent:
    """``student_file`` imported as ``module_name`` (and registered under it, as in the worker: helpers may
    ``import`` it), with the assignment's worker helpers, behind the fixture's interface."""
    from .seam import load_module

    module = load_module(module_name, student_file)
    sys.modules[module_name] = module
    return ModuleStudent(module, load_module("_kit_helpers", helpers_file) if helpers_file else None)
