"""Every release proves its tests: the self-check (reference 100, stub 0, variants 100,
each catalogued mistake caught by its declared tests and named, no hidden test that catches nothing)."""

import tempfile
from pathlib import Path

import pytest
from conftest import KIT, grade

from autograder.config import load_assignment
from autograder.release import build_zips
from autograder.selfcheck import self_check


def test_self_check_passes(assignment_name):
    assignment = load_assignment(assignment_name, KIT)
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in build_zips(assignment).items():
            (Path(tmp) / name).write_bytes(data)
        report = self_check(assignment, Path(tmp))
    print(report.text())
    assert report.ok, report.text()


DO_NOTHING = Path(__file__).parent / "do_nothing"


# Known gaps, for the owner of the assignment: what a do-nothing submission still earns there.
DO_NOTHING_GAPS: dict[str, str] = {}


def test_do_nothing_scores_zero_and_points_add_up_exactly(assignment_name, tmp_path, request):
    """A submission that computes nothing (uniform weights, zero outputs, constant answers) earns no point;
    the points of all the tests, parametrized cases included, add up to exactly 100 in any order."""
    if assignment_name in DO_NOTHING_GAPS:
        request.applymarker(pytest.mark.xfail(reason=DO_NOTHING_GAPS[assignment_name], strict=True))
    assignment = load_assignment(assignment_name, KIT)
    upload = tmp_path / "upload"
    upload.mkdir()
    source = assignment.solution.read_text() + "\n\n" + (DO_NOTHING / f"{assignment_name}.py").read_text()
    (upload / assignment.submit_file).write_text(source)
    document = grade(assignment_name, upload, tmp_path)
    paid = {t["extra_data"]["test"]: t["score"] for t in document["tests"] if t["score"] > 0}
    assert document["score"] == 0 and not paid, f"a do-nothing submission earned {document['score']}: {paid}"
    maxima = [t["max_score"] for t in document["tests"]]
    assert sum(maxima) == 100 and sum(reversed(maxima)) == 100, sum(maxima)


def test_local_pytest_reports_banned_calls_as_grading_does(tmp_path):
    """A softmax calling torch.softmax passes nothing locally: the student's pytest fails with grading's words."""
    import shutil
    import subprocess
    import sys

    folder = tmp_path / "attention"
    shutil.copytree(KIT / "student_template" / "attention", folder)
    source = (KIT / "solutions" / "attention" / "attention.py").read_text()
    (folder / "attention.py").write_text(source + "\n\ndef softmax(x, dim=-1):\n    return torch.softmax(x, dim=dim)\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 1, run.stdout[-2000:]
    assert "uses torch.softmax (line" in run.stdout and "which this assignment does not allow" in run.stdout, run.stdout[-2000:]
