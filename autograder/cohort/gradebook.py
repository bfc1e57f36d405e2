"""The gradebooks: the CSV files ``grade-all`` writes for spreadsheets and the LMS.

One job: ``gradebook.csv`` (one row per student: points per function, the total after the late
policy, ``late``, flags, what the late policy applied (``raw_total``, ``late_days_used``,
``penalty``, ``late_rule``) and notes), ``gradebook_tests.csv`` (points per test),
``gradebook_legend.csv`` (what each short column holds), ``canvas.csv`` (Canvas's grade-import
layout), ``moodle.csv`` (Moodle's CSV grade import) and ``regrade_diff.csv``. All are UTF-8 with a
BOM, every number of points with two decimals, every cell safe from spreadsheet formulas
(:func:`safe_cell`); :func:`write_csv` writes them (similarity.csv and the late-days ledger too).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from ..config import Assignment
from ..grading.record import GradingRecord
from .class_stats import gradebook_entries
from .cohort import cohort_tests
from .export import Submission
from .flags import submission_flags


def number(value: float) -> str:
    """The one number format of every gradebook: two decimals, a point, no thousands separator."""
    return f"{float(value):.2f}"


_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """A cell a spreadsheet shows as text, never runs (OWASP's rule against CSV injection): text
    that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading single
    quote. Plain numbers (``-3.00``, ``+1.50``) stay numbers."""
    if not isinstance(value, str):
        return value
    if value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def read_cell(value: str) -> str:
    """A cell as written before :func:`safe_cell` quoted it (the kit reads its own files back: the late-day ledger)."""
    if value.startswith("'") and value[1:].startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value[1:]):
        return value[1:]
    return value


def write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    """UTF-8 with a BOM (so Excel shows accented names right), CRLF line ends as RFC 4180 says;
    every cell, the header's too, through :func:`safe_cell`."""
    with open(path, "w", newline="", encoding="utf-8-sig") as f:
        writer = csv.writer(f)
        writer.writerow([safe_cell(c) for c in header])
        writer.writerows([safe_cell(c) for c in row] for row in rows)


def short_column(function: str, taken: set[str]) -> str:
    """A short ASCII column name for a function's points: ``softmax``, ``sdpa``, ``softmax_sdpa``.

    Identifiers longer than 20 characters become their initials (scaled_dot_product_attention
    -> sdpa, a CamelCase name -> its capitals); the legend file gives the full name.
    """
    parts = []
    for ident in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", function):
        if ident.lower() in ("and", "or", "with"):
            continue
        if len(ident) > 20:
            words = [w for w in ident.split("_") if w] if "_" in ident else re.findall(r"[A-Z][a-z0-9]*", ident)
            ident = "".join(w[0] for w in words).lower() if len(words) > 1 else ident[:20]
        parts.append(ident)
    name = "_".join(parts)[:40] or "other"
    base, n = name, 2
    while name in taken or name in ("total", "late", "flags", "notes", "name", "email", "student_id", "submission"):
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


LATE_COLUMNS = {  # after `flags`: what the late policy did (late_policy.LateOutcome), and its legend
    "raw_total": "the grader's score, before the late policy",
    "late_days_used": "late days this student spent on this assignment (whole days)",
    "penalty": "points taken off by the late policy (course.toml [late])",
    "late_rule": "what was applied, in words: e.g. 2 days late: 1 late day used, 10 % off the rest",
}


def _columns(tests: list) -> tuple[dict[str, str], dict[str, str]]:
    """({function: its short column}, {test name: t01, t02...}) in grading order."""
    taken: set[str] = set()
    functions: dict[str, str] = {}
    for t in tests:
        if t.function not in functions:
            functions[t.function] = short_column(t.function, taken)
    return functions, {t.name: f"t{i:02d}" for i, t in enumerate(tests, start=1)}


def _write_legend(path: Path, assignment: Assignment, tests: list, functions: dict, test_columns: dict) -> None:
    legend = [["total", number(assignment.total_points), "", "the whole assignment, after the late policy"]]
    for function, column in functions.items():
        members = [t for t in tests if t.function == function]
        legend.append([column, number(sum(t.max_score for t in members)), "", f"{function}: all its tests"])
    points = {"raw_total": number(assignment.total_points), "penalty": number(assignment.total_points)}
    legend += [[column, points.get(column, ""), "", text] for column, text in LATE_COLUMNS.items()]
    legend += [[test_columns[t.name], number(t.max_score), t.key, t.name] for t in tests]
    write_csv(path, ["column", "max_points", "test_key", "full_name"], legend)


def _outcome(entry, documents: dict[str, dict], late: dict | None):
    """The entry's late_policy.LateOutcome; without one (no policy applied), the grader's score as is."""
    from .late_policy import LateOutcome

    if late and entry.key in late:
        return late[entry.key]
    raw = float(documents.get(entry.sub.sid, {}).get("score", 0) or 0)
    return LateOutcome(raw, raw, 0.0, 0, None if entry.sub.late is None else int(bool(entry.sub.late)), "")


def _notes(entry, documents: dict[str, dict]) -> str:
    notes = list(entry.sub.notes)  # the duplicates are said below, once
    if entry.others:
        notes.append(
            "latest of several submissions; also "
            + ", ".join(f"{o.sid} ({number(documents.get(o.sid, {}).get('score', 0) or 0)})" for o in entry.others)
        )
    return "; ".join(n.replace("\n", " ") for n in notes)


def _points(doc: dict, functions: dict[str, str]) -> tuple[dict[str, float], dict[str, float]]:
    """({function: points}, {test name: points}) of one results document."""
    per_function = dict.fromkeys(functions, 0.0)
    per_test = {}
    for t in GradingRecord.from_results(doc).tests:
        per_function[t.function] = per_function.get(t.function, 0.0) + t.score
        per_test[t.name] = t.score
    return per_function, per_test


def _write_lms(out: Path, assignment: Assignment, canvas_column: str, rows: list[tuple]) -> None:
    """canvas.csv and moodle.csv from (name, student id, email, total) rows."""
    # Canvas's gradebook import matches a row by ID (Canvas's own user id, which Gradescope's
    # export does not hold), else SIS User ID, else SIS Login ID; a column it does not know
    # becomes a new assignment. See the README for what this relies on.
    write_csv(
        out / "canvas.csv",
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", canvas_column or assignment.title],
        [[name, "", sid, email, "", total] for name, sid, email, total in rows],
    )
    # Moodle's CSV grade import: the instructor maps "Email address" to useremail (or "ID number" to
    # useridnumber) and the grade column to a grade item in its preview; it strips the BOM.
    write_csv(
        out / "moodle.csv",
        ["Full name", "ID number", "Email address", assignment.title],
        [[name, sid, email, total] for name, sid, email, total in rows],
    )


def write_gradebooks(
    out: Path,
    assignment: Assignment,
    subs: list[Submission],
    documents: dict[str, dict],
    canvas_column: str = "",
    late: dict | None = None,
) -> list[Path]:
    """Write gradebook.csv, gradebook_tests.csv, gradebook_legend.csv, canvas.csv and moodle.csv into ``out``.

    ``late``: {student key: late_policy.LateOutcome}; each row's ``total`` is its ``total`` (the
    grader's score when none is given), with ``raw_total``, ``late_days_used``, ``penalty`` and ``late_rule``."""
    tests = cohort_tests(documents)
    functions, test_columns = _columns(tests)
    _write_legend(out / "gradebook_legend.csv", assignment, tests, functions, test_columns)
    fixed = ["student_id", "name", "email", "submission", "submitted_at", "late", "total"]
    header = [*fixed, *functions.values(), "flags", *LATE_COLUMNS, "notes"]
    rows, test_rows, lms_rows = [], [], []
    for e in gradebook_entries(subs):
        doc = documents.get(e.sub.sid, {})
        per_function, per_test = _points(doc, functions)
        result = _outcome(e, documents, late)
        flags = [f for f, _ in submission_flags(doc)] if doc else ["grader-error"]
        who = [e.person.get("sid", ""), e.person.get("name", ""), e.person.get("email", ""), e.sub.sid]
        late_text = "" if result.late is None else ("yes" if result.late else "no")
        rows.append(
            [*who, e.sub.created_at, late_text, number(result.total), *[number(per_function[f]) for f in functions]]
            + [" ".join(flags), number(result.raw_total), str(result.late_days_used), number(result.penalty), result.rule]
            + [_notes(e, documents)]
        )
        test_rows.append(
            [*who, number(result.total), number(result.raw_total), *[number(per_test.get(t.name, 0.0)) for t in tests]]
        )
        lms_rows.append((who[1], who[0], who[2], number(result.total)))
    write_csv(out / "gradebook.csv", header, rows)
    test_header = ["student_id", "name", "email", "submission", "total", "raw_total", *test_columns.values()]
    write_csv(out / "gradebook_tests.csv", test_header, test_rows)
    _write_lms(out, assignment, canvas_column, lms_rows)
    return [out / n for n in ("gradebook.csv", "gradebook_tests.csv", "gradebook_legend.csv", "canvas.csv", "moodle.csv")]


def write_regrade_diff(path: Path, subs: list[Submission], diff: list[dict]) -> None:
    """regrade_diff.csv: one row per submission whose score changed, the tests that changed in one cell,
    and whether it sets a student's grade (``counts``: "yes", or "no: superseded by ...")."""
    by_sid = {s.sid: s for s in subs}
    rows = []
    for d in diff:
        s = by_sid.get(d["sid"])

        def points(value: float | None) -> str:
            return "" if value is None else number(value)

        tests = "; ".join(f"{name}: {points(a) or '-'} -> {points(b) or '-'}" for name, a, b in d["tests"])
        counts = "yes" if d.get("counts", True) else f"no: {d.get('why_not', '')}"
        rows.append(
            [
                d["sid"],
                s.student_id if s else "",
                s.name if s else "",
                points(d["old"]),
                points(d["new"]),
                f"{d['change']:+.2f}",
                len(d["tests"]),
                tests,
                counts,
            ]
        )
    write_csv(
        path,
        ["submission", "student_id", "name", "old_total", "new_total", "change", "tests_changed", "tests", "counts"],
        rows,
    )
