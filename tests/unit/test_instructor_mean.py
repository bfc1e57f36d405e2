"""One class mean: per student, the latest submission (a group's score for each member), the same
number in grade-all's output, the dashboard and gradebook.csv; the regrade diff counts students.

No grading: grade-all runs on an export whose results are already in --out (it keeps them)."""

from __future__ import annotations

import argparse
import csv
import json
import re
from pathlib import Path

from autograder.cohort import batch
from autograder.cohort.class_stats import annotate_regrade, class_mean, mark_superseded
from autograder.cohort.cohort import regrade_diff
from autograder.cohort.export import Submission
from autograder.cohort.report import render_report
from autograder.config import KIT_ROOT, load_assignment

ATTENTION = load_assignment("attention", KIT_ROOT)


def _cohort() -> tuple[dict, dict[str, float]]:
    """{sid: (submitters, created_at)} and {sid: score}: 27 submissions from 26 students, with two
    resubmissions, a group of two, and a group whose member later resubmitted alone."""
    meta, scores = {}, {}
    for i in range(20):
        meta[f"submission_{100 + i}"] = ([(f"Student {i}", f"s{i}")], "2026-11-01 10:00:00.000000000 -08:00")
        scores[f"submission_{100 + i}"] = float(40 + 3 * i)
    meta["submission_200"] = ([("Ada", "a")], "2026-10-30 10:00:00.000000000 -08:00")  # superseded by 201
    meta["submission_201"] = ([("Ada", "a")], "2026-11-01 11:00:00.000000000 -08:00")
    meta["submission_202"] = ([("Bo", "b")], "2026-10-29 10:00:00.000000000 -08:00")  # superseded by 203
    meta["submission_203"] = ([("Bo", "b")], "2026-11-01 12:00:00.000000000 -08:00")
    meta["submission_204"] = ([("Cy", "c"), ("Di", "d")], "2026-11-01 09:00:00.000000000 -08:00")
    meta["submission_205"] = ([("Ed", "e"), ("Flo", "f")], "2026-10-31 09:00:00.000000000 -08:00")  # counts for Ed only
    meta["submission_206"] = ([("Flo", "f")], "2026-11-01 13:00:00.000000000 -08:00")
    scores.update(
        {
            "submission_200": 10.0,
            "submission_201": 100.0,
            "submission_202": 0.0,
            "submission_203": 90.0,
            "submission_204": 30.0,
            "submission_205": 20.0,
            "submission_206": 95.0,
        }
    )
    return meta, scores


def _document(score: float) -> dict:
    test = {
        "name": "softmax: rows sum to 1",
        "score": score,
        "max_score": 100.0,
        "status": "passed" if score == 100 else "failed",
        "output": "",
        "extra_data": {
            "test": "hidden/test_softmax.py::test_rows",
            "function": "softmax",
            "mistakes": [],
            "kind": "passed" if score == 100 else "wrong",
        },
    }
    return {"score": score, "tests": [test], "output": "", "extra_data": {"kind": "graded"}}


def _export(tmp_path: Path) -> tuple[Path, Path, dict[str, float]]:
    meta, scores = _cohort()
    export, out = tmp_path / "export", tmp_path / "out"
    lines = []
    for sid, (people, created) in meta.items():
        (export / sid).mkdir(parents=True)
        (export / sid / "attention.py").write_text("# graded already\n")
        lines.append(f"{sid}:\n  :submitters:")
        for name, student_id in people:
            lines.append(f"  - :name: {name}\n    :sid: '{student_id}'\n    :email: {student_id}@example.edu")
        lines.append(f"  :created_at: {created}")
    (export / "submission_metadata.yml").write_text("\n".join(lines) + "\n")
    (out / "results").mkdir(parents=True)
    for sid, score in scores.items():
        (out / "results" / f"{sid}.json").write_text(json.dumps(_document(score)))
    return export, out, scores


def _args(export: Path, out: Path, **extra) -> argparse.Namespace:
    base = dict(
        assignment="attention", folder=str(export), out=str(out), force=False, jobs=1, compare=None, due=None, canvas_column=""
    )
    return argparse.Namespace(**{**base, **extra})


def _gradebook(out: Path) -> list[dict]:
    return list(csv.DictReader((out / "gradebook.csv").read_bytes().decode("utf-8-sig").splitlines()))


def test_one_class_mean_everywhere(tmp_path, capsys):
    export, out, scores = _export(tmp_path)
    assert batch.main(_args(export, out)) == 0
    printed = capsys.readouterr().out

    rows = _gradebook(out)
    assert len(rows) == 26, "one row per student, the groups expanded"
    per_student = sum(float(r["total"]) for r in rows) / len(rows)
    every_submission = sum(scores.values()) / len(scores)
    subs = batch.find_submissions(export)
    mark_superseded(subs)
    latest_submissions = [scores[s.sid] for s in subs if not s.superseded_by]
    counted_once = sum(latest_submissions) / len(latest_submissions)
    assert len({round(per_student, 1), round(every_submission, 1), round(counted_once, 1)}) == 3, (
        "this cohort tells the three old definitions apart"
    )

    said = f"mean {per_student:.1f} over 26 students, latest submission each"
    assert said in printed.splitlines()[-1], printed
    documents = {sid: _document(score) for sid, score in scores.items()}
    assert str(class_mean(subs, documents)) == said
    report = (out / "report.html").read_text()
    assert said in report
    card = re.search(r'<div class="card"><b>([\d.]+)</b>mean score \(latest submission per student\)</div>', report)
    assert card and card.group(1) == f"{per_student:.1f}"
    assert re.search(rf"<th>mean</th><td class=num>{per_student:.1f}</td>", report)
    assert "<th>students</th><td class=num>26</td>" in report
    assert len(re.findall(r"\bmean\b", re.sub(r"<[^>]+>", " ", report))) == 3, "the header, the card and the table"


def test_the_regrade_diff_counts_students_whose_grade_changed(tmp_path, capsys):
    export, out, scores = _export(tmp_path)
    before = tmp_path / "before"
    (before / "results").mkdir(parents=True)
    changed = {"submission_200": -5.0, "submission_204": +5.0, "submission_105": -2.0, "submission_205": +1.0}
    for sid, score in scores.items():
        (before / "results" / f"{sid}.json").write_text(json.dumps(_document(score - changed.get(sid, 0.0))))
    assert batch.main(_args(export, out, compare=str(before))) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("regrade diff against"))
    # 204 is Cy and Di's (two students, up), 205 counts for Ed (up; Flo's is 206), 105 one student (down);
    # 200 is Ada's superseded upload: it changes no grade
    assert line.endswith(
        "4 students' grades changed (3 up, 1 down) in 3 submissions; "
        "1 superseded or removed submission(s) changed too (no student's grade)"
    ), line
    diff_rows = list(csv.DictReader((out / "regrade_diff.csv").read_bytes().decode("utf-8-sig").splitlines()))
    counts = {r["submission"]: r["counts"] for r in diff_rows}
    assert counts == {
        "submission_105": "yes",
        "submission_200": "no: superseded by submission_201",
        "submission_204": "yes",
        "submission_205": "yes",
    }
    report = (out / "report.html").read_text()
    assert "Regrade diff (4 students changed)" in report and "students whose score changed" in report
    assert "counts for nobody: superseded by submission_201" in report


def test_annotate_regrade_without_an_export_row_counts_for_nobody():
    subs = [Submission("1", Path("."), submitters=[{"name": "A", "sid": "a", "email": ""}])]
    diff = regrade_diff({"1": {"score": 1}, "gone": {"score": 3}}, {"1": {"score": 2}, "gone": {"score": 4}})
    summary = annotate_regrade(diff, subs)
    assert (summary.up, summary.down, summary.submissions, summary.not_counting) == (1, 0, 1, 1)
    assert [d["why_not"] for d in diff] == ["", "not in this export"]
    html = render_report(ATTENTION, subs, {"1": {"score": 2, "tests": []}}, diff, "earlier")
    assert "Regrade diff (1 student changed)" in html
