"""The registry of the self-check's proofs: each reason the release refuses an assignment, with its one line.

One job: :func:`proof` registers a function as one proof with a one-line description of
what must hold; :data:`PROOFS` is the registry, and :func:`.selfcheck.refusals_markdown` the list the
docs show of what the release refuses (generated from the descriptions, so it cannot
drift from the code). A proof looks at the :class:`Evidence` of its stage and adds what it
found to a :class:`Report` (``report.check(ok, what)``; one proof may check several things).
Stages: ``"zips"`` proofs run on the built zips, beside the gradings; ``"gradings"`` proofs
run on the graded catalogue. The proofs themselves are in :mod:`.catalogue_proofs` and
:mod:`.zip_proofs`; :mod:`.selfcheck` runs them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..catalogue import CatalogueEntry
from ..config import Assignment

STAGES = ("gradings", "zips")  # the order the docs list them in


@dataclass
class Report:
    assignment: str
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    table: list[tuple[str, str, float, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def check(self, ok: bool, what: str) -> None:
        self.lines.append(f"  [{'ok' if ok else 'FAIL'}] {what}")
        if not ok:
            self.problems.append(what)

    def markdown_table(self) -> str:
        lines = [
            f"**`{self.assignment}`** ({len(self.table)} mistakes)",
            "",
            "| mistake | points lost (in those tests) | named in feedback | tests that catch it |",
            "| --- | ---: | :---: | --- |",
        ]
        for mistake, tests, lost, named in self.table:
            lines.append(f"| `{mistake}` | {lost:g} | {named} | {tests} |")
        return "\n".join(lines)

    def text(self) -> str:
        out = [f"[{self.assignment}] self-check", *self.lines]
        if self.table:
            width = max(len(m) for m, _, _, _ in self.table)
            out.append(f"\n  {'mistake':<{width}}  {'points lost':>11}  {'named':>5}  tests that catch it")
            for mistake, tests, lost, named in self.table:
                out.append(f"  {mistake:<{width}}  {lost:>11.1f}  {named:>5}  {tests}")
        if self.problems:
            out.append("\n  Problems:\n    - " + "\n    - ".join(self.problems))
        return "\n".join(out)


@dataclass
class Evidence:
    """What the proofs look at. ``zips`` stage: ``staged`` (the folder holding the built student.zip and
    autograder.zip) and ``proven`` (the slow proofs already passed for these sources); ``gradings``
    stage: ``graded`` ({label: results document}, labels as :func:`.catalogue_grading.catalogue_sources`
    plus ``reference``), the catalogue, and ``whole``: the mistakes' gradings on every test the release knows
    (:func:`.caught_by.known_whole`)."""

    assignment: Assignment
    staged: Path | None = None
    proven: Any = None  # zip_proofs.Proven
    entry: Any = None  # the course entry the release builds with (course.CourseEntry; None: the kit's course.toml)
    graded: dict[str, dict] = field(default_factory=dict)
    mistakes: list[CatalogueEntry] = field(default_factory=list)
    variants: list[CatalogueEntry] = field(default_factory=list)
    corpus: list[CatalogueEntry] = field(default_factory=list)
    bug_errors: list[str] = field(default_factory=list)  # corpus entries whose BUG could not be applied
    whole: dict[str, dict] = field(default_factory=dict)  # mistake -> its grading on every test, where known


@dataclass(frozen=True)
class Proof:
    """One reason the release refuses: ``check(evidence, report)`` reports whether ``description`` holds."""

    description: str  # one line, what must hold; docs/reference/refusals.md lists these lines
    check: Callable[[Evidence, Report], None]
    stage: str


PROOFS: list[Proof] = []


def proof(description: str, stage: str = "gradings") -> Callable:
    """Register the decorated ``check(evidence, report)`` as a proof the release requires."""
    if stage not in STAGES:
        raise ValueError(f"proof stage {stage!r} is not one of {STAGES}")

    def register(check: Callable[[Evidence, Report], None]) -> Callable[[Evidence, Report], None]:
        PROOFS.append(Proof(" ".join(description.split()), check, stage))
        return check

    return register


def proofs_of(stage: str) -> list[Proof]:
    """The registered proofs of one stage, in the order they were registered."""
    return [p for p in PROOFS if p.stage == stage]
