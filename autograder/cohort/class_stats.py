"""Class statistics: whose submission counts, the class mean, and what a regrade changed for students.

One job: the one definition every instructor output shares. Per student, the latest
submission counts (a group's for each member, :func:`gradebook_entries`); earlier ones are
marked superseded; the class mean is over those (:func:`class_mean`, "latest submission
each"; their totals after the late policy when grade-all gives them); and a regrade is
counted in students whose grade changed, not submissions (:func:`annotate_regrade`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone

from .cohort import people, student_keys
from .export import Submission, _parse_time


@dataclass
class GradebookEntry:
    """One student's row: the submission chosen for them and what else they submitted."""

    key: str
    person: dict
    sub: Submission
    others: list[Submission]


def gradebook_entries(subs: list[Submission]) -> list[GradebookEntry]:
    """One entry per student (a group submission gives one per member), sorted by name.

    A student with several submissions gets the latest (by submission time, then by
    submission id), as Gradescope's active submission is by default; the others are noted.
    """
    by_student: dict[str, list[tuple[dict, Submission]]] = {}
    for s in subs:
        for key, person in people(s):
            by_student.setdefault(key, []).append((person, s))

    def recency(item: tuple[dict, Submission]) -> tuple:
        moment = _parse_time(item[1].created_at)
        digits = re.sub(r"\D", "", item[1].sid)
        return (moment is not None, moment or datetime.min.replace(tzinfo=timezone.utc), int(digits or 0), item[1].sid)

    entries = []
    for key, items in by_student.items():
        items.sort(key=recency)
        person, chosen = items[-1]
        entries.append(GradebookEntry(key, person, chosen, [s for _, s in items[:-1]]))
    entries.sort(key=lambda e: ((e.person.get("name") or e.sub.name or e.key).casefold(), e.key))
    return entries


def mark_superseded(subs: list[Submission]) -> None:
    """Set ``superseded_by`` on each submission that counts for none of its students."""
    counting = {e.key: e.sub.sid for e in gradebook_entries(subs)}
    for s in subs:
        later = {counting[k] for k in student_keys(s)} - {s.sid}
        s.superseded_by = ", ".join(sorted(later)) if len(later) == len(set(student_keys(s))) else ""


MEAN_DEFINITION = "latest submission each"  # said once, wherever a class mean is shown


@dataclass(frozen=True)
class ClassMean:
    """The class mean: per student, the latest submission (a group's score counts for each member),
    as ``gradebook.csv`` has one row per student; an ungraded submission counts 0 there and here."""

    mean: float
    students: int

    def __str__(self) -> str:
        return f"mean {self.mean:.1f} over {self.students} student{'s' if self.students != 1 else ''}, {MEAN_DEFINITION}"


def student_scores(subs: list[Submission], documents: dict[str, dict], late: dict | None = None) -> dict[str, float]:
    """{student: the score of the submission that counts for them} (the gradebook's rows): with
    ``late`` ({student: late_policy.LateOutcome}), their total after the late policy."""
    scores = {}
    for e in gradebook_entries(subs):
        outcome = (late or {}).get(e.key)
        scores[e.key] = outcome.total if outcome is not None else float(documents.get(e.sub.sid, {}).get("score", 0) or 0)
    return scores


def class_mean(subs: list[Submission], documents: dict[str, dict], late: dict | None = None) -> ClassMean:
    """The one class mean every output states (the CLI, the dashboard, the gradebook's rows' ``total``)."""
    scores = list(student_scores(subs, documents, late).values())
    return ClassMean(sum(scores) / len(scores) if scores else 0.0, len(scores))


@dataclass(frozen=True)
class RegradeSummary:
    """What a regrade changed for grades: students whose counting submission changed (a group's
    members each), and, apart, superseded or vanished submissions that count for nobody."""

    up: int  # students whose grade went up
    down: int
    submissions: int  # counting submissions that changed
    not_counting: int  # changed submissions that count for no student (superseded, or gone from the export)

    @property
    def students(self) -> int:
        return self.up + self.down

    def __str__(self) -> str:
        who = "1 student's grade" if self.students == 1 else f"{self.students} students' grades"
        text = f"{who} changed ({self.up} up, {self.down} down) in {self.submissions} submission{'s' if self.submissions != 1 else ''}"
        if self.not_counting:
            text += f"; {self.not_counting} superseded or removed submission(s) changed too (no student's grade)"
        return text


def annotate_regrade(diff: list[dict], subs: list[Submission]) -> RegradeSummary:
    """Mark each changed submission with ``counts`` (does it set a student's grade?) and ``students``
    (whose), and count students, not submissions. Run after :func:`mark_superseded`."""
    by_sid = {s.sid: s for s in subs}
    counting = {e.key: e.sub.sid for e in gradebook_entries(subs)}
    up: set[str] = set()
    down: set[str] = set()
    submissions = not_counting = 0
    for d in diff:
        sub = by_sid.get(d["sid"])
        d["students"] = [k for k in student_keys(sub) if counting.get(k) == sub.sid] if sub is not None else []
        d["counts"] = bool(d["students"])
        d["why_not"] = "" if d["counts"] else (f"superseded by {sub.superseded_by}" if sub else "not in this export")
        if not d["counts"]:
            not_counting += 1
            continue
        submissions += 1
        (up if d["change"] > 0 else down).update(d["students"])
    return RegradeSummary(len(up), len(down), submissions, not_counting)
