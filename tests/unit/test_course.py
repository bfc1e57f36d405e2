"""The course file and the cross-assignment answer check (no grading, no worker)."""

import datetime as dt
import textwrap
from pathlib import Path

import pytest

from autograder.config import KIT_ROOT, ConfigError, list_assignments, load_assignment
from autograder.release.answer_check import answer_findings, course_findings, reference_answers
from autograder.release.course import CourseEntry, Shipment, load_course
from autograder.release.student_folder import ship_reference, student_files

KIT = KIT_ROOT


def test_the_course_orders_every_assignment_with_dates_in_sequence():
    course = load_course(KIT)
    assert set(course.order) == set(list_assignments(KIT))
    assert course.order[:5] == ["embeddings", "seq2seq", "attention", "multihead", "transformer"]
    dated = [e for e in course.entries if e.release]
    for earlier, later in zip(dated, dated[1:]):
        assert earlier.release <= later.release, f"{later.name} is released before {earlier.name}"
    for entry in dated:
        assert entry.due and entry.due >= entry.release
        for dep in entry.builds_on:
            assert course.order.index(dep) < course.order.index(entry.name)
    assert "| 5 | `transformer` |" in course.schedule()


def test_no_student_zip_answers_another_assignment():
    """The release's proof, on today's sources: every student folder against every reference."""
    files = {name: student_files(load_assignment(name, KIT)) for name in list_assignments(KIT)}
    assert course_findings(files, load_course(KIT), dt.date(2027, 1, 1)) == []


def _files(code: str) -> dict[str, bytes]:
    return {"mine.py": textwrap.dedent(code).encode()}


def test_a_copied_body_with_new_names_is_found():
    answers = {"multihead": reference_answers("multihead", KIT)}
    copied = """
        def cut(t, heads):
            b, n, width = t.shape
            if width % heads != 0:
                raise ValueError("no")
            size = width // heads
            return t.reshape(b, n, heads, size).transpose(1, 2)
    """
    findings = answer_findings("transformer", _files(copied), answers)
    assert [f.answers for f in findings] == ["multihead: split_heads"] and findings[0].how == "same code"


def test_the_blocked_row_trick_inside_a_longer_function_is_found():
    answers = {"multihead": reference_answers("multihead", KIT)}
    inside = """
        import torch
        def forward(self, scores, v):
            scores = scores * 2
            m = scores.amax(dim=-1, keepdim=True)
            m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
            e = torch.exp(scores - m)
            total = e.sum(dim=-1, keepdim=True)
            return e / torch.where(total > 0, total, torch.ones_like(total)) @ v
    """
    assert any(f.answers == "multihead: _softmax_last" for f in answer_findings("transformer", _files(inside), answers))


def test_a_same_named_definition_is_found_unless_the_course_explains_it():
    answers = {"multihead": reference_answers("multihead", KIT)}
    rewritten = """
        import torch
        def sinusoidal_positions(n, d):
            return torch.zeros(n, d)
    """
    assert [f.how for f in answer_findings("transformer", _files(rewritten), answers)] == ["same name, not a stub"]
    stub = """
        def sinusoidal_positions(n, d):
            raise NotImplementedError("sinusoidal_positions is not implemented yet")
    """
    assert answer_findings("transformer", _files(stub), answers) == []
    explained = CourseEntry("transformer", not_answers={"sinusoidal_positions": "a test"})
    assert answer_findings("transformer", _files(rewritten), answers, explained) == []


def test_shipping_an_earlier_reference_is_a_dated_choice():
    transformer = load_assignment("transformer", KIT)
    entry = CourseEntry(
        "transformer",
        ships=(Shipment("multihead", ("sinusoidal_positions",), dt.date(2027, 3, 1)),),
        not_answers=load_course(KIT).entry("transformer").not_answers,
    )
    answers = {"multihead": reference_answers("multihead", KIT)}
    shipped = student_files(transformer, shipped=frozenset({"sinusoidal_positions"}))
    assert "torch.sin(pos * freq)" in shipped["transformer.py"].decode()
    assert "torch.sin(pos * freq)" not in student_files(transformer)["transformer.py"].decode()
    before = answer_findings("transformer", shipped, answers, entry, dt.date(2027, 2, 28))
    assert [f.answers for f in before] == ["multihead: sinusoidal_positions"]
    assert answer_findings("transformer", shipped, answers, entry, dt.date(2027, 3, 1)) == []


def test_ship_reference_replaces_only_the_named_function():
    solution = "def a():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n\n\ndef b():\n    return 2\n"
    stub = "def a():\n    raise NotImplementedError\n\n\ndef b():\n    return 2\n"
    assert ship_reference(stub, solution, {"a"}) == "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    with pytest.raises(ConfigError, match="does not define"):
        ship_reference(stub, solution, {"c"})


def _kit(tmp_path: Path, course: str) -> Path:
    for name in ("one", "two"):
        folder = tmp_path / "assignments" / name
        folder.mkdir(parents=True)
        (folder / "assignment.toml").write_text(f'title = "{name}"\nmodule = "{name}"\n[points]\n"public/t.py::t" = 100\n')
    (tmp_path / "course.toml").write_text(textwrap.dedent(course))
    return tmp_path


def test_shipping_before_the_earlier_deadline_is_refused(tmp_path):
    kit = _kit(
        tmp_path,
        """
        [[assignment]]
        name = "one"
        release = 2027-01-01
        due = 2027-01-08
        [[assignment]]
        name = "two"
        release = 2027-01-08
        due = 2027-01-15
        builds_on = ["one"]
        [[assignment.ships]]
        from = "one"
        names = ["f"]
        not_before = 2027-01-07
        """,
    )
    with pytest.raises(ConfigError, match="before one's deadline"):
        load_course(kit)


def test_builds_on_must_name_an_earlier_assignment_and_unlisted_ones_come_last(tmp_path, capsys):
    kit = _kit(tmp_path, '[[assignment]]\nname = "two"\nbuilds_on = ["one"]\n')
    with pytest.raises(ConfigError, match="not an earlier assignment"):
        load_course(kit)
    (kit / "course.toml").write_text('[[assignment]]\nname = "two"\n')
    assert load_course(kit).order == ["two", "one"]
    assert "does not list assignment 'one'" in capsys.readouterr().err
