"""Strict configuration (issue 48): assignment.toml and course.toml read against one typed schema each.

Every case here loaded silently, or crashed, before the schema: `banned = "torch.softmax"` was 13 one-letter
names, `title = 3` a title, `feedback = "causes"` an AttributeError, a misspelt key of an [[assignment]] table
(or an extension line that fell into it) was ignored. Each is now refused with the file, the key and what to
write; banned names must exist in the pinned torch/numpy; `new` writes its table where no later line can fall
into it; and every key is documented (reference_rows, the reference pages' source)."""

from __future__ import annotations

import argparse
import logging
import re
import shutil
import sys
from pathlib import Path

import pytest

from autograder.cohort.late_policy import load_extensions, load_policy
from autograder.config import KIT_ROOT, ConfigError, list_assignments, load_assignment
from autograder.config_schema import FILES, reference_rows
from autograder.release import commands, scaffold
from autograder.release.banned_names import banned_problems, check_banned
from autograder.release.course import load_course, read_course_file
from autograder.worker import guards

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

LARGE = '"hidden/test_softmax.py::test_large_inputs"'


def _kit(tmp_path: Path, name: str = "attention") -> tuple[Path, Path]:
    root = tmp_path / "kit"
    shutil.copytree(KIT_ROOT / "assignments" / name, root / "assignments" / name)
    (root / "solutions" / name).mkdir(parents=True)
    return root, root / "assignments" / name / "assignment.toml"


def _without(text: str, key: str) -> str:
    """The file without the line (or multi-line list) setting the top-level ``key``."""
    return re.sub(rf"(?ms)^{key} = (\[.*?^\]|[^\n]*)\n", "", text)


def _refused(root: Path, name: str = "attention") -> str:
    with pytest.raises(ConfigError) as refused:
        load_assignment(name, root)
    return str(refused.value)


# -- assignment.toml ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key, line, said",
    [
        ("banned", 'banned = "torch.softmax"', 'banned = "torch.softmax" must be a list of dotted names'),
        ("title", "title = 3", "title = 3 must be a string in double quotes"),
        ("feedback", 'feedback = "causes"', 'feedback = "causes" must be a table [feedback]'),
        ("run_timeout", 'run_timeout = "fast"', 'run_timeout = "fast" must be a number of seconds above 0'),
    ],
    ids=["banned-string", "title-number", "feedback-string", "timeout-string"],
)
def test_a_value_of_the_wrong_type_is_refused_naming_the_key(tmp_path, key, line, said):
    root, toml = _kit(tmp_path)
    toml.write_text(line + "\n" + _without(toml.read_text(), key))
    message = _refused(root)
    assert message.startswith(f"{toml}: ") and said in message, message


def test_the_refusal_says_what_to_write(tmp_path):
    """A string where a list is expected: the list of it; a value where a table is: the table's key."""
    root, toml = _kit(tmp_path)
    toml.write_text('banned = "torch.softmax"\n' + _without(toml.read_text(), "banned"))
    assert 'write banned = ["torch.softmax"]' in _refused(root)
    toml.write_text('feedback = "causes"\n' + toml.read_text().split("\n", 1)[1])
    assert 'did you mean [feedback] hidden_summary = "causes"?' in _refused(root)


@pytest.mark.parametrize("value", ['"4"', "true", "[4]", "0", "-1"])
def test_points_that_are_not_a_positive_number_are_refused_with_the_test(tmp_path, value):
    root, toml = _kit(tmp_path)
    text = toml.read_text()
    line = next(x for x in text.splitlines() if x.startswith(f"{LARGE} = "))
    toml.write_text(text.replace(line, f"{LARGE} = {value}"))
    message = _refused(root)
    assert f"points.{LARGE} = {value} must be a number of points above 0" in message, message


@pytest.mark.parametrize(
    "table, said",
    [
        ('[feedback]\nhidden_summary = "cause"', 'feedback.hidden_summary = "cause" is not one of'),
        (f'[visibility]\n{LARGE} = "visble"', f'visibility.{LARGE} = "visble" is not one of'),
    ],
)
def test_a_value_outside_an_enum_is_refused_with_the_nearest_value(tmp_path, table, said):
    root, toml = _kit(tmp_path)
    toml.write_text(toml.read_text() + "\n" + table + "\n")
    message = _refused(root)
    assert said in message and "did you mean" in message, message


def test_an_unknown_key_names_the_nearest_valid_one_with_its_table(tmp_path):
    root, toml = _kit(tmp_path)
    toml.write_text(toml.read_text() + '\n[feedback]\nhiden_summary = "points"\n')
    message = _refused(root)
    assert "unknown key 'feedback.hiden_summary': did you mean 'hidden_summary'?" in message, message


def test_every_assignment_and_the_course_load_and_their_banned_names_exist():
    for name in list_assignments():
        assignment = load_assignment(name)
        assert banned_problems(assignment.banned) == [], name
    course = load_course(KIT_ROOT)
    assert set(course.order) == set(list_assignments())
    spec = read_course_file(KIT_ROOT / "course.toml")
    assert [a.name for a in spec.assignment][: len(course.order)] == course.order


# -- banned names ---------------------------------------------------------------------------------------------


def test_a_banned_name_that_does_not_exist_is_refused_with_the_real_one(tmp_path, monkeypatch):
    problems = banned_problems(["torch.nn.functional.sofmax", "torch.nn.functionl.softmax", "troch.softmax", "torch.softmax"])
    assert [p.split(": ")[-1] for p in problems] == [
        "did you mean torch.nn.functional.softmax?",
        "did you mean torch.nn.functional.softmax?",
        "did you mean torch.softmax?",
    ]
    root, toml = _kit(tmp_path)
    toml.write_text(toml.read_text().replace('"torch.nn.functional.softmax",', '"torch.nn.functional.sofmax",', 1))
    assignment = load_assignment("attention", root)  # grading reads it (the guard warns, below)
    with pytest.raises(ConfigError, match=r"did you mean torch\.nn\.functional\.softmax\?"):
        check_banned(toml, assignment.banned)
    # the release (every zip is built by build_zips) and `points` refuse it
    from autograder.release.zips import build_zips

    with pytest.raises(ConfigError, match=re.escape(f"{toml}: banned: torch.nn.functional.sofmax is not in torch")):
        build_zips(assignment)
    monkeypatch.setattr(commands, "load_assignment", lambda name: load_assignment(name, root))
    with pytest.raises(ConfigError, match="did you mean torch.nn.functional.softmax"):
        commands._cmd_points(argparse.Namespace(assignments=["attention"]))


def test_grading_warns_of_a_banned_name_it_cannot_guard_and_goes_on(caplog):
    name = "torch.nn.functional.not_a_function_of_torch"
    with caplog.at_level(logging.WARNING, logger="autograder.worker.guards"):
        with guards.active([name, "torch.softmax"]):
            import torch

            torch.softmax(torch.zeros(2), 0)
            assert guards.used() == ["torch.softmax"]
    assert [r.getMessage() for r in caplog.records if name in r.getMessage()], caplog.text


# -- course.toml ----------------------------------------------------------------------------------------------


def _course(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "course.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    "old, new, said",
    [
        (
            'material = "Week 9: scaled',
            'materail = "Week 9: scaled',
            "unknown key 'assignment[name = \"attention\"].materail': did you mean 'material'?",
        ),
        ("due = 2027-02-22", 'due = "soon"', 'assignment[name = "attention"].due = "soon" must be a date'),
        ('builds_on = ["seq2seq"]', 'builds_on = "seq2seq"', 'write builds_on = ["seq2seq"]'),
        ('title = "Attention and Transformers"', "title = 3", "title = 3 must be a string"),
        ("threshold = 0.5", "threshold = 50", "similarity.threshold = 50 must be a number from 0 to 1"),
        (
            'platforms = ["gradescope", "prairielearn"]',
            'platforms = ["gradescope", "moodle"]',
            'platforms[1] = "moodle" is not one of',
        ),
    ],
    ids=["assignment-key", "due-text", "builds-on-string", "title", "threshold", "platform"],
)
def test_course_toml_is_checked_wherever_it_is_read(tmp_path, old, new, said):
    """By the release (load_course) and by grade-all's rules ([late] here): the whole file, whatever is read of it."""
    text = (KIT_ROOT / "course.toml").read_text()
    assert old in text
    path = _course(tmp_path, text.replace(old, new, 1))
    for read in (lambda: load_course(KIT_ROOT, path), lambda: load_policy(path=path)):
        with pytest.raises(ConfigError) as refused:
            read()
        assert str(refused.value).startswith(f"{path}: ") and said in str(refused.value), str(refused.value)


def test_a_misspelt_time_zone_names_the_nearest(tmp_path):
    text = (KIT_ROOT / "course.toml").read_text().replace('timezone = "UTC"', 'timezone = "America/Los_Angles"', 1)
    with pytest.raises(ConfigError, match="did you mean 'America/Los_Angeles'"):
        load_course(KIT_ROOT, _course(tmp_path, text))


def test_an_extension_for_no_assignment_is_refused_with_the_nearest(tmp_path):
    path = _course(tmp_path, '[extensions.atention]\n"111" = 2027-02-24\n')
    with pytest.raises(
        ConfigError, match=r"\[extensions.atention\] names no assignment of the course: did you mean 'attention'\?"
    ):
        load_extensions("attention", "UTC", path=path)


# -- `new` and course.toml --------------------------------------------------------------------------------------

EXTENDED = '\n[extensions.attention]\n"111" = 2027-02-24T17:00:00-08:00\n'


def test_new_writes_its_table_where_no_later_line_falls_into_it(tmp_path):
    """The case of the issue: after `new`, an extension line added at the end of course.toml was a key of the new
    [[assignment]] and ignored. The table now goes before the term's rules, so the line is the extension's."""
    text = (KIT_ROOT / "course.toml").read_text() + EXTENDED
    path = _course(tmp_path, text)
    note = scaffold._add_to_course("toy", path, text)
    assert "before [similarity]" in note
    written = path.read_text()
    assert written.index('name = "toy"') < written.index("[similarity]") < written.index("[extensions.attention]")
    data = tomllib.loads(written)
    assert [a["name"] for a in data["assignment"]][-2:] == ["decoding", "toy"]
    assert {k: v for k, v in data.items() if k != "assignment"} == {
        k: v for k, v in tomllib.loads(text).items() if k != "assignment"
    }
    path.write_text(written + '"222" = 2027-02-25\n')  # the instructor's next extension, at the end
    assert set(load_extensions("attention", "UTC", path=path)) == {"111", "222"}


def test_a_line_that_falls_into_an_assignment_table_is_refused_not_ignored(tmp_path):
    text = (KIT_ROOT / "course.toml").read_text() + EXTENDED + '\n[[assignment]]\nname = "toy"\n"222" = 2027-02-25\n'
    path = _course(tmp_path, text)
    with pytest.raises(ConfigError) as refused:
        load_extensions("attention", "UTC", path=path)
    message = str(refused.value)
    assert "unknown key 'assignment[name = \"toy\"].222'" in message and "every line after a [[assignment]]" in message


def test_new_appends_when_no_other_table_follows():
    text = 'title = "C"\n\n[[assignment]]\nname = "a"\n'
    written, before = scaffold.insert_assignment_table(text, scaffold.course_entry("toy", text))
    assert before == "" and written.startswith(text) and tomllib.loads(written)["assignment"][-1]["name"] == "toy"
    rules_first = '[late]\nlate_days = 2\n\n[[assignment]]\nname = "a"\n\n# the rules\n[similarity]\ntop = 3\n'
    written, before = scaffold.insert_assignment_table(rules_first, scaffold.course_entry("toy", rules_first))
    assert before == "similarity" and written.index('name = "toy"') < written.index("# the rules")
    assert [a["name"] for a in tomllib.loads(written)["assignment"]] == ["a", "toy"]


# -- the reference --------------------------------------------------------------------------------------------


def test_every_key_is_documented_for_the_reference_pages():
    rows = reference_rows()
    assert {r["file"] for r in rows} == set(FILES)
    for row in rows:
        assert set(row) == {"file", "table", "key", "type", "default", "description", "example"}
        assert row["description"] and row["type"] and row["default"], row
        if row["example"]:
            tomllib.loads(f"x = {row['example']}")  # an example is a TOML value
    keys = {(r["file"], r["table"], r["key"]) for r in rows}
    for expected in [
        ("assignment.toml", "", "banned"),
        ("assignment.toml", "[feedback]", "hidden_summary"),
        ("course.toml", "[[assignment]]", "material"),
        ("course.toml", "[[assignment.ships]]", "from"),
        ("course.toml", "[late]", "per_day"),
        ("course.toml", "", "extensions"),
    ]:
        assert expected in keys
