"""The simulated PrairieLearn run grades the catalogue with Gradescope's points and words, in all six assignments.

Each case grades one catalogued submission of one assignment twice: through PrairieLearn's entrypoint
(``run_grader.sh`` in a simulated ``/grade`` tree laid out from a freshly written ``prairielearn/``
folder, ``PL_GRADE_ROOT``, as tests/test_prairielearn.py does) and through the Gradescope grading the
release caches (``catalogue_grading.grade_sources``, the real CLI on the whole suite: the release's
``.cache/selfcheck`` already holds the stub's, the variants' and the corpus's; a mistake, which the
release grades only on its ``caught_by`` tests, and the reference are graded whole once, then cached
alike). It asserts PrairieLearn's score times the assignment's total is Gradescope's score, the same
tests in the same order with the same points and maximum, each test passed or failed alike, a shown
(public) test's feedback word for word, a hidden test's feedback held back with its points kept, and
the summary line the same.

What ``make proofs`` runs is a fixed sample per assignment (7 of the 34 to 44 entries, 42 PrairieLearn
gradings): the reference, the stub, three mistakes (the first, middle and last in name order), the
first variant and the first corpus entry; about 4 min on the 2-core machine with the Gradescope side
cached. ``KIT_PL_CATALOGUE=all`` runs the whole catalogue instead (238 gradings on each platform: the
reference, the stub, do-nothing, every mistake, variant, corpus entry and corpus entry with its bug;
measured 2026-12-03, see the README), for a change to the engine or the renderer:
``KIT_PL_CATALOGUE=all .venv/bin/python -m pytest tests/test_prairielearn_catalogue.py -q -n 2``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import ASSIGNMENTS, KIT

from autograder.config import load_assignment
from autograder.platforms.prairielearn_results import HELD_BACK
from autograder.release import prairielearn_sim
from autograder.release.catalogue_grading import catalogue_sources, grade_sources
from autograder.release.markers import make_stub
from autograder.release.prairielearn_question import prairielearn_files, write_tree

pytestmark = pytest.mark.proof
WHOLE = os.environ.get("KIT_PL_CATALOGUE", "") == "all"


def sample_labels(assignment_name: str) -> list[str]:
    """The labels graded for one assignment: the whole catalogue, or the fixed sample of make proofs."""
    assignment = load_assignment(assignment_name, KIT)
    sources, _only, _errors = catalogue_sources(assignment)
    labels = ["reference", *sources]
    if WHOLE:
        return labels
    mistakes = [label for label in labels if label.startswith("mistake:")]
    picked = [mistakes[0], mistakes[len(mistakes) // 2], mistakes[-1]] if len(mistakes) >= 3 else mistakes
    firsts = [next((label for label in labels if label.startswith(f"{kind}:")), None) for kind in ("variant", "corpus")]
    return ["reference", "stub", *dict.fromkeys(picked), *(label for label in firsts if label)]


CASES = [(name, label) for name in ASSIGNMENTS for label in sample_labels(name)]


def source_of(assignment, label: str) -> str:
    if label == "reference":
        return assignment.solution.read_text()
    sources, _only, _errors = catalogue_sources(assignment)
    return sources[label]


@pytest.mark.parametrize(("assignment_name", "label"), CASES, ids=[f"{a}-{label}" for a, label in CASES])
def test_prairielearn_grades_the_catalogue_as_gradescope(assignment_name, label):
    assignment = load_assignment(assignment_name, KIT)
    source = source_of(assignment, label)
    # Gradescope's grading of the whole suite (the release's cache, or graded now and cached).
    gradescope = grade_sources(assignment, {label: source}, jobs_n=1)[label]
    assert gradescope["_exit_code"] == 0 and gradescope["score"] is not None, f"{label}: Gradescope's grading broke"
    folder = Path(tempfile.mkdtemp(prefix="kit-pl-catalogue-"))
    try:
        tree = write_tree(prairielearn_files(assignment, make_stub(assignment.solution.read_text())), folder / "tree")
        prairielearn = prairielearn_sim.simulate(tree, assignment.name, {assignment.submit_file: source.encode()})
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    compare(assignment, label, gradescope, prairielearn)


def compare(assignment, label: str, gradescope: dict, prairielearn: dict) -> None:
    """PrairieLearn's results of ``label`` say what Gradescope's say: score, per-test points, shown words."""
    assert prairielearn["gradable"] is True, f"{label}: not gradable on PrairieLearn: {prairielearn['format_errors']}"
    total = assignment.total_points
    # PrairieLearn's score is Gradescope's over the total, kept to 4 decimals
    assert abs(prairielearn["score"] * total - gradescope["score"]) <= total * 5e-5 + 1e-9, (
        f"{label}: PrairieLearn {prairielearn['score']} x {total:g} != Gradescope {gradescope['score']}"
    )
    got = [(t["name"], t["points"], t["max_points"]) for t in prairielearn["tests"]]
    expected = [(t["name"], t["score"], t["max_score"]) for t in gradescope["tests"]]
    assert got == expected, f"{label}: per-test points differ: " + "; ".join(
        f"{g} != {e}" for g, e in zip(got, expected) if g != e
    )
    for pl, gs in zip(prairielearn["tests"], gradescope["tests"]):
        passed = gs.get("status") == "passed"
        assert pl["message"].startswith("Passed." if passed else "Failed."), f"{label}: {gs['name']}: {pl['message']!r}"
        if gs.get("visibility", "visible") == "visible":
            assert pl["description"].startswith("public"), f"{label}: {gs['name']} is shown on Gradescope only"
            assert pl["output"] == gs.get("output", ""), f"{label}: {gs['name']}: the shown feedback differs"
        else:
            assert pl["description"].startswith("hidden"), f"{label}: {gs['name']} is shown on PrairieLearn only"
            assert pl["output"] == ("" if passed else HELD_BACK), f"{label}: {gs['name']}: hidden feedback shown"
    # the same words, except the promise PrairieLearn does not make (hidden feedback published later)
    summary = gradescope["output"].replace("; their full feedback once grades are published", "")
    assert prairielearn["message"] == summary.split("\n\n", 1)[0], f"{label}: the summary line differs"
    assert prairielearn["output"] == summary, f"{label}: the summary differs"
