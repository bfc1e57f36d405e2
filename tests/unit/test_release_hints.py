"""The hints switch (course.toml `hints = true`) and the release's check for solution code in student.zip.

The code-level hints quote single lines of the reference on purpose: the check allows a line there,
says what it found when it finds solution code anywhere else, and still refuses a whole function
body (or a block of one) pasted into the hints."""

from __future__ import annotations

import pytest

from autograder.config import KIT_ROOT, list_assignments, load_assignment
from autograder.release.build import _summary
from autograder.release.course import CourseEntry, Shipment, load_course
from autograder.release.solution_leaks import HINT_RUN, solution_code_check, solution_lines
from autograder.release.student_folder import handout_text, student_files

ALL = list_assignments(KIT_ROOT)


@pytest.mark.parametrize("name", ALL)
def test_the_hints_quote_single_reference_lines_and_are_allowed(name):
    assignment = load_assignment(name, KIT_ROOT)
    entry = load_course(KIT_ROOT).entry(name)
    with_hints = student_files(assignment, hints=True)
    readme = with_hints["README.md"].decode()
    assert "Code-level hints" in readme and "<!-- BEGIN HINTS -->" in readme, "the shipped hints keep their markers"
    check = solution_code_check(assignment, with_hints, entry)
    assert check.found == [], check.text()
    assert check.text().startswith("student.zip holds no solution code")
    without = student_files(assignment, hints=False)
    assert "Code-level hints" not in without["README.md"].decode()
    assert solution_code_check(assignment, without, entry).found == []


def test_the_transformer_hint_that_refused_the_release_is_allowed_and_named():
    """Issue 25: `hints = true` for transformer refused the release over one quoted line
    (nn.utils.clip_grad_norm_...), with a message saying the opposite of what it found."""
    transformer = load_assignment("transformer", KIT_ROOT)
    check = solution_code_check(transformer, student_files(transformer, hints=True))
    assert check.found == []
    assert "nn.utils.clip_grad_norm_(model.parameters(), 1.0)" in check.hinted
    assert "hints quote" in check.text() and "hints = true" in check.text()


def _with_hints(files: dict[str, bytes], quoted: list[str]) -> dict[str, bytes]:
    readme = files["README.md"].decode()
    block = "\n".join(f"- `{line}`" for line in quoted)
    return {**files, "README.md": readme.replace("<!-- END HINTS -->", block + "\n<!-- END HINTS -->").encode()}


def test_a_whole_function_body_in_the_hints_is_refused_and_the_message_says_it_was_found():
    attention = load_assignment("attention", KIT_ROOT)
    files = student_files(attention, hints=True)
    body = [line.code for line in solution_lines(attention) if line.function == "softmax"]
    assert len(body) >= 2
    check = solution_code_check(attention, _with_hints(files, body))
    assert any("whole body of softmax" in f for f in check.found), check.found
    assert check.text().startswith("student.zip holds solution code (found: ")


def test_a_block_of_the_answer_in_the_hints_is_refused():
    transformer = load_assignment("transformer", KIT_ROOT)
    lines = [line for line in solution_lines(transformer) if line.function == "train"]
    # HINT_RUN substantive lines in a row (and whatever short lines sit between them), not the whole body
    run, block = 0, []
    for line in lines:
        block.append(line.code)
        run += line.substantive
        if run == HINT_RUN:
            break
    assert run == HINT_RUN and len(block) < len(lines)
    check = solution_code_check(transformer, _with_hints(student_files(transformer, hints=True), block))
    assert any(f"quote {HINT_RUN} lines in a row of train" in f for f in check.found), check.found


def test_solution_code_outside_the_hints_is_found_even_with_hints_on():
    transformer = load_assignment("transformer", KIT_ROOT)
    files = student_files(transformer, hints=True)
    quoted = "nn.utils.clip_grad_norm_(model.parameters(), 1.0)"
    leaked = {**files, "public_tests/test_extra.py": f"def helper(model):\n    {quoted}\n".encode()}
    check = solution_code_check(transformer, leaked)
    assert check.found and quoted in check.found[0]
    assert check.text() == f"student.zip holds solution code (found: {check.found[:3]})"
    # the same line in the README's main text (not the hints section) is found too
    readme = files["README.md"].decode().replace("<!-- BEGIN HINTS -->", f"`{quoted}`\n\n<!-- BEGIN HINTS -->", 1)
    assert solution_code_check(transformer, {**files, "README.md": readme.encode()}).found


def test_functions_the_course_ships_are_the_instructors_choice():
    transformer = load_assignment("transformer", KIT_ROOT)
    shipped = student_files(transformer, shipped=frozenset({"sinusoidal_positions"}))
    # shipping multihead's reference may repeat a line of transformer's own (the same contract)
    own = next(line for line in solution_lines(transformer) if line.function == "sinusoidal_positions" and line.distinctive)
    shipped = {**shipped, "transformer.py": shipped["transformer.py"] + f"\n# {own.text}\n".encode()}
    entry = CourseEntry(
        "transformer", ships=(Shipment("multihead", ("sinusoidal_positions",), load_course().entry("multihead").due),)
    )
    assert solution_code_check(transformer, shipped, entry).found == []
    assert solution_code_check(transformer, shipped).found, "without the course's choice it is solution code"


def test_handout_text_keeps_the_default_of_no_hints():
    assignment = load_assignment("seq2seq", KIT_ROOT)
    assert "Code-level hints" not in handout_text(assignment)
    assert "<!-- BEGIN HINTS -->" in handout_text(assignment, hints=True)


def test_the_no_check_summary_says_it_was_not_self_checked(tmp_path):
    assert "built and self-checked" in _summary(["attention"], {}, tmp_path)
    unchecked = _summary(["attention"], {}, tmp_path, checked=False)
    assert "built, NOT self-checked" in unchecked and "built and self-checked" not in unchecked
    failed = _summary(["attention", "multihead"], {"multihead": "cannot build: x"}, tmp_path, checked=False)
    assert failed.splitlines()[-1] == "  built, NOT self-checked (--no-check; not for real releases): attention"
