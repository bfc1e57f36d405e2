"""Whether each mistake's ``CAUGHT_BY`` says what a submission with it really loses, and the list that would.

One job: advice for the author, never a refusal. The release grades each catalogued mistake on its
``CAUGHT_BY`` tests only (the proofs need nothing else, and the training tests are most of the time), so it
cannot see a mistake that also fails other tests: there a real submission's feedback names no mistake (the
diagnosis replays a test only on the mistakes that claim it) and it loses more than the release's table says
(seq2seq's ``attend_no_scaling``: 15 points in its three declared tests, 67 in a whole grading). Nor does a
mistake graded on its declared tests show why it is "not named": a declared test it passes makes the
diagnosis rule it out everywhere (it predicts a failure that did not happen).

:func:`whole_suite` grades mistakes on every test (cached like every grading, on the whole suite's key);
:func:`advice` compares that grading with the declaration and proposes the ``CAUGHT_BY`` that matches (every
test it loses points in, in the assignment's order). The self-check (:func:`advise`) grades on the whole
suite only the mistakes whose proofs failed, and shows the advice of every mistake whose whole-suite grading
is in the cache; ``python -m autograder caught-by <a>`` (``make caught-by``) grades them all.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from ..catalogue import CatalogueEntry, read_catalogue, submission_source
from ..config import KIT_ROOT, Assignment
from .catalogue_grading import UNSTABLE_LOADS
from .proofs import Evidence, Report

Grade = Callable[..., dict]  # catalogue_grading.grade_sources (the self-check's tests hand in a fake)


def lost_by_test(document: dict) -> dict[str, float]:
    """{test key: points lost}, a test's parametrized cases together."""
    lost: dict[str, float] = {}
    for t in document.get("tests", []):
        key = t.get("extra_data", {}).get("test", t["name"])
        lost[key] = lost.get(key, 0.0) + t["max_score"] - t["score"]
    return {k: round(v, 4) for k, v in lost.items() if v > 1e-9}


def named(document: dict) -> set[str]:
    return {m for t in document.get("tests", []) for m in t.get("extra_data", {}).get("mistakes", [])}


def where(entry: CatalogueEntry) -> str:
    """The entry's file, as the author finds it (relative to the kit when it is inside)."""
    try:
        return str(Path(entry.path).resolve().relative_to(KIT_ROOT.resolve()))
    except ValueError:
        return str(entry.path)


def whole_suite(
    assignment: Assignment, entries: list[CatalogueEntry], grade: Grade, cache: Path, fingerprint: str, run: bool
) -> dict[str, dict]:
    """{mistake: its grading on every test}: graded now (``run``) or only those already in the cache."""
    if not entries:
        return {}
    sources = {f"mistake:{e.name}": submission_source(assignment, e) for e in entries}
    docs = grade(assignment, sources, cache=cache, fingerprint=fingerprint, cached_only=not run)
    return {label.split(":", 1)[1]: doc for label, doc in docs.items() if label in sources}


def proposal(assignment: Assignment, document: dict) -> list[str]:
    """The tests a whole-suite grading lost points in, in the assignment's order: the CAUGHT_BY that matches."""
    lost = lost_by_test(document)
    return [k for k in assignment.points if k in lost]


def _short(keys: list[str]) -> str:
    return ", ".join(k.split("::")[-1] for k in keys)


def advice(assignment: Assignment, entry: CatalogueEntry, document: dict, full: bool = True) -> str:
    """What the declaration of ``entry`` gets wrong, given its whole-suite grading ("" when it is right, or
    when the grading is not one to go by: the grader broke, or the code ran out of time or memory). ``full``:
    with the test ids and the CAUGHT_BY that matches; else one short line that says where to get them."""
    extra = document.get("extra_data", {})
    if document.get("_exit_code", 0) != 0 or extra.get("stopped") or extra.get("load") in UNSTABLE_LOADS:
        return ""
    lost = lost_by_test(document)
    declared = set(entry.caught_by)
    outside = [k for k in assignment.points if k in lost and k not in declared]
    passed = [k for k in entry.caught_by if k not in lost]
    if not outside and not passed:
        return ""
    parts = []
    declared_loss = sum(v for k, v in lost.items() if k in declared)
    if not full:
        if outside:
            parts.append(
                f"also loses points outside its CAUGHT_BY, in {_short(outside)} ({sum(lost.values()):g} points in all, "
                f"not the {declared_loss:g} of its declared tests)"
            )
        if passed:
            parts.append(f"CAUGHT_BY names {_short(passed)}, which it passes (so it is named nowhere)")
        how = f"`python -m autograder caught-by {assignment.name}` prints the CAUGHT_BY that matches"
        return f"mistake {entry.name} ({where(entry)}): " + "; ".join(parts) + f"; {how}"
    if outside:
        parts.append(
            f"also loses points in {len(outside)} test(s) outside its CAUGHT_BY: {outside} (their feedback names no "
            f"mistake there); a submission with it loses {sum(lost.values()):g} points, not the {declared_loss:g} of "
            "its declared tests (the release's table)"
        )
    if passed:
        parts.append(
            f"CAUGHT_BY names {passed}, which it passes: the diagnosis rules out a mistake whose declared tests "
            "pass, so it is named nowhere"
        )
    matching = proposal(assignment, document)
    fix = f"CAUGHT_BY = {matching!r} matches what it fails" if matching else "it fails no test: no CAUGHT_BY can match"
    return f"mistake {entry.name} ({where(entry)}): " + "; ".join(parts) + f". {fix}"


def suspect(entry: CatalogueEntry, declared_document: dict) -> bool:
    """The release's grading on the declared tests shows something off: a declared test it passes, no point
    lost, or the mistake named nowhere (its proofs fail; the whole suite says why)."""
    lost = lost_by_test(declared_document)
    return not lost or any(k not in lost for k in entry.caught_by) or entry.name not in named(declared_document)


def advise(evidence: Evidence, report: Report, grade: Grade, cache: Path, fingerprint: str) -> None:
    """The self-check's advice lines (never problems): every mistake whose whole-suite grading is known,
    the suspects' graded now; and how to see the rest."""
    assignment, mistakes = evidence.assignment, evidence.mistakes
    suspects = [e for e in mistakes if suspect(e, evidence.graded.get(f"mistake:{e.name}", {}))]
    whole = whole_suite(assignment, suspects, grade, cache, fingerprint, run=True)
    whole |= whole_suite(assignment, [e for e in mistakes if e.name not in whole], grade, cache, fingerprint, run=False)
    for entry in mistakes:
        if entry.name in whole:  # the suspects' in full (the release fails on them), the others in a line each
            line = advice(assignment, entry, whole[entry.name], full=entry in suspects)
            if line:
                report.lines.append(f"  [advice] {line}")
    unknown = [e.name for e in mistakes if e.name not in whole]
    if unknown:
        report.lines.append(
            f"  [advice] {len(unknown)} of {len(mistakes)} mistakes were graded on their CAUGHT_BY tests only: "
            f"`python -m autograder caught-by {assignment.name}` grades them on every test (cached: the next release "
            "shows the result) and proposes the CAUGHT_BY that matches what each fails"
        )


def main(names: list[str], grade: Grade | None = None) -> int:
    """``caught-by``: grade every mistake of each assignment on the whole suite; print each declaration that
    does not match, with the CAUGHT_BY that does. Exit 1 when one does not."""
    from ..config import load_assignment
    from .catalogue_grading import DEFAULT_CACHE, _fingerprint, grade_sources

    grade = grade or grade_sources
    status = 0
    for name in names:
        assignment = load_assignment(name)
        mistakes = read_catalogue(assignment, "mistake")
        whole = whole_suite(assignment, mistakes, grade, DEFAULT_CACHE, _fingerprint(assignment), run=True)
        lines = [line for e in mistakes if (line := advice(assignment, e, whole.get(e.name, {"_exit_code": 1})))]
        for line in lines:
            print(f"[{name}] {line}")
        print(f"[{name}] {len(mistakes) - len(lines)} of {len(mistakes)} mistakes' CAUGHT_BY match the tests they fail")
        status |= 1 if lines else 0
    return status
