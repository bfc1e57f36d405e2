"""grade-all on a Gradescope export and a plain folder: results, gradebook, report, resume."""

import csv
import json

from conftest import KIT, reference_source, run_cli, stub_source

from autograder.config import load_assignment
from autograder.selfcheck import read_catalogue, submission_source

METADATA = """\
submission_1001:
  :submitters:
  - :name: Ada Lovelace
    :sid: '111'
    :email: ada@example.edu
  :created_at: 2026-11-01 10:00:00.000000000 -08:00
submission_1002:
  :submitters:
  - :name: Alan Turing
    :sid: '222'
    :email: alan@example.edu
submission_1003:
  :submitters:
  - :name: Grace Hopper
    :sid: '333'
    :email: grace@example.edu
submission_1004:
  :submitters:
  - :name: Ada Lovelace
    :sid: '111'
    :email: ada@example.edu
"""


def _export(folder, files):
    folder.mkdir()
    (folder / "submission_metadata.yml").write_text(METADATA)
    for sid, (name, source) in files.items():
        (folder / sid).mkdir()
        (folder / sid / name).write_text(source)
    return folder


def test_gradescope_export_gradebook_report_and_resume(tmp_path):
    assignment = load_assignment("attention", KIT)
    mistake = read_catalogue(assignment, "mistake")[0]
    export = _export(
        tmp_path / "export",
        {
            "submission_1001": ("attention.py", reference_source("attention")),
            "submission_1002": ("attention.py", stub_source("attention")),
            "submission_1003": ("attention.py", submission_source(assignment, mistake)),
            "submission_1004": ("notes.py", "x = 1\n"),
        },
    )
    out = tmp_path / "out"
    proc = run_cli("grade-all", "attention", str(export), "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "111 appears in 2 submissions" in proc.stderr
    rows = list(csv.DictReader(open(out / "gradebook.csv")))
    by_sub = {r["submission"]: r for r in rows}
    assert by_sub["submission_1001"]["name"] == "Ada Lovelace" and float(by_sub["submission_1001"]["total"]) == 100
    assert float(by_sub["submission_1002"]["total"]) == 0
    assert 0 < float(by_sub["submission_1003"]["total"]) < 100
    assert float(by_sub["submission_1004"]["total"]) == 0
    assert "also has submission" in by_sub["submission_1001"]["notes"]
    report = (out / "report.html").read_text()
    assert "cohort report" in report and "data:image/png;base64" in report
    doc = json.loads((out / "results" / "submission_1003.json").read_text())
    named = {m for t in doc["tests"] for m in t["extra_data"]["mistakes"]}
    assert mistake.name in named and mistake.name in report

    again = run_cli("grade-all", "attention", str(export), "--out", str(out))
    assert again.returncode == 0 and "4 submission(s) already graded" in again.stdout
    assert list(csv.DictReader(open(out / "gradebook.csv"))) == rows, "regrading must be deterministic"


def test_bad_folders_get_clear_messages(tmp_path):
    (tmp_path / "empty").mkdir()
    proc = run_cli("grade-all", "attention", str(tmp_path / "empty"), "--out", str(tmp_path / "o1"))
    assert proc.returncode == 2 and "empty" in proc.stderr
    other = tmp_path / "other"
    other.mkdir()
    (other / "alice").mkdir()
    (other / "alice" / "report.txt").write_text("hello")
    proc = run_cli("grade-all", "attention", str(other), "--out", str(tmp_path / "o2"))
    assert proc.returncode == 2 and "another assignment" in proc.stderr
    proc = run_cli("grade-all", "nosuch", str(other), "--out", str(tmp_path / "o3"))
    assert proc.returncode == 2 and "unknown assignment" in proc.stderr


def test_grade_many_forks_every_worker_from_one_template(tmp_path):
    """Batch grading imports torch once: each submission's fresh worker is forked from the template."""
    jobs = []
    for i, source in enumerate((reference_source("attention"), stub_source("attention"), reference_source("attention"))):
        upload = tmp_path / f"upload{i}"
        upload.mkdir()
        (upload / "attention.py").write_text(source)
        jobs.append([str(upload), str(tmp_path / f"results{i}.json")])
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    proc = run_cli("grade-many", "attention", str(tmp_path / "jobs.json"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "3 of 3 workers forked from the template" in proc.stderr
    scores = [json.loads((tmp_path / f"results{i}.json").read_text())["score"] for i in range(3)]
    assert scores == [100, 0, 100]
