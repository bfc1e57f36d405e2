"""The term's ledger of late days: how many each student spent on which assignment.

One job: the ledger file (course.toml's ``[late] ledger``, default ``late_days.csv``; a relative
path is read beside the ``--out`` folder, in its parent, so every assignment graded into sibling
folders shares one). ``grade-all`` reads what each student spent on the assignments before this
one in course.toml's order (:func:`spent_before`), and records this assignment's use, replacing
its earlier rows (:func:`record`): regrading the same assignment spends nothing twice. UTF-8 with
a BOM like every gradebook; ``0600`` as root (it names students).
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

HEADER = ["student", "assignment", "late_days_used", "submission"]


def ledger_path(ledger: str, out: Path) -> Path:
    """Where the ledger is: ``ledger`` itself when absolute, else beside ``out`` (in its parent folder)."""
    path = Path(ledger).expanduser()
    return path if path.is_absolute() else Path(out).resolve().parent / path


def read_ledger(path: Path) -> list[dict]:
    """The ledger's rows ([] when there is none yet)."""
    if not path.is_file():
        return []
    from .gradebook import read_cell

    with open(path, newline="", encoding="utf-8-sig") as f:  # cells as written (a key "-eve" is stored "'-eve")
        rows = [{k: read_cell(v) if isinstance(v, str) else v for k, v in row.items()} for row in csv.DictReader(f)]
    return [row for row in rows if row.get("student") and row.get("assignment")]


def _days(row: dict) -> int:
    try:
        return int(float(row.get("late_days_used") or 0))
    except ValueError:
        return 0


def spent_before(rows: list[dict], assignment: str, order: list[str]) -> dict[str, int]:
    """{student: late days spent on the assignments before ``assignment`` in the course's order}
    (all others when it is not in the order)."""
    earlier = set(order[: order.index(assignment)]) if assignment in order else {r["assignment"] for r in rows} - {assignment}
    spent: dict[str, int] = {}
    for row in rows:
        if row["assignment"] in earlier:
            spent[row["student"]] = spent.get(row["student"], 0) + _days(row)
    return spent


def record(path: Path, assignment: str, used: dict[str, tuple[int, str]], budget: int) -> list[str]:
    """Replace ``assignment``'s rows with ``used`` ({student: (days, submission)}, days > 0 kept);
    returns a warning for each student whose term total now exceeds ``budget`` (a later assignment
    graded before this regrade took days this one now uses: regrade that one)."""
    from .gradebook import write_csv

    rows = [r for r in read_ledger(path) if r["assignment"] != assignment]
    rows += [
        {"student": k, "assignment": assignment, "late_days_used": str(d), "submission": s}
        for k, (d, s) in sorted(used.items())
        if d
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    write_csv(path, HEADER, [[r.get(h, "") for h in HEADER] for r in rows])
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        path.chmod(0o600)
    totals: dict[str, int] = {}
    for r in rows:
        totals[r["student"]] = totals.get(r["student"], 0) + _days(r)
    return [
        f"{student} has spent {total} late days in {path.name}, over the term's {budget}: regrade the later assignments"
        for student, total in sorted(totals.items())
        if total > budget
    ]
