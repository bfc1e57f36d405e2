"""The state of the test running now: where its checks are, and which student calls its values came from.

One job: a :class:`TestContext` per test, opened by :func:`per_test` (the scoring plugin for each graded
test, the diagnoser for each replay of a test on a mistake) and found by :func:`current`. It is a context
variable, not a module-global list: a replay inside a grading opens its own and the grading's is back
when it ends, whatever the replay did.

A test's **steps** are its checks as they start and its calls into the student's code
(:func:`checkpoint`). Each is named by its call site, ``(file, line, n)``: the line of the test (or of a
support module) that made it and how many times that line has made one so far. A failure says at which
step it happened (``Feedback.check``) and which steps came before (``Feedback.passed``), so a replay of
the test on a mistake compares the mistake with the student at the same check, even when one of them took
more steps before it (a loop that runs once more, a conversion that calls the student's code twice).

Its **provenance** (:class:`Provenance`) remembers which call returned each value, so a failing check's
value can be replayed alone on each mistake.
"""

from __future__ import annotations

import os
import sys
import weakref
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator

Site = tuple[str, int, int]  # (file, line, n): the n-th step made at that line of the test
_ENGINE = os.path.dirname(os.path.abspath(__file__)) + os.sep  # steps are named by the first frame outside it
_PARTS_RECORDED = 8  # the first parts of a returned tuple or list (outputs, not sequences of results)


class Provenance:
    """Which student call produced each value returned in the running test.

    A value is known by its identity for as long as it lives, and no longer: the registry holds a weak
    reference to it (an entry goes when its value does, so a later value reusing the address is never
    taken for it, and the registry never keeps a student's answer alive). A list, tuple or dict is known
    by its parts: the very same parts, in the same order, at the same address, which is the same value.
    """

    class _Parts:
        """What the registry keeps of a list, tuple or dict: its type and its parts as ``_hold`` keeps them."""

        __slots__ = ("type", "parts")

        def __init__(self, kind: type, parts: list) -> None:
            self.type, self.parts = kind, parts

    def __init__(self) -> None:
        self._calls: dict[int, tuple[Any, dict, object]] = {}  # id -> (what is kept of the value, call, token)

    def record(self, value: Any, call: dict) -> None:
        if value is None or isinstance(value, (bool, int, float, str)):
            return  # small immutable values are shared between unrelated calls
        key, token, owner = id(value), object(), weakref.ref(self)

        def forget(_: Any) -> None:  # the value (or a part of it) is gone: its entry and the call it kept go too
            registry = owner()
            if registry is not None and registry._calls.get(key, (None, None, None))[2] is token:
                del registry._calls[key]

        self._calls[key] = (self._hold(value, forget), call, token)

    def call_of(self, value: Any) -> dict | None:
        found = self._calls.get(id(value))
        return found[1] if found is not None and self._is(found[0], value) else None

    @staticmethod
    def _hold(value: Any, forget: Callable[[Any], None], depth: int = 0) -> Any:
        """A weak reference to ``value``, a ``_Parts`` of a list, tuple or dict (4 levels deep), or ``value``."""
        if isinstance(value, (list, tuple, dict)) and depth < 4:
            parts = [x for pair in value.items() for x in pair] if isinstance(value, dict) else list(value)
            return Provenance._Parts(type(value), [Provenance._hold(x, forget, depth + 1) for x in parts])
        try:
            return weakref.ref(value, forget)
        except TypeError:  # None, numbers, strings, plain objects: small, or nothing else to know them by
            return value

    @staticmethod
    def _is(held: Any, value: Any) -> bool:
        """``value`` is the value ``held`` was kept of."""
        if isinstance(held, weakref.ref):
            return held() is value
        if isinstance(held, Provenance._Parts):
            if type(value) is not held.type or len(value) * (2 if isinstance(value, dict) else 1) != len(held.parts):
                return False
            parts = [x for pair in value.items() for x in pair] if isinstance(value, dict) else value
            return all(Provenance._is(h, x) for h, x in zip(held.parts, parts))
        return held is value


class TestContext:
    """One running test: its steps, by call site, and the provenance of the values its student calls return."""

    __test__ = False  # not a test class, for pytest

    def __init__(self) -> None:
        self.provenance = Provenance()
        self.steps: list[Site] = []
        self._counts: dict[tuple[str, int], int] = {}
        self.worker_values: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # recipes.py's tensors

    def step(self) -> Site:
        """Count a step made from the first frame outside the engine (the test's line, or a support module's)."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename.startswith(_ENGINE):
            frame = frame.f_back
        where = (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("?", 0)
        n = self._counts[where] = self._counts.get(where, 0) + 1
        site = (where[0], where[1], n)
        self.steps.append(site)
        return site

    @property
    def last(self) -> Site | None:
        return self.steps[-1] if self.steps else None


_CURRENT: ContextVar[TestContext | None] = ContextVar("kit_test_context", default=None)


def current() -> TestContext | None:
    """The running test's context; None outside a graded test (a student's own run of the public tests)."""
    return _CURRENT.get()


@contextmanager
def per_test() -> Iterator[TestContext]:
    """A fresh context for the block (a test, or a replay of one); the one before it is back afterwards."""
    context = TestContext()
    token = _CURRENT.set(context)
    try:
        yield context
    finally:
        _CURRENT.reset(token)


def restore(context: TestContext | None) -> None:
    """Make ``context`` the current one again (a replay stopped mid-way by its time limit leaves its own)."""
    _CURRENT.set(context)


def checkpoint() -> None:
    """Count a step of the running test (a check as it starts, a call into the student's code)."""
    context = _CURRENT.get()
    if context is not None:
        context.step()


def record_call(value: Any, call: dict) -> None:
    """Remember that ``value`` came from ``call`` (a dict as ``Feedback.call`` takes); a returned
    tuple or list is remembered whole and its first parts with their ``"output"`` index (so a
    student who returns a list where the contract says tuple is diagnosed the same). Outside
    a test context (a student's own machine) nothing is remembered."""
    context = _CURRENT.get()
    if context is None:
        return
    context.provenance.record(value, call)
    if isinstance(value, (tuple, list)):
        for index, part in enumerate(value[:_PARTS_RECORDED]):
            context.provenance.record(part, {**call, "output": index})


def call_that_produced(value: Any) -> dict | None:
    """The recorded call that returned ``value`` in the running test, or None."""
    context = _CURRENT.get()
    return context.provenance.call_of(value) if context is not None else None
