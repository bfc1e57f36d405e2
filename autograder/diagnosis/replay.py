"""Replay a failed hidden test on another implementation, for the diagnosis.

A test that fails at a check whose value no recorded call produced (a model built,
trained, then queried; a value drawn through a worker helper; a plain number) needs no
hand-written replay: the diagnoser runs **the test itself** again, in this process, with
``student`` bound to a catalogued mistake (trusted code: the reference with the mistake),
and looks at where that run fails. Each step of a test is named by its call site as it runs
(:mod:`autograder.context`: the test's line and how many times that line has made a step), so
"where" is the same check of the same test on the same inputs (the same parameters, seeds and a
fresh generator from the same seed), even when the two runs took a different number of steps
before it.

What a replay observes (:meth:`TestReplay.observe`):

* the mistake fails **at the student's check**: the value that check was given (``got``),
  or the :class:`~autograder.checks.Outcome` when its code raised there;
* it fails **at an earlier check**, one the student's code passed: :data:`EARLIER`, a
  result of its own that the student's code did not produce (it can rule the mistake out);
* it passes that check (fails later, or not at all): :data:`PASSED`, what the reference does;
* it fails at a check the student's code never reached, without reaching the student's: the two
  runs took different paths, which proves nothing either way (:data:`UNKNOWN`).

The reference passes every test (the release's self-check proves it), so its observation is
:data:`PASSED` without running it.

A replay runs the whole test, a training loop included: the diagnoser bounds its time
(``diagnosis.Budget``) and stops it with ``OutOfTime``, a BaseException that :meth:`TestReplay.observe`
lets through (it is no observation), like the test's own ``except Exception``.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path
from typing import Any

import torch

from ..checks import Feedback, Outcome
from ..context import Site, TestContext, per_test
from ..grading.local import ModuleStudent

PASSED = Outcome("passed")  # the replay passed the student's failing check (what the reference does)
EARLIER = Outcome("failed-earlier")  # the replay failed a check the student's code passed
UNKNOWN = object()  # failed at the same check with nothing to compare (no value): proves nothing either way


class TestReplay:
    """How to run one collected test again: its function, its arguments, the check it failed at."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        function: Any,
        arguments: dict,
        check: Site,
        module_name: str,
        seed: int | None = None,
        passed: frozenset = frozenset(),
    ) -> None:
        self.function = function
        self.arguments = arguments
        self.check = check  # the step the student's run failed at
        self.passed = passed  # the steps it passed before it
        self.module_name = module_name
        self.seed = seed if seed is not None else arguments.get("seed")  # the `gen` fixture's seed

    @classmethod
    def of(cls, item: Any, exc: BaseException, module_name: str) -> "TestReplay | None":
        """The replay of pytest ``item`` at the check where ``exc`` was raised, or None when it cannot be replayed."""
        check = getattr(exc, "check", None)
        arguments = _arguments_of(item)
        if check is None or arguments is None:
            return None
        passed = getattr(exc, "passed", frozenset())
        return cls(item.obj, arguments, check, module_name, item.funcargs.get("seed"), passed)

    @classmethod
    def of_passed(cls, item: Any, module_name: str) -> "TestReplay | None":
        """The replay of a test case the student's code passed: ``observe`` gives :data:`PASSED` when another
        implementation passes it too, :data:`EARLIER` when it fails it. None when it cannot be replayed."""
        arguments = _arguments_of(item)
        return None if arguments is None else cls(item.obj, arguments, None, module_name, item.funcargs.get("seed"))

    def _arguments(self, student: ModuleStudent) -> dict:
        arguments = dict(self.arguments)
        arguments["student"] = student
        if "gen" in arguments:  # the test's generator was used up by the student's run: a fresh one, same seed
            arguments["gen"] = torch.Generator().manual_seed(int(self.seed))
        return arguments

    def observe(self, module: Any, helpers: Any = None) -> Any:
        """What the test does on ``module`` at the student's failing check (see the module's docstring)."""
        student = ModuleStudent(module, helpers)
        saved = sys.modules.get(self.module_name)
        sys.modules[self.module_name] = module  # worker helpers find the student's module there, as in the worker
        try:
            with per_test() as context:
                try:
                    self.function(**self._arguments(student))
                except Feedback as exc:  # a check failed, or the implementation raised (as the seam reports it)
                    return self._at(exc.check, exc.got, context)
                except Exception:  # noqa: BLE001 - the test's own code could not read what the implementation gave
                    return self._at(context.last, None, context)
            return PASSED
        finally:
            if saved is None:
                sys.modules.pop(self.module_name, None)
            else:
                sys.modules[self.module_name] = saved

    def _at(self, check: Site | None, got: Any, context: TestContext) -> Any:
        """What failing at step ``check`` (with ``got``) means, against the student's failing step."""
        if self.check is None:  # a case the student's code passed (of_passed), failed here
            return EARLIER
        if check is None:
            return PASSED
        if check == self.check:
            return UNKNOWN if got is None else got
        if self.check in context.steps[:-1]:  # it passed the student's failing check, and failed later
            return PASSED
        if check in self.passed:  # it failed a check the student's code passed
            return EARLIER
        return UNKNOWN  # a check the student's code never reached: the runs took different paths


def load_helpers(path: Path | None) -> Any:
    """The assignment's worker_helpers.py, imported on the grader side (trusted code), or None."""
    if path is None or not Path(path).is_file():
        return None
    from ..grading.seam import load_module

    return load_module("_kit_replay_helpers", Path(path))


def _arguments_of(item: Any) -> dict | None:
    """The arguments pytest gave ``item``'s test function, or None when the test cannot be run again here."""
    function, funcargs = getattr(item, "obj", None), getattr(item, "funcargs", None)
    if not callable(function) or funcargs is None:
        return None
    try:
        names = list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return None
    if any(name not in funcargs for name in names):
        return None
    if "gen" in names and not isinstance(funcargs.get("seed"), int):
        return None  # a generator this side cannot draw again
    return {name: funcargs[name] for name in names}
