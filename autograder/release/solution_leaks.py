"""No solution code in the student's folder: the reference's own lines, looked for in ``student.zip``.

One job: :func:`solution_code_check`. Every non-blank line between the reference's solution
markers (:func:`solution_lines`) is looked for in the files a student receives; a
distinctive one found verbatim is a finding, except in the handout's code-level hints, which
may quote single lines (the instructor's choice) but not a whole function body nor a block of
``HINT_RUN`` lines in a row. The release refuses to build on a finding, and the self-check
proves it again on the zip it ships.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..config import Assignment
from .markers import BEGIN, END, _enclosing_names

if TYPE_CHECKING:
    from .course import CourseEntry

HINT_SECTION = re.compile(r"<!-- BEGIN HINTS -->(.*?)<!-- END HINTS -->", re.DOTALL)
DISTINCTIVE = 25  # a reference line longer than this (stripped) is the reference's own, not a common idiom
HINT_RUN = 3  # this many distinctive reference lines in a row, quoted by the hints, are a block of the answer


@dataclass(frozen=True)
class SolutionLine:
    """One line of the reference's SOLUTION/HIDDEN code."""

    text: str  # stripped, as the release compares it everywhere but in the hints
    code: str  # without a trailing comment, as a hint quotes it
    function: str  # qualified name of the function it sits in ("module" outside any)

    @property
    def distinctive(self) -> bool:
        """Long enough to be the reference's own line (comments included, as compared outside the hints)."""
        return len(self.text) > DISTINCTIVE and not self.text.startswith(("#", '"""', "def ", "class "))

    @property
    def substantive(self) -> bool:
        """Its code alone is long enough to be the reference's own (as compared inside the hints)."""
        return len(self.code) > DISTINCTIVE and not self.code.startswith(('"""', "def ", "class "))


def _code_part(line: str) -> str:
    text = line.strip()
    for i, char in enumerate(text):
        if char == "#" and text[:i].count('"') % 2 == 0 and text[:i].count("'") % 2 == 0:
            return text[:i].rstrip()
    return text


def solution_lines(assignment: Assignment) -> list[SolutionLine]:
    """Every non-blank line between the reference's BEGIN and END markers, with its function."""
    source = assignment.solution.read_text()
    names = _enclosing_names(source)
    lines, inside = [], False
    for number, line in enumerate(source.splitlines(), start=1):
        if BEGIN.match(line) or END.match(line):
            inside = bool(BEGIN.match(line))
            continue
        if inside and len(_code_part(line)) >= 4:  # a closing ")" or "])" says nothing of the answer
            lines.append(SolutionLine(line.strip(), _code_part(line), names.get(number, "module")))
    return lines


@dataclass
class SolutionCheck:
    """What :func:`solution_code_check` found: ``found`` refuses a release; ``hinted`` is allowed."""

    found: list[str]  # solution code in the student's folder, each with where
    hinted: list[str]  # single reference lines the shipped hints quote (the instructor's choice)

    def text(self) -> str:
        """The self-check's line: says what it found, in the words of the finding."""
        if self.found:
            return f"student.zip holds solution code (found: {self.found[:3]})"
        if self.hinted:
            return (
                f"student.zip holds no solution code (its code-level hints quote {len(self.hinted)} line(s) of the "
                f"reference one at a time, as course.toml's hints = true chooses: {self.hinted[:3]})"
            )
        return "student.zip holds no solution code"


def solution_code_check(assignment: Assignment, files: dict[str, bytes], entry: CourseEntry | None = None) -> SolutionCheck:
    """Is any of the reference's solution code in the student's files?

    Everywhere but the handout's code-level hints, a distinctive reference line (longer than
    ``DISTINCTIVE`` characters, stripped) found verbatim is a finding. The hints section (between
    the README's ``<!-- BEGIN HINTS -->`` markers, shipped only when course.toml says ``hints =
    true``) is the instructor's choice to give single lines away: a quoted line there is allowed,
    but not the whole body of a function (two lines or more, every one quoted) nor ``HINT_RUN``
    distinctive lines in a row (a block of the answer). Functions the course ships
    (``[[assignment.ships]]``) are the instructor's choice too and are not looked at.
    """
    shipped = {name for ship in (entry.ships if entry else ()) for name in ship.names}
    lines = [line for line in solution_lines(assignment) if line.function.split(".")[0] not in shipped]
    hints, rest = [], []
    for rel, data in sorted(files.items()):
        text = data.decode("utf-8", "replace")
        if rel == "README.md":
            hints += HINT_SECTION.findall(text)
            text = HINT_SECTION.sub("", text)
        rest.append(text)
    everywhere, hinted_text = "\n".join(rest), "\n".join(hints)
    found = [f"{line.text!r} ({line.function})" for line in lines if line.distinctive and line.text in everywhere]
    hinted: list[str] = []
    if hinted_text:
        by_function: dict[str, list[SolutionLine]] = {}
        for line in lines:
            by_function.setdefault(line.function, []).append(line)
        for function, body in by_function.items():
            quoted = [bool(line.code) and line.code in hinted_text for line in body]
            if len(body) >= 2 and all(quoted):
                found.append(f"the hints quote the whole body of {function} ({len(body)} lines)")
                continue
            run = 0
            for line, is_quoted in zip(body, quoted):
                run = run + line.substantive if is_quoted else 0
                if run >= HINT_RUN:
                    found.append(f"the hints quote {HINT_RUN} lines in a row of {function}'s body (up to {line.code!r})")
                    break
            hinted += [line.code for line, is_quoted in zip(body, quoted) if is_quoted and line.substantive]
    return SolutionCheck(found, list(dict.fromkeys(hinted)))
