"""Grade one submission: find the file, run the suites against it, write the results.

Order matters for trust: a score-0 results file exists before any student code
runs, student code runs only in the worker (``seam``/``sandbox``), and the
final results replace the placeholder atomically after every student process
is gone.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ..config import Assignment
from ..diagnosis.phase import run_phase, valid_names
from ..sandbox import isolation_summary
from . import numerics
from .bounded import Unreadable, read_source
from .record import GradingRecord
from .results import failure_document, results_document, write_results
from .scoring import ScoringPlugin
from .seam import Deadlines, RemoteStudent
from .submission import SubmissionProblem, UnpackBudget, find_submission_file, normalise_source

log = logging.getLogger("autograder.grading.grade")
RESERVE_BYTES = 2 * 1024 * 1024  # kept free beside the results file, so a full disk cannot stop the final write

PLACEHOLDER = (
    "Grading did not finish. If this message stays, the grader stopped before writing results "
    "(for example the whole run ran out of time); contact course staff with your submission time."
)


@dataclass
class Grade:
    document: dict  # Gradescope's rendering of the record (results.json)
    config_errors: list[str]
    record: GradingRecord  # what the grading found, as data: every text is rendered from it

    @property
    def score(self) -> float:
        return float(self.document["score"])


def pytest_args(assignment: Assignment, tests: str = "all") -> list[str]:
    folders = {"all": ["public", "hidden"], "public": ["public"], "hidden": ["hidden"]}[tests]
    paths = [str(assignment.tests_dir / f) for f in folders if (assignment.tests_dir / f).is_dir()]
    return [
        *paths,
        "-q",
        "--assert=plain",  # messages come from our checks, not from pytest's introspection
        "--import-mode=importlib",
        "--noconftest",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "-p",
        "no:unraisableexception",  # its gc.collect() calls at exit cost a third of a second per submission
        "--rootdir",
        str(assignment.tests_dir),
        "-c",
        os.devnull,
        "-W",
        "ignore::DeprecationWarning",
        "-W",
        "ignore::pytest.PytestUnknownMarkWarning",  # function markers: registered in the student's pytest.ini
        "--no-header",
        "-rN",
        "--tb=no",
    ]


def grade_submission(
    assignment: Assignment,
    upload: Path,
    results_path: Path | None = None,
    diagnose: bool = True,
    zygote=None,
    only: list[str] | None = None,
    exitfirst: bool = False,
    run_wall: float = 1.0,
    keep_source: Path | None = None,
) -> Grade:
    """Grade ``upload`` (file, folder or zip). Never raises for anything the student did.

    ``run_wall``: the grading may last ``run_wall`` times the assignment's ``run_timeout`` in wall
    time (1 on Gradescope and for ``grade``, whose platform's own limit follows; more where several
    gradings share the machine: ``grade_many``). Each request's limit is the student's time either way.

    ``only`` (test keys) restricts the run to those tests: the self-check runs each
    catalogued mistake against the tests that claim to catch it, not the whole suite.
    ``exitfirst`` stops at the first failing test (``make mutants``: a mutant is killed or it is not).
    ``keep_source``: where to copy the file graded, as graded (grade-all's similarity reads it there).
    """
    grading = Grading(assignment, run_wall, zygote)
    reserve = None
    if results_path is not None:
        write_results(results_path, failure_document(PLACEHOLDER, kind="unfinished"))
        reserve = _reserve_space(Path(results_path).parent)
    import torch

    torch.set_num_threads(numerics.torch_threads())  # 1: Gradescope gives half a CPU, and sums split alike everywhere
    try:
        try:
            normalised, note = grading.unpack(Path(upload))
        except SubmissionProblem as exc:
            return _finish(results_path, grading.ungradable(f"Score 0: {exc}"), reserve)
        try:  # a copy for the instructor's similarity only: the grading goes on without it
            if keep_source is not None:
                shutil.copyfile(normalised, keep_source)
        except OSError as exc:
            log.warning("could not keep the graded file in %s: %s", keep_source, exc)
        load_error = grading.start_student(normalised)
        plugin = grading.run_tests(diagnose and not load_error, only, exitfirst)
        return _finish(results_path, grading.record(plugin, load_error, note), reserve)
    except Exception as exc:  # noqa: BLE001 - a grader bug must still leave a valid result
        import traceback

        traceback.print_exc()
        grading.close()  # every student process is gone before the results are written
        return _finish(results_path, grading.internal_error(exc), reserve)
    finally:
        grading.close()
        if reserve is not None:
            reserve.unlink(missing_ok=True)


class Grading:
    """The one owner of a grading's state: its clock, its folder, the student's worker, the diagnoser.

    Each step is a method, in order: :meth:`unpack`, :meth:`start_student`, :meth:`run_tests`, then
    :meth:`record` (or :meth:`ungradable`, :meth:`internal_error`); :meth:`close` ends every student
    process and removes the folder, and may be called any number of times.
    """

    def __init__(self, assignment: Assignment, run_wall: float = 1.0, zygote: Any = None) -> None:
        self.assignment = assignment
        self.started = time.monotonic()
        self.deadline = self.started + assignment.run_timeout * run_wall  # the whole run, the import included
        self.zygote = zygote
        self.workdir = Path(tempfile.mkdtemp(prefix="kit-grade-"))
        # One budget for the whole submission: unpacking gets at most a tenth of the run.
        self.budget = UnpackBudget(deadline=self.started + min(30.0, assignment.run_timeout / 10))
        self.student: RemoteStudent | None = None
        self.diagnoser: Any = None
        self.stopped: list[str] = []
        self.load_kind = ""
        self.static_banned: dict = {}  # banned.scan_source of the file (unpack)

    def unpack(self, upload: Path) -> tuple[Path, str]:
        """The student's file, found in the upload and normalised into the grading's folder, and a note."""
        found, note = find_submission_file(
            upload, self.assignment.submit_file, self.workdir, self.budget, self.assignment.graded_functions
        )
        normalised = self.workdir / self.assignment.submit_file
        normalise_source(found, normalised)
        try:  # the grader's own readings of the file, in a child within bounds: a file it cannot read is not graded
            source, name = normalised.read_text(encoding="utf-8"), self.assignment.submit_file
            kept, left_out, self.static_banned = read_source(source, name, self.assignment.banned)
        except Unreadable as exc:
            raise SubmissionProblem(f"{name} {exc.said()}.") from None
        if left_out:
            normalised.write_text(kept, encoding="utf-8")
        return normalised, " ".join(filter(None, [note, left_out]))

    def start_student(self, normalised: Path) -> str:
        """Start the worker and import the student's file in it; the import's error, "" when it loaded."""
        assignment = self.assignment
        self.student = RemoteStudent(
            assignment.module,
            normalised,
            assignment.helpers,
            list(assignment.banned),
            zygote=self.zygote,
            static_banned=self.static_banned,
            deadlines=Deadlines(run=self.deadline),
        )
        load_error = self.student.load()
        log.info(isolation_summary(self.student.worker.user if self.student.worker is not None else None))
        log.info(numerics.describe())
        from ..diagnosis.diagnoser import Diagnoser  # imported here: it loads the mistake catalogue lazily

        # the replays' own budget stops them short of the run's deadline (diagnosis.Budget)
        self.diagnoser = Diagnoser(assignment, run_deadline=self.deadline)
        return load_error or ""

    def run_tests(self, diagnose: bool, only: list[str] | None, exitfirst: bool) -> ScoringPlugin:
        """Run the suites against the student (the scoring plugin keeps each test's record), then stop the worker."""
        assert self.student is not None
        plugin = ScoringPlugin(
            self.assignment, self.student, self.deadline, diagnoser=self.diagnoser if diagnose else None, only=only
        )
        tests_dir = str(self.assignment.tests_dir)
        sys.path.insert(0, tests_dir)
        try:
            forget_test_modules(self.assignment)
            pytest.main(pytest_args(self.assignment) + (["-x"] if exitfirst else []), plugins=[plugin])
        finally:
            sys.path.remove(tests_dir)
        self.stopped = sorted(self.student.stopped)  # what hung, crashed, ran out of memory or broke the channel
        self.load_kind = self.student.load_kind or ""
        self.close()  # every point is final here: the student's process goes before the diagnosis phase starts
        if diagnose and plugin.pending:
            self.diagnosis_phase(plugin)
        return plugin

    def diagnosis_phase(self, plugin: ScoringPlugin) -> None:
        """Name the catalogued mistakes in a child of its own (diagnosis/phase.py), within the diagnosis budget
        and the run's time left; the grader keeps only names it checked."""
        from ..diagnosis.diagnoser import DIAGNOSIS_SECONDS, RUN_RESERVE, WALL_ALLOWANCE

        left = self.deadline - time.monotonic() - RUN_RESERVE * self.assignment.run_timeout
        wall = min(DIAGNOSIS_SECONDS * WALL_ALLOWANCE, left)
        answer, why = run_phase(plugin.diagnose_failures, DIAGNOSIS_SECONDS + 5, wall)
        if answer is None:
            log.warning("diagnosis unavailable for this grading: %s", why)
            plugin.apply_diagnosis(None)
            return
        known = {e.name for e in self.diagnoser.entries} if self.diagnoser is not None else set()
        plugin.apply_diagnosis(valid_names(answer, set(plugin.pending), known))

    def record(self, plugin: ScoringPlugin, load_error: str, note: str) -> GradingRecord:
        tests = list(plugin.results.values())
        for error in plugin.config_errors:
            log.error("configuration error: %s", error)
        return GradingRecord(
            kind="grader-error" if plugin.config_errors else "import-error" if load_error else "graded",
            tests=tests,
            load_error=load_error,
            load=(self.load_kind or "import-error") if load_error else "",  # what happened while importing (checks.KINDS)
            notes=[note] if note else [],
            config_errors=plugin.config_errors,
            stopped=self.stopped,  # the self-check never caches such a result: a loaded machine can cause it
            links=self.budget.links,  # symbolic links in the upload (skipped, never followed)
            named=self.diagnoser.describe([m for t in tests for m in t.mistakes]),
            execution_time=time.monotonic() - self.started,
            hidden_summary=self.assignment.hidden_summary,
            total_points=self.assignment.total_points,
        )

    def ungradable(self, problem: str) -> GradingRecord:
        return GradingRecord(
            kind="ungradable", problem=problem, links=self.budget.links, execution_time=time.monotonic() - self.started
        )

    def internal_error(self, exc: BaseException) -> GradingRecord:
        return GradingRecord(
            kind="grader-error",
            problem=f"Score 0: the grader hit an internal error ({type(exc).__name__}). Course staff can see the details in the log.",
            config_errors=[f"internal error: {exc}"],
            execution_time=time.monotonic() - self.started,
        )

    def close(self) -> None:
        if self.student is not None:
            self.student.close()
            self.student = None
        shutil.rmtree(self.workdir, ignore_errors=True)


def forget_test_modules(assignment: Assignment) -> None:
    """Drop the assignment's test and support modules from ``sys.modules``, so each pytest
    session (one per submission in ``grade_many``) imports them afresh: nothing a module-level
    global kept from one submission's tests reaches the next (tests/test_grading.py checks it)."""
    root = str(assignment.tests_dir.resolve())
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if path and os.path.realpath(path).startswith(root + os.sep):
            del sys.modules[name]


def exit_on_terminate() -> None:
    """SIGTERM (grade-all stopping, a terminal closed) exits through Python, so every ``finally`` runs and the
    grading removes its own reserve file and worker; SIGKILL cannot, and grade-all clears what it left at its
    next start."""
    import signal

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def _reserve_space(folder: Path) -> Path | None:
    """Hold ``RESERVE_BYTES`` of real disk beside the results (released just before the final write)."""
    try:
        fd, name = tempfile.mkstemp(dir=folder, prefix=f".reserve-{os.getpid()}-")  # grade-all keeps a live grader's
        with os.fdopen(fd, "wb") as f:
            f.write(b"\0" * RESERVE_BYTES)
            f.flush()
            os.fsync(f.fileno())
        return Path(name)
    except OSError:
        return None


def _finish(results_path: Path | None, record: GradingRecord, reserve: Path | None = None) -> Grade:
    """Render the record as Gradescope's results.json and write it (the reserve released just before)."""
    document = results_document(record)
    if reserve is not None:
        reserve.unlink(missing_ok=True)
    if results_path is not None:
        write_results(results_path, document)
    return Grade(document, record.config_errors, record)
