"""The release self-check's proof of the PrairieLearn question (registered with :func:`.proofs.proof`).

One job: when the release builds PrairieLearn (course.toml's ``platforms``), show that the built
``prairielearn/`` folder grades as autograder.zip does. Its grading files (engine, assignment, reference)
and its question's tests are autograder.zip's, byte for byte, so the reference's grading in the simulated
Gradescope tree (100, a proof of its own) is the grading PrairieLearn runs; its ``info.json`` gives the run
its time; and the untouched stub, graded end to end in a simulated ``/grade`` tree (:mod:`.prairielearn_sim`:
the entrypoint, the layout, PrairieLearn's results.json), scores 0.0 and is gradable. The reference is not
graded a second time here (a whole grading of the training suites: a fifth of a cold release); the kit's
``make proofs`` grades it, and a sample of the catalogue, through PrairieLearn and compares every test
with Gradescope's (tests/test_prairielearn_catalogue.py). It runs with the other ``zips`` proofs and is
remembered once passed for the same sources (``evidence.proven``). Imported by
:mod:`autograder.release.build`, which registers it wherever the proofs are listed.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from ..config import Assignment
from .proofs import Evidence, Report, proof

PROVEN_KEY = "prairielearn"


@proof(
    "the PrairieLearn question (when course.toml builds it) grades with autograder.zip's files byte for byte "
    "(so the reference's 100 there is its 1.0), gives the run its time, and grades the untouched stub to 0.0, "
    "gradable, in a simulated /grade tree",
    stage="zips",
)
def prairielearn_question(evidence: Evidence, report: Report) -> None:
    assignment, proven = evidence.assignment, evidence.proven
    tree = evidence.staged / "prairielearn" if evidence.staged is not None else None
    if tree is None or not tree.is_dir():
        return  # the release does not build PrairieLearn
    from .zip_proofs import artefact_hash

    what = f"{PROVEN_KEY}-{artefact_hash(tree)}-{artefact_hash(evidence.staged / 'autograder.zip')}"
    if proven is not None and what in proven:
        report.check(True, "the PrairieLearn question grades as autograder.zip does, and the stub to 0.0 (cached)")
        return
    differences = differences_from_gradescope(tree, assignment, evidence.staged / "autograder.zip")
    report.check(
        not differences,
        "the PrairieLearn question grades with autograder.zip's engine, assignment, reference and tests, byte for byte"
        + (f" (not: {'; '.join(differences[:5])})" if differences else ""),
    )
    timing = timeout_problem(tree, assignment)
    report.check(
        not timing, "the PrairieLearn question's info.json gives the grading its time" + (f" (not: {timing})" if timing else "")
    )
    from .prairielearn_sim import simulate

    try:  # the untouched stub as the question ships it (its editor's initial code, student.zip's stub)
        stub = (tree / "questions" / assignment.name / "initial_code.py").read_bytes()
        document = simulate(tree, assignment.name, {assignment.submit_file: stub})
        got = f"gradable {document.get('gradable')}, score {document.get('score')}"
        ok = document.get("gradable") is True and document.get("score") == 0.0
    except Exception as exc:  # noqa: BLE001 - report, don't crash the release
        got, ok = f"did not run: {exc}", False
    report.check(ok, f"the PrairieLearn question grades the untouched stub to 0.0 in a simulated /grade tree ({got})")
    if ok and not differences and not timing and proven is not None:
        proven.add(what)


def differences_from_gradescope(tree: Path, assignment: Assignment, autograder_zip: Path) -> list[str]:
    """What the PrairieLearn tree grades with that is not autograder.zip's (empty: the same grading): the
    grading package against the zip's files (each platform's own scripts aside), the question's tests
    against the zip's copy of the assignment's tests."""
    from .prairielearn_question import ENTRYPOINT, GRADESCOPE_ONLY, package_name

    with zipfile.ZipFile(autograder_zip) as zf:
        gradescope = {n: zf.read(n) for n in zf.namelist() if not n.endswith("/") and n not in GRADESCOPE_ONLY}
    package = tree / "serverFilesCourse" / package_name(assignment)
    prairielearn = {p.relative_to(package).as_posix(): p.read_bytes() for p in package.rglob("*") if p.is_file()}
    prairielearn.pop(ENTRYPOINT, None)
    tests = tree / "questions" / assignment.name / "tests"
    zip_tests = f"assignments/{assignment.name}/tests/"
    question_tests = {zip_tests + p.relative_to(tests).as_posix(): p.read_bytes() for p in tests.rglob("*") if p.is_file()}
    problems = [f"{n} missing" for n in sorted(gradescope) if n not in prairielearn]
    problems += [f"{n} not in autograder.zip" for n in sorted(prairielearn) if n not in gradescope]
    problems += [f"{n} differs" for n in sorted(gradescope) if n in prairielearn and prairielearn[n] != gradescope[n]]
    problems += [
        f"question tests/{n[len(zip_tests) :]} differs" for n, data in sorted(question_tests.items()) if gradescope.get(n) != data
    ]
    shipped = {n for n in gradescope if n.startswith(zip_tests)}
    problems += [f"question tests/{n[len(zip_tests) :]} missing" for n in sorted(shipped - set(question_tests))]
    return problems


def timeout_problem(tree: Path, assignment: Assignment) -> str:
    """Why info.json's external grading ``timeout`` is not the one the release computes for this assignment
    (empty when it is): a hand-edited or stale value would cut a whole grading the stub never reaches."""
    from ..platforms.prairielearn import grading_timeout

    try:
        info = json.loads((tree / "questions" / assignment.name / "info.json").read_text())
        timeout = info["externalGradingOptions"]["timeout"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return f"info.json unreadable ({exc})"
    wanted = grading_timeout(assignment)
    return "" if timeout == wanted else f"timeout {timeout} s, where the assignment's run needs {wanted} s"
