"""Each submission graded by `grade-many` (one grader process, as `grade-all` and the self-check use
it) gets the same results as when graded alone: nothing one submission's tests leave in the
grader's memory (support-module globals, the reference, seeds) reaches the next."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import KIT, reference_source, stub_source

MISTAKE = reference_source("attention").replace("/ math.sqrt(d_k)", "/ d_k")


def _strip(document: dict) -> dict:
    document = dict(document)
    document.pop("execution_time", None)
    return document


def test_a_submission_grades_the_same_before_and_after_others(tmp_path):
    assert MISTAKE != reference_source("attention"), "the mistake must change the reference"
    uploads = {"mistake": MISTAKE, "reference": reference_source("attention"), "stub": stub_source("attention")}
    for name, source in uploads.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "attention.py").write_text(source)
    order = ["mistake", "reference", "stub", "mistake"]
    jobs = [[str(tmp_path / name), str(tmp_path / f"{i}-{name}.json")] for i, name in enumerate(order)]
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "grade-many", "attention", str(tmp_path / "jobs.json")],
        cwd=KIT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    documents = [json.loads((tmp_path / f"{i}-{name}.json").read_text()) for i, name in enumerate(order)]
    assert 0 < documents[0]["score"] < 100 and documents[1]["score"] == 100 and documents[2]["score"] == 0
    assert _strip(documents[0]) == _strip(documents[3])
