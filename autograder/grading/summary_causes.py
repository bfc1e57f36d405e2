"""Where the summary by function says a function's failures come from, when not from the function itself.

One job, for :func:`.feedback_text.function_summary`: the other functions a function is told to fix first (never
in a circle), and the functions its tests stopped in because they are not written yet or missing from the file
(``TestRecord.unwritten``). Everything is read from the record's fields.
"""

from __future__ import annotations

from .record import TestRecord


def own(function: str) -> tuple[str, str]:
    """A function's names: itself and its class ("AttnSeq2Seq.step" -> also "AttnSeq2Seq")."""
    return function, function.split(".")[0]


def fix_first(candidates: dict[str, set[str]], tests: list[TestRecord]) -> dict[str, list[str]]:
    """Each function -> the others it is told to fix first: of those its failing tests run (``candidates``), the
    ones failing a test of their own that does not run it and that its callers are not graded around (a test marked
    ``callers_apart``: sdpa's tests excuse a softmax without the all -inf guard, so that failure is never sdpa's
    cause). An edge on a circle is dropped (forward runs KVCache, KVCache's tests run forward, each failing on its
    own): neither comes first."""

    def alone(x: str, f: str) -> bool:  # x fails a test of its own that does not run f and f is not graded around
        return any(
            t.status != "passed" and not t.apart and x in own(t.function) and not set(own(f)) & {t.function, *t.uses}
            for t in tests
        )

    edges = {f: {x for x in xs if alone(x, f)} for f, xs in candidates.items()}

    def reaches(node: str, goal: str, seen: set[str]) -> bool:
        seen.add(node)
        nexts = [x for f, xs in edges.items() if node in own(f) for x in xs]
        return node in own(goal) or any(reaches(x, goal, seen) for x in nexts if x not in seen)

    return {f: sorted(x for x in xs if not reaches(x, f, set())) for f, xs in edges.items()}


def stops(tests: list[TestRecord], function: str = "") -> dict[str, str]:
    """The contract's functions other than ``function`` the failing ``tests`` stopped in -> "missing" (a NameError:
    the file does not define it) or "not-implemented" (it raised NotImplementedError)."""
    found: dict[str, str] = {}
    for t in tests:
        if t.status != "passed" and t.unwritten and t.unwritten not in own(function):
            found.setdefault(t.unwritten, "not-implemented" if t.kind == "not-implemented" else "missing")
    return found


def stop_words(found: dict[str, str]) -> str:
    """ "its tests stop in your `f`, not implemented yet", or "... at `f`, which your file does not define (...)"."""
    said = [
        f"in your `{name}`, not implemented yet"
        if how == "not-implemented"
        else f"at `{name}`, which your file does not define (missing: define it with exactly that name)"
        for name, how in found.items()
    ]
    return "its tests stop " + "; and ".join(said) if said else ""


def unwritten_lines(tests: list[TestRecord], graded: set[str]) -> list[str]:
    """A summary line for each function the tests stopped in that has no tests of its own (it is graded through
    its callers): what it is, and whose tests it stops."""
    lines = []
    for name, how in stops(tests).items():
        callers = ", ".join(dict.fromkeys(f"`{t.function}`" for t in tests if t.unwritten == name))
        what = "not implemented yet" if how == "not-implemented" else "missing: your file does not define it"
        lines += [] if name in graded else [f"- {name}: {what} (graded through {callers}, whose tests stop in it)"]
    return lines
