"""Checks that explain themselves: what was checked, on what input, expected vs got.

Shared by the hidden tests (grader side) and the public tests (shipped to
students), so it depends only on torch and NumPy. Every check raises
:class:`Feedback` (an ``AssertionError``) whose message is written for the
student; the grader shows that message and nothing else of the test.
No check uses ``pytest.raises``/``pytest.fail``, so the same checks run under
Otter, whose runner only catches ``Exception``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch

from .context import call_that_produced, checkpoint, current, record_call


class Feedback(AssertionError):
    """A failed check; ``str(exc)`` is the message the student sees.

    ``got`` and ``check`` let the grader name the mistake (``autograder/diagnosis/diagnoser.py``): ``got`` is what
    the student's code produced (a value, or an :class:`Outcome` when it raised, called a banned
    function, or returned where it should have raised) and ``check`` at which step of the test it
    failed, named by its call site (``context.py``), so the test can be run again on a catalogued mistake and looked at
    there. ``call`` is the call the seam recorded as producing ``got``, replayed alone when there is
    one; a test may give its own (a dict ``{"fn": name, "args": ..., "kwargs": ..., "output": key,
    "then": function}``) where the value to compare is not the one the check holds.
    """

    kind = "wrong"  # how the test ended: see KINDS (set where it happens, never read from the message)
    float32 = False  # the values differ by float32 rounding only (FLOAT32_HINT): no catalogued mistake is looked for

    def __init__(self, message: str, call: Any = None, got: Any = None, kind: str | None = None, hint: str = "") -> None:
        super().__init__(message + _hint(hint))
        # the test's advice about the function it grades, the message's last sentence(s): left out where the
        # failure is a mistake of another function (feedback_text.message_text)
        self.hint = hint
        self.call = call if call is not None else call_that_produced(got)
        self.got = got
        context = current()
        # at which step of the test it failed, and the steps before it (context.py: each named by its call site)
        self.check = context.last if context is not None else None
        self.passed = frozenset(context.steps[:-1]) if context is not None else frozenset()
        if kind is not None:
            self.kind = kind


# How a test (or a submission) can end, as data: set where it happens, carried in results.json
# (``extra_data.kind``), read by the dashboard, the gradebook's flags and the summaries.
KINDS = {
    "passed": "passed",
    "wrong": "a check failed on the values the code returned",
    "raised": "the student's code raised an exception",
    "not-implemented": "the function is not written yet (NotImplementedError)",
    "missing": "the file has no such function or class",
    "unreadable": "the code returned something the check could not read (type or shape)",
    "timeout": "the student's code ran out of time",
    "crash": "the student's process stopped or was killed while answering",
    "memory": "the student's code used more memory, processes or disk than allowed",
    "exit": "the student's code exited the worker itself (SystemExit, KeyboardInterrupt)",
    "channel": "the worker sent what no honest worker sends (the grader's channel was interfered with)",
    "banned": "the code used a function the assignment bans",
    "skipped": "the test was skipped from inside the student's code",
    "not-run": "not run: an earlier failure of the same function, or the run's time limit",
    "import-error": "the file could not be imported",
}


def derived(value: Any, result: Any, then: Callable[[Any], Any] | None = None) -> Any:
    """``result``, computed from ``value``, keeps the record of the student call that produced
    ``value``: a check on ``result`` then needs no hand-written ``call=``. Without ``then``, only for
    conversions that keep the values and their layout (converted, cast); otherwise ``then`` says how
    ``result`` is computed from ``value`` (an index, a transpose), and the diagnoser computes each
    replayed value the same way."""
    call = call_that_produced(value)
    if call is not None:
        if then is not None:
            before = call.get("then")
            call = {**call, "then": then if before is None else (lambda out: then(before(out)))}
        record_call(result, call)
    return result


def as_float64(value: Any, what: str = "the returned value") -> torch.Tensor:
    """``torch.as_tensor(value).double()``, remembered as coming from the call that produced ``value``.
    Only numbers convert: True/False (or complex) values fail here, where their kind would be lost."""
    t = to_tensor(value, what)
    if kind_of(t) in ("bool", "complex"):
        _expect_same_kind(t, torch.zeros((), dtype=torch.float64), what, "", None, value)
    return derived(value, t.double())


@dataclass(frozen=True)
class Outcome:
    """What a call did instead of returning the expected value: ``raised``, ``banned`` or ``returned``."""

    kind: str
    detail: str = ""
    # For ``raised``: the exception's classes, most derived first, as "module.QualName" (the worker sends
    # them as data); ``expect_raises`` compares these, never the message. Not part of equality (diagnosis).
    classes: tuple[str, ...] = field(default=(), compare=False)
    # For ``banned``: the banned names the call used, sorted (``detail`` says them in words).
    names: tuple[str, ...] = field(default=(), compare=False)

    @staticmethod
    def raised(type_name: str, message: str, classes: Any = ()) -> "Outcome":
        first = " ".join(str(message).split())[:300]
        names = tuple(str(c)[:200] for c in classes[:32]) if isinstance(classes, (list, tuple)) else ()
        return Outcome("raised", f"{type_name}: {first}", names)

    @staticmethod
    def of_exception(exc: BaseException) -> "Outcome":
        """What a real exception (raised in this process) is, with its classes."""
        return Outcome.raised(type(exc).__name__, str(exc), exception_classes(type(exc)))

    @staticmethod
    def banned(names: list[str]) -> "Outcome":
        """The banned functions a call used (the worker and the diagnoser both report them sorted)."""
        used = tuple(sorted(set(names)))
        return Outcome("banned", ", ".join(used), names=used)


RETURNED = Outcome("returned")  # the call returned normally where an exception was expected


def exception_classes(cls: type) -> tuple[str, ...]:
    """``cls`` and its base classes as "module.QualName" ("builtins.ValueError", "builtins.Exception"...)."""
    return tuple(f"{c.__module__}.{c.__qualname__}" for c in cls.__mro__)


def _qualified(exc_type: Any) -> str:
    """An expected exception class as ``exception_classes`` names it; a bare name is a built-in's."""
    if isinstance(exc_type, str):
        return exc_type if "." in exc_type else f"builtins.{exc_type}"
    return f"{exc_type.__module__}.{exc_type.__qualname__}"


def describe(x: Any) -> str:
    """A short description of an input: "shape (4, 7), float32"."""
    if isinstance(x, torch.Tensor):
        return f"shape {tuple(x.shape)}, {str(x.dtype).replace('torch.', '')}"
    if isinstance(x, np.ndarray):
        return f"array of shape {x.shape}, {x.dtype}"
    return type(x).__name__


def to_tensor(x: Any, what: str) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, np.ndarray) or isinstance(x, (int, float, np.generic)):
        return torch.as_tensor(np.asarray(x))
    if isinstance(x, (list, tuple)):
        try:
            return torch.as_tensor(np.asarray(x, dtype=float))
        except (ValueError, TypeError):
            pass
    raise Feedback(f"{what}: expected a tensor or array, got {type(x).__name__}")


def _fmt_row(t: torch.Tensor, limit: int = 6, digits: int = 4) -> str:
    flat = t.reshape(-1)
    items = [f"{v:.{digits}g}" if not isinstance(v, bool) else str(v) for v in flat[:limit].tolist()]
    return "[" + ", ".join(items) + (", ...]" if flat.numel() > limit else "]")


def _fmt_window(row: torch.Tensor, start: int, width: int = 7) -> str:
    """Entries ``start`` .. ``start + width - 1`` of a row, with "..." where the row goes on."""
    flat = row.reshape(-1)
    items = [f"{v:.4g}" if not isinstance(v, bool) else str(v) for v in flat[start : start + width].tolist()]
    return "[" + ("..., " if start > 0 else "") + ", ".join(items) + (", ...]" if start + width < flat.numel() else "]")


def _tolerance(atol: float, rtol: float) -> str:
    """ "tolerance 1e-06", or "compared exactly" (never "tolerance 0e+00")."""
    if atol == 0 and not rtol:
        return "compared exactly"
    text = f"tolerance {atol:.0e}" if atol else "tolerance"
    return text + (f" + {rtol:.0e}·|expected|" if rtol else "")


def distinct_digits(want: Any, got: Any) -> tuple[str, str]:
    """``want`` and ``got`` (numbers or rows) printed with just enough digits to tell them apart.

    "expected 0.96, got 0.96" helps nobody: 4 significant digits, more until the two differ (17 at most).
    """
    for digits in (4, 6, 8, 10, 12, 17):
        if isinstance(want, torch.Tensor):
            a, b = _fmt_row(want, digits=digits), _fmt_row(got, digits=digits)
        else:
            a, b = f"{float(want):.{digits}g}", f"{float(got):.{digits}g}"
        if a != b:
            break
    return a, b


def expect_shape(got: Any, shape: tuple, what: str) -> None:
    checkpoint()
    t = to_tensor(got, what)
    if tuple(t.shape) != tuple(shape):
        raise Feedback(f"{what}: expected shape {tuple(shape)}, got {tuple(t.shape)}.")


def expect_dtype(got: Any, dtype: Any, what: str, call: Any = None) -> None:
    checkpoint()
    t = to_tensor(got, what)
    if t.dtype != dtype:
        raise Feedback(
            f"{what}: expected dtype {str(dtype).replace('torch.', '')}, got {str(t.dtype).replace('torch.', '')}.",
            call,
            got,
        )


def expect_close(
    got: Any,
    want: Any,
    what: str,
    atol: float = 1e-6,
    rtol: float = 0.0,
    hint: str = "",
    call: tuple | None = None,
    check_dtype: bool = False,
) -> None:
    """``got`` equals ``want`` within ``atol + rtol*|want|`` everywhere, same shape; NaN only where expected."""
    checkpoint()
    g = to_tensor(got, what)
    w = to_tensor(want, what)
    if tuple(g.shape) != tuple(w.shape):
        raise Feedback(f"{what}: expected shape {tuple(w.shape)}, got {tuple(g.shape)}.", call, got, hint=hint)
    if check_dtype and g.dtype != w.dtype:
        raise Feedback(
            f"{what}: expected dtype {str(w.dtype).replace('torch.', '')}, got {str(g.dtype).replace('torch.', '')}.",
            call,
            got,
        )
    _expect_same_kind(g, w, what, hint, call, got)
    if g.dtype == torch.bool:  # both are (above): True/False compared exactly
        _expect_same_truth(g, w, what, hint, call, got)
        return
    g64 = g.detach().to(torch.float64).reshape(g.shape or (1,))  # 0-d values compare as 1-element vectors
    w64 = w.detach().to(torch.float64).reshape(w.shape or (1,))
    # NaN fails where it arrives, on either side: nothing sorts, samples or compares a NaN (whose order
    # and arithmetic are not the same on every CPU), and NaN never "equals" NaN. The contract never
    # asks for NaN; an expected value computed from the student's own outputs (public tests) may be.
    for values, whose in ((g64, "your result"), (w64, "the expected value (computed from your code's other outputs)")):
        nan = torch.isnan(values)
        if nan.any():
            raise Feedback(f"{what}: {whose} has NaN in {_where(nan)}.", call, got, hint=hint)
    both_inf = torch.isinf(g64) & torch.isinf(w64) & (torch.sign(g64) == torch.sign(w64))
    err = (g64 - w64).abs().masked_fill(both_inf, 0.0)
    err = torch.nan_to_num(err, nan=float("inf"))  # inf - inf of one sign is 0 above
    allowed = atol + rtol * w64.abs().nan_to_num(0.0, posinf=0.0, neginf=0.0)
    bad = err > allowed
    if bad.any():
        float32 = float32_sized(err[bad], w64[bad], atol, float(w64.abs().nan_to_num(0.0, 0.0, 0.0).max()), g64[bad])
        if float32:
            hint = FLOAT32_HINT  # the formula is right: a float32 tensor, constant or cast lost the digits
        failure = Feedback(
            f"{what}: values differ from the expected ones (max error {float(err.max()):.3g}, "
            f"{_tolerance(atol, rtol)}; " + _first_difference(g64, w64, bad),
            call,
            got,
            hint=hint,
        )
        failure.float32 = float32
        raise failure


def _expect_same_truth(g: torch.Tensor, w: torch.Tensor, what: str, hint: str, call: Any, got: Any) -> None:
    bad = (g.to(torch.bool) != w.to(torch.bool)).reshape(g.shape or (1,))
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        raise Feedback(
            f"{what}: {int(bad.sum())} of {bad.numel()} entries are wrong, the first at index {idx} "
            f"(expected {bool(w.reshape(bad.shape)[idx])}, got {bool(g.reshape(bad.shape)[idx])}).",
            call,
            got,
            hint=hint,
        )


def _first_difference(g64: torch.Tensor, w64: torch.Tensor, bad: torch.Tensor) -> str:
    """ "3 of 12 entries off, the first in row 1). In row 1, entries 0 to 6: ... At index (1, 2): ..." """
    first = tuple(int(i) for i in bad.nonzero()[0])
    row = first[:-1] if len(first) > 1 else first
    where = f"row {row if len(row) != 1 else row[0]}" if len(first) > 1 else f"index {first[0]}"
    detail = ""
    if len(first) > 1:
        lo = max(0, first[-1] - 3)  # the first difference and its neighbours, not just the row's start
        detail = (
            f" In {where}, entries {lo} to {min(lo + 6, g64.shape[-1] - 1)}: expected "
            f"{_fmt_window(w64[row], lo)}, got {_fmt_window(g64[row], lo)}."
        )
    shown_w, shown_g = distinct_digits(float(w64[first]), float(g64[first]))
    detail += f" At index {first if len(first) > 1 else first[0]}: expected {shown_w}, got {shown_g}."
    return f"{int(bad.sum())} of {bad.numel()} entries off, the first in {where}).{detail}"


def kind_of(t: torch.Tensor) -> str:
    """What kind of values a tensor holds, as a check compares them: "bool", "complex", "integer" or "real"."""
    if t.dtype == torch.bool:
        return "bool"
    if t.is_complex():
        return "complex"
    return "real" if t.is_floating_point() else "integer"


_KIND_WORDS = {
    "bool": "True/False values (a bool tensor)",
    "complex": "complex numbers",
    "integer": "whole numbers (an integer dtype)",
    "real": "real numbers (a floating-point dtype)",
}


def _expect_same_kind(g: torch.Tensor, w: torch.Tensor, what: str, hint: str, call: Any, got: Any) -> None:
    """The answer's kind is part of the answer: True/False never stands for a number, nor a number for
    True/False, and complex never for real. Whole numbers may stand for real ones (their values are
    compared), as an integer-valued answer is that answer."""
    want_kind, got_kind = kind_of(w), kind_of(g)
    numbers = ("integer", "real")
    if want_kind == got_kind or (want_kind in numbers and got_kind in numbers):
        return
    raise Feedback(
        f"{what}: expected {_KIND_WORDS[want_kind]}, got {_KIND_WORDS[got_kind]} ({describe(g)}). "
        "Return values of the kind the docstring asks for; the values were not compared.",
        call,
        got,
        kind="unreadable",
        hint=hint,
    )


FLOAT32_HINT = (
    "Your result differs by the size of float32 rounding (about 1e-7 of each value), not by a formula error: "
    "is a tensor, constant or cast in float32? Compute in the input's dtype (no .float(), no float32 constants; "
    "torch.tensor(x, dtype=inputs.dtype) for a constant)."
)


def float32_sized(
    err: torch.Tensor, want: torch.Tensor, atol: float, magnitude: float = 0.0, got: torch.Tensor | None = None
) -> bool:
    """Whether errors that fail a float64 tolerance are all of float32 rounding's size: relative errors between
    1e-9 and 5e-6 (float32's spacing is 1.2e-7 of a value), with ``atol`` below 1e-8, or at any tolerance when
    the values ``got`` are float32's own (:func:`float32_values`). ``magnitude``: the largest expected value of
    the whole result; an entry near 0 carries the rounding of the larger values it was summed from, so it is
    measured against a hundredth of that at least (a GRU state's 0.001 beside its 0.9)."""
    if err.numel() == 0:
        return False
    scale = want.abs().clamp_min(max(1e-3, 1e-2 * magnitude))
    relative = err / scale
    sized = bool(torch.isfinite(relative).all()) and 1e-9 <= float(relative.max()) <= 5e-6
    return sized and (atol < 1e-8 or (got is not None and float32_values(got, want)))


def float32_values(got: torch.Tensor, want: torch.Tensor) -> bool:
    """Whether every value ``got`` is a float32 number where the expected ones are not all: what a float32
    computation returns, cast to float64 or not (a float64 one lands on a float32 number once in 500 million)."""
    g, w = got.detach().to(torch.float64), want.detach().to(torch.float64)
    return bool((g == g.to(torch.float32).to(torch.float64)).all()) and not bool(
        (w == w.to(torch.float32).to(torch.float64)).all()
    )


def expect_follows_scores(scores: Any, weights: Any, what: str, blocked: Any = None, call: Any = None) -> None:
    """Within each row (last dim), a clearly larger score gets a strictly larger weight, as softmax gives.

    A property a do-nothing answer fails: uniform weights give equal weights to different scores.
    Pairs whose scores differ by less than 0.01, blocked keys and weights below 1e-30 (underflow) are skipped.
    """
    checkpoint()
    s = to_tensor(scores, what).detach().double()
    raw = to_tensor(weights, what)
    if not raw.is_floating_point():
        raise Feedback(
            f"{what}: expected weights of a floating-point dtype, got {describe(raw)}.", call, weights, kind="unreadable"
        )
    w = raw.detach().double()
    if tuple(s.shape) != tuple(w.shape):
        raise Feedback(f"{what}: expected shape {tuple(s.shape)}, got {tuple(w.shape)}.", call, weights)
    pair = (s.unsqueeze(-1) - s.unsqueeze(-2)) > 1e-2  # [..., i, j]: score i clearly above score j
    if blocked is not None:
        free = ~torch.as_tensor(blocked, dtype=torch.bool).expand(s.shape)
        pair &= free.unsqueeze(-1) & free.unsqueeze(-2)
    higher, lower = w.unsqueeze(-1).expand(pair.shape), w.unsqueeze(-2).expand(pair.shape)
    bad = pair & ((higher < lower) | ((higher == lower) & (higher > 1e-30)))
    if bad.any():
        idx = tuple(int(i) for i in bad.nonzero()[0])
        row, i, j = idx[:-2], idx[-2], idx[-1]
        where = f"row {row if len(row) != 1 else row[0]}" if row else "the row"
        raise Feedback(
            f"{what}: in {where}, entry {i} has a larger score than entry {j} "
            f"({float(s[(*row, i)]):.4g} > {float(s[(*row, j)]):.4g}) but not a larger weight "
            f"({float(w[(*row, i)]):.4g} vs {float(w[(*row, j)]):.4g}). Softmax keeps the order of the scores: "
            "exp is increasing, so a larger score always gets a larger weight.",
            call,
            weights,
        )


def expect_true(condition: Any, message: str, call: tuple | None = None, got: Any = None) -> None:
    checkpoint()
    if not bool(condition):
        raise Feedback(message, call, got)


def expect_raises(fn: Callable[[], Any], exc_types: tuple, what: str, call: Any = None) -> None:
    """``fn()`` raises one of ``exc_types`` or a subclass of one. Judged by the exception's classes: those
    of a real exception, or those the seam received as data (``Outcome.classes``) from the worker; never
    by its message, so a ``RuntimeError("raised ValueError")`` is a RuntimeError."""
    checkpoint()
    wanted = {_qualified(t) for t in exc_types}
    shown = " or ".join(sorted(t if isinstance(t, str) else t.__name__ for t in exc_types))
    try:
        returned = fn()
    except Exception as exc:  # noqa: BLE001 - we inspect what the student raised
        got = getattr(exc, "got", None)
        if isinstance(exc, Feedback):  # the seam's (or a local replay's) report of the student's exception
            classes = got.classes if isinstance(got, Outcome) and got.kind == "raised" else ()
        else:  # a real exception, raised in this process (public tests)
            classes, got = exception_classes(type(exc)), Outcome.of_exception(exc)
        if wanted & set(classes):
            return
        if not isinstance(got, Outcome):
            got = Outcome.raised(type(exc).__name__, str(exc))
        if call is None:
            call = getattr(exc, "call", None)  # the seam attaches one to a failing top-level call
        raise Feedback(f"{what}: expected {shown}, but got: {str(exc)[:400]}", call, got) from None
    if call is None:
        call = call_that_produced(returned)  # the seam records what a top-level call returned
    raise Feedback(f"{what}: expected {shown} to be raised, but the call returned normally.", call, RETURNED)


def _where(mask: torch.Tensor) -> str:
    """ "row 3 (5 of 40 entries)" for a boolean mask over a result: where the first marked entry is."""
    first = tuple(int(i) for i in mask.nonzero()[0])
    place = f"row {first[0]}" if len(first) == 2 else (f"index {first[0]}" if len(first) == 1 else f"index {first}")
    return place + f" ({int(mask.sum())} of {mask.numel()} entries)"


def _hint(hint: str) -> str:
    return f" {hint}" if hint else ""
