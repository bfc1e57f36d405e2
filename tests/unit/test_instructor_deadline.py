"""grade-all's deadline: course.toml's `due` for the assignment by default, `--due` overrides it,
`--due none` sets none, and the output says which is in force (issue 25)."""

from __future__ import annotations

import datetime as dt

import pytest

from autograder.cohort import batch
from autograder.cohort.batch import resolve_deadline
from autograder.cohort.export import BatchError
from autograder.config import KIT_ROOT, load_assignment
from autograder.release.course import CourseEntry, load_course

UTC = dt.timezone.utc


def test_grade_all_uses_the_course_deadline_unless_due_overrides_it(monkeypatch):
    attention = load_assignment("attention", KIT_ROOT)
    entry = load_course(KIT_ROOT).entry("attention")
    moment, said = resolve_deadline(attention, None)
    assert moment == entry.deadline and said == f"deadline {entry.deadline_text()} (course.toml; --due overrides it)"
    moment, said = resolve_deadline(attention, "2026-11-02T00:00:00-08:00")
    assert moment == dt.datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
    assert said == f"deadline 2026-11-02 00:00 UTC-08:00 (--due, overriding course.toml's {entry.deadline_text()})"
    assert resolve_deadline(attention, "none") == (None, f"no deadline (--due none; course.toml's {entry.deadline_text()})")
    with pytest.raises(BatchError, match="not a date and time"):
        resolve_deadline(attention, "next friday")
    monkeypatch.setattr("autograder.release.course.load_course", lambda *a, **k: _undated())
    assert resolve_deadline(attention, None) == (None, "no deadline (course.toml gives none for attention; --due sets one)")


def test_the_deadline_in_force_flags_late_submissions():
    deadline = load_course(KIT_ROOT).entry("attention").deadline
    on_time = batch._parse_time(f"{deadline:%Y-%m-%d} 23:59:59.000000000 +00:00")
    late = batch._parse_time(f"{deadline + dt.timedelta(seconds=1):%Y-%m-%d %H:%M:%S}.000000000 +00:00")
    assert on_time <= deadline < late


def _undated():
    from autograder.release.course import Course

    return Course("c", (CourseEntry("attention"),))
