"""The term's rules (course.toml's [late] and [extensions]): each total after the late policy, said in words,
and late days spent once per student across the term's assignments (no grading: results made by hand)."""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
from pathlib import Path

import pytest

from autograder.cohort import batch
from autograder.cohort.late_days import ledger_path, read_ledger, record, spent_before
from autograder.cohort.late_policy import (
    Amount,
    LatePolicy,
    apply_policy,
    days_late,
    deadline_for,
    load_extensions,
    load_policy,
)
from autograder.config import ConfigError, load_assignment

UTC = dt.timezone.utc
DUE = dt.datetime(2027, 2, 22, 23, 59, 59, tzinfo=UTC)
TEN = LatePolicy(grace_minutes=15, per_day=Amount(10, True), late_days=2)


def after(**delta) -> dt.datetime:
    return DUE + dt.timedelta(**delta)


def test_days_late_count_any_part_of_a_day_after_the_grace_period():
    assert days_late(after(minutes=15), DUE, 15) == 0 and days_late(after(minutes=16), DUE, 15) == 1
    assert days_late(after(hours=24), DUE) == 1 and days_late(after(hours=24, seconds=1), DUE) == 2
    assert days_late(after(hours=-3), DUE) == 0 and days_late(None, DUE) is None and days_late(after(), None) is None


@pytest.mark.parametrize(
    ("policy", "raw", "submitted", "available", "total", "used", "rule"),
    [
        (TEN, 80, after(hours=30), 1, 72.0, 1, "2 days late: 1 late day used, 10 % off the rest"),
        (TEN, 80, after(hours=30), 2, 80.0, 2, "2 days late: 2 late days used (0 left)"),
        (TEN, 80, after(hours=30), 0, 64.0, 0, "2 days late: no late days left, 10 % off per day"),
        (TEN, 80, after(days=20), 0, 0.0, 0, "20 days late: no late days left, 10 % off per day"),
        (TEN, 80, after(minutes=10), 2, 80.0, 0, "on time: within the grace period"),
        (LatePolicy(per_day=Amount(5, False)), 80, after(days=2), 0, 70.0, 0, "2 days late: 5 points off per day"),
        (LatePolicy(cap=Amount(70, True)), 85, after(days=1), 0, 70.0, 0, "1 day late: capped at 70.00"),
        (LatePolicy(cap=Amount(70, True)), 60, after(days=1), 0, 60.0, 0, "1 day late: under the cap of 70 %, no deduction"),
        (LatePolicy(), 85, after(days=3), 0, 85.0, 0, "3 days late; course.toml has no late policy"),
    ],
)
def test_what_each_row_says_it_applied(policy, raw, submitted, available, total, used, rule):
    outcome = apply_policy(raw, submitted, DUE, policy, available, 100)
    assert (outcome.total, outcome.late_days_used, outcome.rule) == (total, used, rule)
    assert outcome.raw_total == raw and abs(outcome.raw_total - outcome.penalty - outcome.total) < 1e-9


def test_no_deadline_no_time_and_an_extension():
    assert apply_policy(80, after(days=3), None, TEN, 2, 100).rule == "no deadline in force"
    assert apply_policy(80, None, DUE, TEN, 2, 100).rule == "no submission time"
    later = after(days=2)
    outcome = apply_policy(80, after(days=1), later, TEN, 2, 100, extension="2027-02-24 23:59 UTC")
    assert outcome.rule == "on time (extension to 2027-02-24 23:59 UTC)" and not outcome.late


def test_course_toml_rules_are_read_and_checked(tmp_path):
    course = tmp_path / "course.toml"
    course.write_text(
        '[late]\ngrace_minutes = 10\nper_day = "10%"\ncap = 60\nlate_days = 3\n\n'
        '[extensions.attention]\n"111" = 2027-02-24T17:00:00-08:00\n"Ada@Example.edu" = 2027-02-25\n'
    )
    policy = load_policy(path=course)
    assert policy == LatePolicy(10.0, Amount(10, True), Amount(60, False), 3, "late_days.csv") and policy.configured
    extensions = load_extensions("attention", "UTC", path=course)
    assert extensions == {"111": dt.datetime(2027, 2, 25, 1, 0, tzinfo=UTC), "ada@example.edu": after(days=3)}
    assert deadline_for({"sid": "222", "email": "ADA@example.edu"}, DUE, extensions) == (after(days=3), True)
    assert (
        deadline_for({"sid": "222"}, DUE, extensions) == (DUE, False)
        and deadline_for({"sid": "111"}, None, extensions)[0] is None
    )
    assert load_extensions("multihead", "UTC", path=course) == {} and not load_policy(path=tmp_path / "none.toml").configured
    for bad, message in (
        ("per_dya = 5", "did you mean 'per_day'"),
        ('per_day = "ten"', "a percentage"),
        ("late_days = 1.5", "whole number"),
    ):
        course.write_text(f"[late]\n{bad}\n")
        with pytest.raises(ConfigError, match=message):
            load_policy(path=course)


def test_the_ledger_spends_each_day_once_in_the_course_order(tmp_path):
    path = ledger_path("ledger.csv", tmp_path / "grading" / "attention")
    assert path == (tmp_path / "grading" / "ledger.csv").resolve()
    order = ["embeddings", "seq2seq", "attention", "multihead"]
    assert record(path, "embeddings", {"111": (1, "s1"), "222": (0, "s2")}, budget=3) == []
    assert record(path, "multihead", {"111": (1, "s3")}, budget=3) == []
    rows = read_ledger(path)
    assert [(r["student"], r["assignment"]) for r in rows] == [("111", "embeddings"), ("111", "multihead")], "no zero rows"
    assert spent_before(rows, "attention", order) == {"111": 1}, "multihead comes after attention: not spent yet"
    assert spent_before(rows, "multihead", order) == {"111": 1}
    warnings = record(path, "attention", {"111": (1, "s4")}, budget=3)
    assert warnings == [] and spent_before(read_ledger(path), "multihead", order) == {"111": 2}
    warnings = record(path, "attention", {"111": (2, "s4")}, budget=3)  # a regrade replaces the assignment's rows
    assert (
        len(read_ledger(path)) == 3 and warnings and "111 has spent 4 late days in ledger.csv, over the term's 3" in warnings[0]
    )


def _export(root: Path, assignment: str, people: dict[str, tuple[str, str]]) -> None:
    """root/export-<assignment>, whose results are already in root/grading/<assignment> (grade-all keeps them)."""
    export, results = root / f"export-{assignment}", root / "grading" / assignment / "results"
    results.mkdir(parents=True)
    lines = []
    for sid, (student, created) in people.items():
        (export / sid).mkdir(parents=True)
        (export / sid / f"{assignment}.py").write_text("# graded already\n")
        lines.append(f"{sid}:\n  :submitters:\n  - :name: {student.title()}\n    :sid: '{student}'\n    :email: {student}@x.edu")
        lines.append(f"  :created_at: {created}")
        test = {"name": "softmax: rows sum to 1", "score": 80.0, "max_score": 100.0, "status": "failed", "output": "",
                "extra_data": {"test": "hidden/t.py::t", "function": "softmax", "mistakes": [], "kind": "wrong"}}  # fmt: skip
        doc = {"score": 80.0, "tests": [test], "output": "80.00 / 100 points.", "extra_data": {"kind": "graded"}}
        (results / f"{sid}.json").write_text(json.dumps(doc))
    (export / "submission_metadata.yml").write_text("\n".join(lines) + "\n")


def _run(root: Path, assignment: str, course: Path) -> list[dict]:
    out = root / "grading" / assignment
    args = argparse.Namespace(
        assignment=assignment, folder=str(root / f"export-{assignment}"), out=str(out), force=False, jobs=1,
        compare=None, due=None, canvas_column="", course=str(course),
    )  # fmt: skip
    assert batch.main(args) == 0
    return list(csv.DictReader((out / "gradebook.csv").read_bytes().decode("utf-8-sig").splitlines()))


def test_grade_all_applies_the_term_across_two_assignments(tmp_path, capsys):
    course = tmp_path / "course.toml"
    course.write_text(
        'timezone = "UTC"\n[[assignment]]\nname = "attention"\ndue = 2027-02-22\n'
        '[[assignment]]\nname = "multihead"\ndue = 2027-03-01\nbuilds_on = ["attention"]\n'
        '[late]\nper_day = "10%"\nlate_days = 2\nledger = "term.csv"\n'
        '[extensions.multihead]\n"bo@x.edu" = 2027-03-05\n'
    )
    _export(tmp_path, "attention", {"s1": ("ada", "2027-02-24 10:00:00 +00:00"), "s2": ("bo", "2027-02-22 10:00:00 +00:00")})
    rows = {r["student_id"]: r for r in _run(tmp_path, "attention", course)}
    assert rows["ada"]["late_rule"] == "2 days late: 2 late days used (0 left)" and rows["ada"]["total"] == "80.00"
    _export(tmp_path, "multihead", {"s3": ("ada", "2027-03-02 10:00:00 +00:00"), "s4": ("bo", "2027-03-04 10:00:00 +00:00")})
    rows = {r["student_id"]: r for r in _run(tmp_path, "multihead", course)}
    printed = capsys.readouterr().out
    assert rows["ada"]["late_rule"] == "1 day late: no late days left, 10 % off per day" and rows["ada"]["total"] == "72.00"
    assert rows["bo"]["late_rule"] == "on time (extension to 2027-03-05 23:59 UTC)" and rows["bo"]["penalty"] == "0.00"
    assert "mean 76.0 over 2 students" in printed.splitlines()[-1], "the class mean is over the totals after the policy"
    report = (tmp_path / "grading" / "multihead" / "report.html").read_text()
    assert "<b>72.00</b> (−8.00) 1 day late: no late days left, 10 % off per day" in report
    title = load_assignment("multihead").title
    moodle = csv.DictReader((tmp_path / "grading" / "multihead" / "moodle.csv").read_bytes().decode("utf-8-sig").splitlines())
    assert {r["ID number"]: r[title] for r in moodle} == {"ada": "72.00", "bo": "80.00"}
    ledger = read_ledger(tmp_path / "grading" / "term.csv")
    assert [(r["student"], r["assignment"], r["late_days_used"]) for r in ledger] == [("ada", "attention", "2")]


def test_each_row_of_the_dashboard_shows_only_the_rules_it_set():
    """A group's submission that counts for one member only (the other resubmitted alone) shows that
    member's rule; the resubmission shows the other's."""
    from autograder.cohort.class_stats import mark_superseded
    from autograder.cohort.export import Submission
    from autograder.cohort.late_policy import LateOutcome
    from autograder.cohort.report import Extras, render_report

    group = Submission("g", Path("."), name="Ed, Flo", created_at="2027-02-21 10:00:00 +00:00",
                       submitters=[{"name": "Ed", "sid": "e", "email": ""}, {"name": "Flo", "sid": "f", "email": ""}])  # fmt: skip
    alone = Submission("f2", Path("."), name="Flo", created_at="2027-02-24 10:00:00 +00:00",
                       submitters=[{"name": "Flo", "sid": "f", "email": ""}])  # fmt: skip
    mark_superseded([group, alone])
    documents = {"g": {"score": 80.0, "tests": []}, "f2": {"score": 90.0, "tests": []}}
    late = {
        "e": LateOutcome(80.0, 80.0, 0.0, 0, 0, "on time"),
        "f": LateOutcome(90.0, 81.0, 9.0, 0, 2, "2 days late: 10 % off per day"),
    }
    html_text = render_report(load_assignment("attention"), [group, alone], documents, extras=Extras(late=late))
    rows = {sid: html_text[html_text.index(f'<tr id="s-{sid}"') :].split("</tr>")[0] for sid in ("g", "f2")}
    assert "on time" in rows["g"] and "10 % off" not in rows["g"]
    assert "<b>81.00</b> (−9.00) 2 days late" in rows["f2"] and "on time" not in rows["f2"]
    assert "mean 80.5 over 2 students" in html_text, "the mean is over the totals after the policy"


def test_a_key_the_ledger_quotes_against_spreadsheets_is_read_back_as_itself(tmp_path):
    """The red team's (2026-12-05): a student key starting with -, =, + or @ is written "'-eve" (no spreadsheet
    runs it) and was read back with the quote, so that student never spent a late day."""
    path = tmp_path / "ledger.csv"
    used = {"-eve@x.edu": (2, "s1"), "=mallory@x.edu": (1, "s2"), "alice@x.edu": (1, "s3"), "-3": (1, "s4")}
    record(path, "embeddings", used, budget=5)
    assert "'-eve@x.edu" in path.read_text(encoding="utf-8-sig")  # still quoted in the file
    spent = spent_before(read_ledger(path), "attention", ["embeddings", "attention"])
    assert spent == {"-eve@x.edu": 2, "=mallory@x.edu": 1, "alice@x.edu": 1, "-3": 1}
