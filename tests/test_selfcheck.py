"""The release self-check's own rules, and local pytest's banned-call report.

Every assignment's self-check (reference 100, stub 0, do-nothing 0, variants and corpus 100, each
catalogued mistake caught and named, the notebook, another seed) runs in `make release`, which
CI runs on a fresh clone; `test_release.py` runs one assignment's release end to end here.
These tests prove that the self-check refuses what it must, on crafted gradings.
"""

import shutil
import subprocess
import sys

import pytest
from conftest import KIT

from autograder.config import load_assignment
from autograder.release import catalogue_grading, selfcheck

ASSIGNMENT = load_assignment("embeddings", KIT)


def _test(key: str, score: float, max_score: float, output: str = "", mistakes=()) -> dict:
    return {
        "name": key,
        "score": score,
        "max_score": max_score,
        "output": output,
        "extra_data": {"test": key, "mistakes": list(mistakes)},
    }


def _perfect(labels) -> dict[str, dict]:
    """Gradings where every claim holds: the self-check's documents for a sound assignment."""
    keys = list(ASSIGNMENT.points)
    full = [_test(k, ASSIGNMENT.points[k], ASSIGNMENT.points[k]) for k in keys]
    docs = {}
    for label in labels:
        if label in ("stub", "do-nothing"):
            docs[label] = {
                "score": 0,
                "_exit_code": 0,
                "tests": [_test(k, 0, ASSIGNMENT.points[k], "softmax: not implemented yet") for k in keys],
            }
        elif label.startswith("mistake:"):
            name = label.split(":", 1)[1]
            entry = next(e for e in selfcheck.read_catalogue(ASSIGNMENT, "mistake") if e.name == name)
            caught = [_test(k, 0, ASSIGNMENT.points[k], "wrong", [name]) for k in entry.caught_by]
            docs[label] = {"score": 100 - sum(ASSIGNMENT.points[k] for k in entry.caught_by), "_exit_code": 0, "tests": caught}
        elif label.startswith("corpus-bug:"):
            docs[label] = {"score": 90, "_exit_code": 0, "tests": [_test(keys[0], 0, ASSIGNMENT.points[keys[0]])]}
        else:
            docs[label] = {"score": 100, "_exit_code": 0, "tests": full}
    return docs


@pytest.fixture
def run_check(monkeypatch, tmp_path):
    """self_check with the gradings replaced by ``tamper(perfect documents)``; returns the report."""

    def run(tamper) -> selfcheck.Report:
        def fake_grade(assignment, sources, **kwargs):
            docs = _perfect(sources)
            if "cached_only" in kwargs:  # the advice's whole-suite gradings of mistakes (caught_by.py): none cached
                return {} if kwargs["cached_only"] else docs
            tamper(docs)
            return docs

        monkeypatch.setattr(selfcheck, "grade_sources", fake_grade)
        monkeypatch.setattr(selfcheck, "_check_zips", lambda *a, **k: {"score": 100, "_exit_code": 0, "tests": []})
        return selfcheck.self_check(ASSIGNMENT, tmp_path, cache=tmp_path / "cache")

    return run


def test_a_sound_assignment_passes(run_check):
    report = run_check(lambda docs: None)
    assert report.ok, report.text()


def _paid_do_nothing(docs):
    docs["do-nothing"]["tests"][0]["score"] = 1.5
    docs["do-nothing"]["score"] = 1.5


def _mute_stub(docs):
    for t in docs["stub"]["tests"]:
        t["output"] = "wrong"


def _points_off(docs):
    docs["stub"]["tests"][0]["max_score"] += 0.1


def _unnamed(docs):
    label = next(k for k in docs if k.startswith("mistake:"))
    for t in docs[label]["tests"]:
        t["extra_data"]["mistakes"] = []


def _escaped(docs):
    label = next(k for k in docs if k.startswith("mistake:"))
    docs[label]["tests"] = docs[label]["tests"][1:] or []


def _variant_loses(docs):
    label = next(k for k in docs if k.startswith("variant:"))
    docs[label]["score"] = 99


def _reference_named(docs):
    label = next(k for k in docs if k.startswith("corpus:"))
    docs[label]["tests"] = [dict(docs[label]["tests"][0], extra_data={"test": "x", "mistakes": ["ppmi_no_clip"]})]


@pytest.mark.parametrize(
    "tamper, finding",
    [
        (_paid_do_nothing, "computes nothing"),
        (_mute_stub, "not implemented yet"),
        (_points_off, "add up to exactly 100"),
        (_unnamed, "is named in the feedback"),
        (_escaped, "NOT caught by declared"),
        (_variant_loses, "scores 100"),
        (_reference_named, "is not diagnosed with any mistake"),
    ],
)
def test_the_self_check_refuses(run_check, tamper, finding):
    report = run_check(tamper)
    assert not report.ok and any(finding in p for p in report.problems), report.text()


def test_local_pytest_reports_banned_calls_as_grading_does(tmp_path):
    """A softmax calling torch.softmax passes nothing locally: the student's pytest fails with grading's words."""
    folder = tmp_path / "attention"
    shutil.copytree(KIT / "student_template" / "attention", folder)
    source = (KIT / "solutions" / "attention" / "attention.py").read_text()
    (folder / "attention.py").write_text(source + "\n\ndef softmax(x, dim=-1):\n    return torch.softmax(x, dim=dim)\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 1, run.stdout[-2000:]
    assert "uses torch.softmax (line" in run.stdout and "which this assignment does not allow" in run.stdout, run.stdout[-2000:]


def test_an_assignment_without_do_nothing_is_refused(run_check, monkeypatch):
    monkeypatch.setattr(catalogue_grading, "do_nothing_source", lambda assignment: None)
    report = run_check(lambda docs: docs.pop("do-nothing", None))
    assert any("declares a submission that computes nothing" in p for p in report.problems), report.text()
