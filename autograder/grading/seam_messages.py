"""What a student is told when their code fails in the worker, and the outcome kind of that failure.

One job: turn a worker's failure (an exception it reported, a timeout, the memory limit, a broken
channel) into a sentence the student can act on and one of ``checks.KINDS``. Used by the seam only.
"""

from __future__ import annotations

import math
import re

from ..sandbox import Limits, WorkerMemory, WorkerProtocol, WorkerTimeout
from .imports import ALLOWED_TEXT

ALLOWED_IMPORTS = ALLOWED_TEXT


def _import_failure(module_name: str, error: dict) -> str:
    """Why the student's file could not be imported, said so they can fix it."""
    if error.get("type") == "ModuleNotFoundError":
        missing = error.get("message", "").replace("No module named ", "").strip("'\"")
        return (
            f"{module_name}.py imports `{missing}`, which grading does not have. A submission may import "
            f"{ALLOWED_IMPORTS} (the handout lists them); remove that import or write that part yourself."
        )
    return f"{module_name}.py could not be imported: " + _format_error(error)


# What PyTorch says when float32 and float64 tensors meet in one operation (a .float() cast, a float32
# constant or table inside code that the tests run in float64).
_DTYPE_CLASH = re.compile(
    r"same dtype|expected scalar type (Float|Double)|Found dtype (Float|Double) but expected|"
    r"expected (m1|mat1) and (m2|mat2) to have the same dtype|Double but found Float|Float but found Double"
)
DTYPE_CLASH_ADVICE = (
    "float32 and float64 met in one operation: the tests run your code in float64 (after .double()), so every "
    "tensor your code creates must follow its inputs' dtype (no .float() casts, no float32 constants or tables)."
)


def _format_error(error: dict) -> str:
    message = str(error.get("message", ""))
    text = f"{error.get('type', 'Exception')}: {message}".rstrip(": ")
    where = error.get("where") or []
    if where:
        text += "\n  at " + "\n  at ".join(where)
    if _DTYPE_CLASH.search(message):
        text += "\n" + DTYPE_CLASH_ADVICE
    return text


_UNDEFINED, _FRAME = re.compile(r"name '([A-Za-z_]\w*)' is not defined"), re.compile(r"line \d+, in ([A-Za-z_]\w*):")


def stopped_in(error: dict) -> str:
    """The function of the file a failure stopped in: the one that raised NotImplementedError (the last frame),
    or the name a NameError found undefined; "" otherwise. The worker's word, for the summary's wording only."""
    where, kind = error.get("where") or [""], error.get("type")
    found = _UNDEFINED.match(str(error.get("message", ""))) if kind == "NameError" else None
    found = _FRAME.match(str(where[-1])) if kind == "NotImplementedError" else found
    return found.group(1) if found else ""


_KINDS = ((WorkerTimeout, "timeout"), (WorkerMemory, "memory"), (WorkerProtocol, "channel"))


def _failure_kind(exc: Exception) -> str:
    """The outcome kind of a worker failure (see ``checks.KINDS``): ``crash`` when the process just stopped."""
    return next((kind for cls, kind in _KINDS if isinstance(exc, cls)), "crash")


def _raised_kind(error: dict) -> str:
    """What the student's code raised, by the exception's class name as the worker reports it (a forged
    name only changes which kind a failing test shows: it earns nothing and raises no flag by itself)."""
    name = error.get("type")
    if name == "NotImplementedError":
        return "not-implemented"
    if name in ("SystemExit", "KeyboardInterrupt", "GeneratorExit"):
        return "exit"
    return "raised"


def _timeout_message(label: str, seconds: float) -> str:
    """A call that ran out of time: with the limit, counted as the student's own running time."""
    limit = f" ({seconds:g} s of its own running time per test)" if math.isfinite(seconds) else ""
    return f"{label} did not finish within the time limit{limit}: an infinite loop, or far too slow?"


def _worker_failure(exc: Exception, limits: Limits) -> str:
    if isinstance(exc, WorkerTimeout):
        return "it did not finish within the time limit"
    if isinstance(exc, WorkerMemory):
        detail = str(exc) or f"used more than {limits.rss_mb} MB of memory or started more than {limits.max_processes} processes"
        return f"it {detail}, and was stopped"
    if isinstance(exc, WorkerProtocol):
        return f"it interfered with the grader's channel ({exc})"
    return str(exc) or "the process stopped"
