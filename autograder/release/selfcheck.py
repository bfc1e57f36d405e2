"""The release self-check: prove the grading before shipping it.

Runs every proof registered in :mod:`.proofs` (the proofs themselves are in
:mod:`.catalogue_proofs` and :mod:`.zip_proofs`) and refuses the release, saying
why, when one does not hold. What the release refuses is therefore the registry's
list: :func:`refusals_markdown` generates it into docs/reference/refusals.md
at each release.

Gradings and the slow proofs (notebook, other seed) are cached by the hash of
everything they depend on (:mod:`.catalogue_grading`), so an unchanged assignment
re-checks in seconds. This is each assignment's proof: ``make release`` runs it,
and CI runs ``make release`` on a fresh clone before ``make test``.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..catalogue import read_catalogue
from ..config import Assignment
from . import (  # noqa: F401 - importing them registers their proofs
    catalogue_proofs,
    prairielearn_proofs,  # noqa: F401 - importing them registers their proofs
    zip_proofs,
)
from .catalogue_grading import DEFAULT_CACHE, _fingerprint, catalogue_sources, grade_sources, proofs_fingerprint
from .catalogue_proofs import mistake_table
from .caught_by import known_whole
from .proofs import STAGES, Evidence, Report, proofs_of
from .zip_proofs import Proven, check_gradescope_zip


def self_check(assignment: Assignment, staged: Path, cache: Path = DEFAULT_CACHE, entry: Any = None, jobs: int = 0) -> Report:
    """Every registered proof for ``assignment``, whose built zips are in ``staged``; the report says what failed.
    ``entry``: the course entry the zips were built with (None: the kit's course.toml's); ``jobs``: the grader
    processes the catalogue is graded with (0: one per core)."""
    report = Report(assignment.name)
    sources, only, bug_errors = catalogue_sources(assignment)
    started = time.monotonic()
    # The zips are checked while the catalogue is graded; the reference's grading is the one the
    # autograder.zip does in the simulated Gradescope tree (one grading proves both).
    zip_report = Report(assignment.name)
    fingerprint = _fingerprint(assignment)
    with ThreadPoolExecutor(max_workers=1) as pool:
        proven = Proven(cache, assignment, proofs_fingerprint(assignment, fingerprint))
        zip_checks = pool.submit(_check_zips, assignment, staged, zip_report, proven, entry)
        graded = grade_sources(assignment, sources, jobs_n=jobs, only=only, cache=cache, fingerprint=fingerprint)
        graded["reference"] = zip_checks.result()
    report.lines.append(f"  graded {len(sources) + 1} submissions and checked the zips in {time.monotonic() - started:.0f} s")

    evidence = Evidence(
        assignment,
        staged=staged,
        graded=graded,
        mistakes=read_catalogue(assignment, "mistake"),
        variants=read_catalogue(assignment, "variant"),
        corpus=read_catalogue(assignment, "corpus"),
        bug_errors=bug_errors,
    )
    # the mistakes' gradings on every test, as far as known: a CAUGHT_BY that is not what they fail is refused
    evidence.whole = known_whole(evidence, grade_sources, cache, fingerprint)
    for registered in proofs_of("gradings"):
        registered.check(evidence, report)
    report.table = mistake_table(evidence)
    report.lines.extend(zip_report.lines)
    report.problems.extend(zip_report.problems)
    return report


def _check_zips(assignment: Assignment, staged: Path, report: Report, proven: Proven, entry: Any = None) -> dict:
    """The proofs on the built zips (stage ``zips``), run beside the gradings; returns the reference's
    results from the autograder.zip (graded in a simulated Gradescope tree)."""
    evidence = Evidence(assignment, staged=staged, proven=proven, entry=entry)
    for registered in proofs_of("zips"):
        registered.check(evidence, report)
    return check_gradescope_zip(assignment, staged / "autograder.zip", report, proven)


def refusals_markdown() -> str:
    """What the release refuses, as the READMEs list it: one line per registered proof."""

    lines = [f"- {p.description};" for stage in STAGES for p in proofs_of(stage)]
    lines[-1] = lines[-1][:-1] + "."
    lines += [
        "",
        "Each line is one proof, a function registered with `@proof` in `autograder/release/catalogue_proofs.py` or "
        "`autograder/release/zip_proofs.py`; this list is generated from them.",
    ]
    return "\n".join(lines)
