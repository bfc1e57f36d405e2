"""The PrairieLearn entry point: the grading package's ``run_grader.sh`` calls ``python -m autograder prairielearn``.

Layout (``PL_GRADE_ROOT``, default ``/grade``), as PrairieLearn assembles it: ``serverFilesCourse/<package>/``
is the grading package (this engine, one assignment, its reference), ``tests/`` the question's
copy of the assignment's tests, ``student/`` the upload, ``data/data.json`` the question's data;
``results/results.json`` is what PrairieLearn reads. Grading is Gradescope's: the same
:func:`.grade.grade_submission`, the zygote started the same way, and, as root, the grader's
folders made private (0700) before student code starts. The engine's Gradescope document is
kept beside as ``results/gradescope.json`` and rendered by :mod:`.prairielearn_results`.
"""

from __future__ import annotations

import ast
import logging
import math
import os
import shutil
import stat
from pathlib import Path

from ..config import Assignment
from ..grading.bounded import Unreadable, bounded
from ..grading.submission import MAX_FILE_BYTES
from ..sandbox import running_as_root
from .entry import last_resort, the_assignment

log = logging.getLogger("autograder.prairielearn")
PL_MAX_TIMEOUT_S = 600  # PrairieLearn refuses a longer externalGradingOptions.timeout
LAST_RESORT_MARGIN_S = 90  # as Gradescope's entry point: the whole run's limit beyond run_timeout
START_MARGIN_S = 30  # the container's start and the interpreter's, before grading starts
GRADESCOPE_COPY = "gradescope.json"  # the engine's own document, for course staff (PrairieLearn archives /grade)
PRIVATE = ("results", "student", "tests", "serverFilesCourse", "data")  # under the grade root, 0700 as root


def grading_timeout(assignment: Assignment) -> int:
    """info.json's ``timeout`` (the release writes it): the run's limit, the last-resort margin and the
    start, capped at 600 s; the last resort fires START_MARGIN_S before it."""
    wanted = assignment.run_timeout + LAST_RESORT_MARGIN_S + START_MARGIN_S
    return min(PL_MAX_TIMEOUT_S, int(math.ceil(wanted)))


def grade_root() -> Path:
    return Path(os.environ.get("PL_GRADE_ROOT", "/grade"))


def run_prairielearn() -> int:
    """Grade ``<root>/student/`` and write ``<root>/results/results.json``; 0 when grading ran."""
    root = grade_root()
    results = root / "results" / "results.json"
    try:
        assignment = the_assignment("the grading package")
        _use_question_tests(assignment, root / "tests")
    except Exception as exc:  # noqa: BLE001 - always leave a results file
        _write_failure(results, f"The autograder is misconfigured ({exc}); please tell course staff.")
        log.error("cannot start: %s", exc)
        return 1
    if running_as_root():
        _make_private(root)
    from ..sandbox.zygote import started_before_torch

    with started_before_torch(assignment.banned, assignment.trains) as zygote:  # its torch import overlaps the grader's
        from ..grading.grade import PLACEHOLDER, grade_submission
        from ..grading.record import GradingRecord
        from .prairielearn_results import prairielearn_document, write_prairielearn_results

        write_prairielearn_results(results, prairielearn_document(GradingRecord(kind="unfinished", problem=PLACEHOLDER)))
        last_resort(lambda message: _write_failure(results, message), grading_timeout(assignment) - START_MARGIN_S)
        grade = grade_submission(assignment, root / "student", results.parent / GRADESCOPE_COPY, zygote=zygote)
    syntax_error = _has_syntax_error(root / "student" / assignment.submit_file)
    write_prairielearn_results(results, prairielearn_document(grade.record, syntax_error))
    log.info("%s: %g points; results in %s", assignment.name, grade.score, results)
    return 0


def _use_question_tests(assignment: Assignment, tests: Path) -> None:
    """Grade with the question's ``tests/`` (``/grade/tests``) when it holds a suite: the copy the
    course edits in its question folder is the one graded (the release ships the two identical)."""
    if not any((tests / folder).is_dir() for folder in ("public", "hidden")):
        return
    if assignment.tests_dir.resolve() == tests.resolve():
        return
    shutil.rmtree(assignment.tests_dir, ignore_errors=True)
    shutil.copytree(tests, assignment.tests_dir)


def _make_private(root: Path) -> None:
    """The grade root and the grader's folders in it: readable by root only, before student code runs
    (the worker's user reads only its staged copy of the upload). The kit itself: sandbox.protect_secrets."""
    for path in (root, *(root / name for name in PRIVATE)):
        if path.is_dir() and not path.is_symlink():
            os.chmod(path, 0o700)


def _has_syntax_error(path: Path) -> bool:
    """Whether the uploaded file does not parse (parsed in a bounded child, never run; a file grading refused
    as too large is never read); PrairieLearn then counts no attempt."""
    try:
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK), "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode) or os.fstat(f.fileno()).st_size > MAX_FILE_BYTES:
                return False
            raw = f.read(MAX_FILE_BYTES + 1)
        return bool(bounded(_syntax_error, raw))
    except (OSError, Unreadable):
        return False


def _syntax_error(raw: bytes) -> bool:
    try:
        compile(raw, "<upload>", "exec", ast.PyCF_ONLY_AST)
    except SyntaxError:
        return True
    return False


def _write_failure(results: Path, message: str) -> None:
    from ..grading.record import GradingRecord
    from .prairielearn_results import prairielearn_document, write_prairielearn_results

    write_prairielearn_results(results, prairielearn_document(GradingRecord(kind="grader-error", problem=message)))
