"""course.toml's dates reach the students (each handout, dist/course.md) and grading (grade-all's deadline)."""

from __future__ import annotations

import datetime as dt
import textwrap
from pathlib import Path

import pytest

from autograder.config import KIT_ROOT, ConfigError, list_assignments, load_assignment
from autograder.release.course import CourseEntry, dates_line, format_deadline, load_course
from autograder.release.student_folder import student_files

UTC = dt.timezone.utc


@pytest.mark.parametrize("name", list_assignments(KIT_ROOT))
def test_each_handout_states_the_courses_release_and_due_dates(name):
    entry = load_course(KIT_ROOT).entry(name)
    assert entry.release and entry.deadline, f"course.toml dates {name}"
    readme = student_files(load_assignment(name, KIT_ROOT))["README.md"].decode()
    title, blank, line = readme.splitlines()[:3]
    assert title.startswith("# ") and blank == ""
    assert line == f"**Released {entry.release.isoformat()}, due {entry.deadline_text()}** (the course's schedule, course.toml)."
    committed = (KIT_ROOT / "student_template" / name / "README.md").read_text()
    assert line in committed, "student_template/ is regenerated from course.toml (run `make stubs`)"


def test_a_due_date_means_the_end_of_that_day_in_the_courses_time_zone(tmp_path):
    kit = _kit(
        tmp_path,
        """
        timezone = "America/Los_Angeles"
        [[assignment]]
        name = "one"
        release = 2027-01-04
        due = 2027-01-11
        [[assignment]]
        name = "two"
        release = 2027-01-11
        due = 2027-01-18T17:00:00-05:00
        """,
    )
    course = load_course(kit)
    one, two = course.entry("one"), course.entry("two")
    assert one.deadline == dt.datetime(2027, 1, 12, 7, 59, 59, tzinfo=UTC)
    assert one.deadline_text() == "2027-01-11 23:59 America/Los_Angeles"
    assert two.deadline == dt.datetime(2027, 1, 18, 22, 0, tzinfo=UTC)
    assert two.deadline_text() == "2027-01-18 17:00 UTC-05:00", "a moment given with its own offset is said in it"
    assert (
        dates_line(one)
        == "**Released 2027-01-04, due 2027-01-11 23:59 America/Los_Angeles** (the course's schedule, course.toml)."
    )
    schedule = course.schedule()
    assert "| 2027-01-04 | 2027-01-11 23:59 America/Los_Angeles |" in schedule and "| hints |" in schedule
    assert dates_line(CourseEntry("undated")) == ""


def test_a_time_zone_that_does_not_exist_is_refused(tmp_path):
    kit = _kit(tmp_path, 'timezone = "Mars/Olympus"\n[[assignment]]\nname = "one"\ndue = 2027-01-11\n')
    with pytest.raises(ConfigError, match="not a time zone name"):
        load_course(kit)


def test_format_deadline_names_the_zone_or_the_offset():
    moment = dt.datetime(2026, 11, 2, 0, 0, tzinfo=dt.timezone(dt.timedelta(hours=-8)))
    assert format_deadline(moment, "UTC") == "2026-11-02 00:00 UTC-08:00"
    assert format_deadline(moment, "America/Los_Angeles") == "2026-11-02 00:00 America/Los_Angeles"


def _kit(tmp_path: Path, course: str) -> Path:
    for name in ("one", "two"):
        folder = tmp_path / "assignments" / name
        folder.mkdir(parents=True)
        (folder / "assignment.toml").write_text(f'title = "{name}"\nmodule = "{name}"\n[points]\n"public/t.py::t" = 100\n')
    (tmp_path / "course.toml").write_text(textwrap.dedent(course))
    return tmp_path
