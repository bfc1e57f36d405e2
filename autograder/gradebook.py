"""The gradebooks: the CSV files ``grade-all`` writes for spreadsheets and the LMS.

One job: ``gradebook.csv`` (one row per student: points per function, the total, ``late``,
flags and notes), ``gradebook_tests.csv`` (points per test), ``gradebook_legend.csv`` (what each
short column holds), ``canvas.csv`` (Canvas's grade-import layout) and ``regrade_diff.csv``.
All are UTF-8 with a BOM, every number with two decimals, every cell safe from spreadsheet
formulas (:func:`safe_cell`).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from .class_stats import gradebook_entries
from .cohort import cohort_tests, function_of
from .config import Assignment
from .export import Submission
from .flags import submission_flags


def _number(value: float) -> str:
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


def _write_csv(path: Path, header: list[str], rows: list[list]) -> None:
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


def write_gradebooks(
    out: Path, assignment: Assignment, subs: list[Submission], documents: dict[str, dict], canvas_column: str = ""
) -> list[Path]:
    """Write gradebook.csv, gradebook_tests.csv, gradebook_legend.csv and canvas.csv into ``out``."""
    tests = cohort_tests(documents)
    taken: set[str] = set()
    functions: dict[str, str] = {}  # function -> column
    for t in tests:
        if t.function not in functions:
            functions[t.function] = short_column(t.function, taken)
    test_columns = {t.name: f"t{i:02d}" for i, t in enumerate(tests, start=1)}
    entries = gradebook_entries(subs)

    legend = [["total", _number(assignment.total_points), "", "the whole assignment"]]
    for function, column in functions.items():
        members = [t for t in tests if t.function == function]
        legend.append([column, _number(sum(t.max_score for t in members)), "", f"{function}: all its tests"])
    legend += [[test_columns[t.name], _number(t.max_score), t.key, t.name] for t in tests]
    _write_csv(out / "gradebook_legend.csv", ["column", "max_points", "test_key", "full_name"], legend)

    header = ["student_id", "name", "email", "submission", "submitted_at", "late", "total", *functions.values(), "flags", "notes"]
    rows, test_rows, canvas_rows = [], [], []
    for e in entries:
        doc = documents.get(e.sub.sid, {})
        per_function = dict.fromkeys(functions, 0.0)
        per_test = {}
        for t in doc.get("tests") or []:
            per_function[function_of(t["name"])] = per_function.get(function_of(t["name"]), 0.0) + float(t["score"])
            per_test[t["name"]] = float(t["score"])
        total = float(doc.get("score", 0) or 0)
        flags = [f for f, _ in submission_flags(doc)] if doc else ["grader-error"]
        notes = [n for n in e.sub.notes if "also has submission" not in n]  # said below, once
        if e.others:
            notes.append(
                "latest of several submissions; also "
                + ", ".join(f"{o.sid} ({_number(documents.get(o.sid, {}).get('score', 0) or 0)})" for o in e.others)
            )
        late = "" if e.sub.late is None else ("yes" if e.sub.late else "no")
        student_id, name, email = e.person.get("sid", ""), e.person.get("name", ""), e.person.get("email", "")
        rows.append(
            [
                student_id,
                name,
                email,
                e.sub.sid,
                e.sub.created_at,
                late,
                _number(total),
                *[_number(per_function[f]) for f in functions],
                " ".join(flags),
                "; ".join(n.replace("\n", " ") for n in notes),
            ]
        )
        test_rows.append(
            [student_id, name, email, e.sub.sid, _number(total), *[_number(per_test.get(t.name, 0.0)) for t in tests]]
        )
        canvas_rows.append([name, "", student_id, email, "", _number(total)])
    _write_csv(out / "gradebook.csv", header, rows)
    _write_csv(
        out / "gradebook_tests.csv",
        ["student_id", "name", "email", "submission", "total", *test_columns.values()],
        test_rows,
    )
    # Canvas's gradebook import matches a row by ID (Canvas's own user id, which Gradescope's
    # export does not hold), else SIS User ID, else SIS Login ID; a column it does not know
    # becomes a new assignment. See the README for what this relies on.
    _write_csv(
        out / "canvas.csv",
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", canvas_column or assignment.title],
        canvas_rows,
    )
    return [out / n for n in ("gradebook.csv", "gradebook_tests.csv", "gradebook_legend.csv", "canvas.csv")]


def write_regrade_diff(path: Path, subs: list[Submission], diff: list[dict]) -> None:
    """regrade_diff.csv: one row per submission whose score changed, the tests that changed in one cell,
    and whether it sets a student's grade (``counts``: "yes", or "no: superseded by ...")."""
    by_sid = {s.sid: s for s in subs}
    rows = []
    for d in diff:
        s = by_sid.get(d["sid"])

        def points(value: float | None) -> str:
            return "" if value is None else _number(value)

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
    _write_csv(
        path,
        ["submission", "student_id", "name", "old_total", "new_total", "change", "tests_changed", "tests", "counts"],
        rows,
    )
