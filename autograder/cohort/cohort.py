"""The cohort, as the dashboard and the gradebooks see it: results documents read into tests and rows.

One job: read a class's results documents (nothing is re-run) into what every instructor
output counts: the tests in grading order with their function (:func:`cohort_tests`), one
row per submission with the points lost per function, the catalogued mistakes recognised
and the flags (:func:`student_rows`), the students behind a submission (:func:`people`),
pass rates, a mistake's human title, and what changed between two gradings
(:func:`regrade_diff`).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..catalogue import read_catalogue
from ..config import Assignment, ConfigError
from ..grading.record import GradingRecord
from .export import duplicates_text
from .flags import ATTENTION_FLAGS, submission_flags


def mistake_title(assignment: Assignment, mistake_id: str) -> str:
    """A catalogued mistake's human title (its docstring's first line, or its table's title)."""
    return _titles(assignment.root, _catalogue_stamp(assignment)).get(mistake_id, mistake_id)


def _catalogue_stamp(assignment: Assignment) -> tuple:
    """Changes when a mistake file or assignment.toml does (the titles are then read again)."""
    paths = [assignment.root / "assignment.toml", *sorted(assignment.mistakes_dir.glob("*.py"))]
    return tuple((str(p), p.stat().st_mtime_ns) for p in paths if p.is_file())


@lru_cache(maxsize=16)
def _titles(root: Path, stamp: tuple) -> dict[str, str]:
    from ..config import load_assignment

    try:
        assignment = load_assignment(root.name, root.parent.parent)
        return {e.name: e.title for e in read_catalogue(assignment, "mistake")}
    except (ConfigError, OSError):
        return {}


# -- the cohort, as the dashboard and the gradebook see it ----------------------------------


@dataclass
class TestInfo:
    name: str  # display name, with the parametrized case: "softmax: rows sum to 1 [float32]"
    key: str  # "hidden/test_softmax.py::test_rows"
    function: str
    max_score: float


@dataclass
class StudentRow:
    sid: str  # submission id
    name: str
    student_id: str
    email: str
    created_at: str
    late: bool | None
    score: float
    students: list[str]  # keys of the students behind this submission (a group has several)
    lost: dict[str, float]  # function -> points lost
    mistakes: list[str]  # catalogued mistake ids recognised in any test
    flags: list[tuple[str, str]]
    notes: list[str] = field(default_factory=list)
    superseded_by: str = ""  # a later submission of the same student(s) is the one that counts
    graded: bool = True  # False when no test ran (nothing gradable in the upload)

    @property
    def anchor(self) -> str:
        return row_anchor(self.sid)

    @property
    def label(self) -> str:
        return self.name or self.student_id or self.sid

    @property
    def needs_attention(self) -> bool:
        return not self.superseded_by and any(flag in ATTENTION_FLAGS for flag, _ in self.flags)


def row_anchor(sid: str) -> str:
    """The id of a submission's row in the dashboard's table of students (``report.html#s-<id>``): unique, so an
    id with other characters (``ana b``, ``ana+b``) gets a short hash of itself after them."""
    safe = re.sub(r"[^A-Za-z0-9_-]", "-", sid)
    return "s-" + safe + ("" if safe == sid else "-" + hashlib.sha1(sid.encode("utf-8", "surrogatepass")).hexdigest()[:8])


def people(sub) -> list[tuple[str, dict]]:
    """(key, person) for each student behind a submission (a group has several).

    The key is their student id, else their email, else their name, else the submission id.
    """
    persons = [p for p in getattr(sub, "submitters", None) or [] if any(p.values())] or [{}]
    return [(str(p.get("sid") or p.get("email") or p.get("name") or sub.sid), p) for p in persons]


def student_keys(sub) -> list[str]:
    return [key for key, _ in people(sub)]


def cohort_tests(documents: dict[str, dict]) -> list[TestInfo]:
    """Every test seen in any results document, in the order the grader ran them."""
    tests: dict[str, TestInfo] = {}
    for doc in documents.values():
        for t in GradingRecord.from_results(doc).tests:
            if t.name not in tests:
                tests[t.name] = TestInfo(t.name, t.key, t.function, t.max_score)
    return list(tests.values())


def student_rows(subs: list, documents: dict[str, dict]) -> list[StudentRow]:
    rows = []
    for sub in subs:
        doc = documents.get(sub.sid, {})
        lost: dict[str, float] = {}
        mistakes: list[str] = []
        for t in GradingRecord.from_results(doc).tests:
            if t.max_score - t.score > 1e-9:
                lost[t.function] = lost.get(t.function, 0.0) + t.max_score - t.score
            mistakes += [m for m in t.diagnoses if m not in mistakes]
        flags = submission_flags(doc) if doc else [("grader-error", "no results file")]
        late = getattr(sub, "late", None)
        if late:
            flags.append(("late", f"submitted {sub.created_at}"))
        notes = list(getattr(sub, "notes", []))
        superseded_by = getattr(sub, "superseded_by", "") or ""
        if superseded_by:
            flags.append(("superseded", f"a later submission counts: {superseded_by}"))
        elif getattr(sub, "duplicates", None):
            flags.append(("duplicate", duplicates_text(sub)))
        rows.append(
            StudentRow(
                sid=sub.sid,
                name=sub.name,
                student_id=sub.student_id,
                email=sub.email,
                created_at=sub.created_at,
                late=late,
                score=float(doc.get("score", 0) or 0),
                students=student_keys(sub),
                lost=lost,
                mistakes=mistakes,
                flags=flags,
                notes=notes,
                superseded_by=superseded_by,
                graded=bool(doc.get("tests")),
            )
        )
    return rows


def pass_rates(tests: list[TestInfo], documents: dict[str, dict], sids: list[str]) -> dict[str, float]:
    """Fraction of submissions passing each test; an ungradable submission counts as failing all of them."""
    passed: Counter = Counter()
    for sid in sids:
        for t in documents.get(sid, {}).get("tests") or []:
            passed[t["name"]] += t.get("status") == "passed"
    n = max(len(sids), 1)
    return {t.name: passed[t.name] / n for t in tests}


def regrade_diff(old: dict[str, dict], new: dict[str, dict], tolerance: float = 0.005) -> list[dict]:
    """Every submission whose score changed between two gradings, with the tests that changed.

    Returns dicts with ``sid``, ``old`` and ``new`` totals (None when absent from one side),
    ``change`` and ``tests``: [(test name, old points or None, new points or None)].
    """
    changes = []
    for sid in sorted(set(old) | set(new)):
        before, after = old.get(sid), new.get(sid)
        old_total = float(before.get("score", 0)) if before is not None else None
        new_total = float(after.get("score", 0)) if after is not None else None
        if old_total is not None and new_total is not None and abs(old_total - new_total) <= tolerance:
            continue
        old_tests = {t["name"]: float(t["score"]) for t in (before or {}).get("tests") or []}
        new_tests = {t["name"]: float(t["score"]) for t in (after or {}).get("tests") or []}
        tests = [
            (name, old_tests.get(name), new_tests.get(name))
            for name in list(old_tests) + [n for n in new_tests if n not in old_tests]
            if old_tests.get(name) is None or new_tests.get(name) is None or abs(old_tests[name] - new_tests[name]) > tolerance
        ]
        change = (new_total or 0.0) - (old_total or 0.0)
        changes.append({"sid": sid, "old": old_total, "new": new_total, "change": change, "tests": tests})
    return changes
