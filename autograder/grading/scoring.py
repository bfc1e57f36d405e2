"""A pytest plugin that turns the assignment's tests into points and feedback.

Points and visibility come from the assignment config (one source); a
parametrized test shares its points between its cases in exact quarters, which gives
partial credit. Only the check's own message (written for students) and what
the student's code printed reach the student: never a grader traceback, a
hidden input or the reference.
"""

from __future__ import annotations

import hashlib
import logging
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from ..checks import Feedback
from ..config import Assignment
from ..context import per_test
from .record import TestRecord
from .seam import Deadlines, load_module
from .student import Student

log = logging.getLogger("autograder.grading.scoring")
OUTPUT_CHARS_PER_TEST = 2000


class ScoringPlugin:
    def __init__(
        self,
        assignment: Assignment,
        student: Student,
        run_deadline: float,
        diagnoser: Any = None,
        only: Any = None,
        seed_base: int = 0,
    ) -> None:
        self.assignment = assignment
        self.seed_base = seed_base  # shifts every test's seed (the flake check); 0 when grading
        self.only = set(only) if only is not None else None
        self.student = student
        self.run_deadline = run_deadline
        self.diagnoser = diagnoser
        self.results: dict[str, TestRecord] = {}
        self.config_errors: list[str] = []
        self._marks: dict[str, Any] = {}
        self._diagnosed: list[str] = []  # nodeids of the failures compared with the catalogue
        # the failures to compare once the suites have returned (diagnosis/phase.py): nodeid -> (exception, its
        # replay taken when it failed, the file's names the test ran); PENDING_BYTES of answers in all
        self._pending: dict[str, tuple[BaseException, Any, set[str] | None]] = {}
        self._pending_bytes = 0
        # failures no mistake explained alone, kept (small ones, LOOK_AGAIN_BYTES in all) for a second look
        # once every test has run: nodeid -> (exception, item)
        self._unexplained: dict[str, tuple[BaseException, Any]] = {}
        self._kept_bytes = 0
        self._passed_bytes = 0  # the arguments of the passed cases kept (Diagnoser.keep_passed), LOOK_AGAIN_BYTES in all
        self._ran: dict[str, set[str] | None] = {}  # per test key, the file's names its cases ran (_names_run)
        self._reference = None
        # the contract's functions (those the tests grade, those graded through others): what may be unwritten
        self._contract = (assignment.graded_functions | set(assignment.untested)) - {""}

    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line("markers", f"{GRADES}(function): the function or class a test grades")
        config.addinivalue_line("markers", f"{APART}: a failure of this test is never a cause of a caller's failures")

    # -- fixtures --------------------------------------------------------------
    @pytest.fixture(name="student")
    def student_fixture(self) -> Any:
        return self.student

    @pytest.fixture(name="reference")
    def reference_fixture(self) -> Any:
        if self._reference is None:
            self._reference = load_module(f"_reference_{self.assignment.module}", self.assignment.solution)
        return self._reference

    @pytest.fixture(name="seed")
    def seed_fixture(self, request: pytest.FixtureRequest) -> int:
        """A seed per test, stable across runs; ``seed_base`` shifts all of them (the flake check)."""
        digest = hashlib.sha256(f"{self.seed_base}:{request.node.nodeid}".encode()).digest()
        return int.from_bytes(digest[:4], "little")

    @pytest.fixture(name="gen")
    def gen_fixture(self, seed: int) -> torch.Generator:
        return torch.Generator().manual_seed(seed)

    # -- collection -----------------------------------------------------------
    def key_of(self, item: pytest.Item) -> str:
        rel = Path(str(item.fspath)).resolve().relative_to(self.assignment.tests_dir.resolve())
        return f"{rel.as_posix()}::{getattr(item, 'originalname', item.name)}"

    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        keys = {item.nodeid: self.key_of(item) for item in items}
        if self.only is not None:
            unknown = self.only - set(keys.values())
            self.config_errors.extend(f"asked to run {key}, but no such test was collected" for key in sorted(unknown))
            config.hook.pytest_deselected(items=[item for item in items if keys[item.nodeid] not in self.only])
            items[:] = [item for item in items if keys[item.nodeid] in self.only]
        counts: dict[str, int] = {}
        for item in items:
            counts[keys[item.nodeid]] = counts.get(keys[item.nodeid], 0) + 1
        for key in counts:
            if key not in self.assignment.points:
                self.config_errors.append(f"test {key} has no points in assignment.toml")
        for key in self.assignment.points:
            if key not in counts and (self.only is None or key in self.only):
                self.config_errors.append(f"assignment.toml gives points to {key}, but no such test was collected")
        seen: dict[str, int] = {}
        for item in items:
            key = keys[item.nodeid]
            index = seen[key] = seen.get(key, -1) + 1
            self.results[item.nodeid] = TestRecord(
                key=key,
                nodeid=item.nodeid,
                name=test_title(item),
                function=graded_function(item),
                apart=item.get_closest_marker(APART) is not None,
                max_score=split_points(self.assignment.points.get(key, 0.0), counts[key])[index],
                visibility=self.assignment.visibility_of(key),
            )

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.config_errors.append(f"could not collect {report.nodeid}: {report.longreprtext[-2000:]}")

    # -- running ----------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Any) -> Any:
        """Each test (setup, call, teardown, report) runs under its deadlines and records the
        provenance of the values its student calls return in a registry of its own."""
        deadlines = Deadlines(run=self.run_deadline, request=self.assignment.test_timeout)
        with self.student.deadlines(deadlines), per_test():
            yield

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        now = time.monotonic()
        self._marks[item.nodeid] = self.student.output_mark()  # None: an in-process student captures nothing
        if now >= self.run_deadline:
            raise Feedback("not run: grading reached the time limit for the whole submission before this test", kind="not-run")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> Any:
        outcome = yield
        report = outcome.get_result()
        result = self.results.get(item.nodeid)
        if result is None:
            return
        if report.when == "call" and report.passed:
            result.status, result.score, result.kind = "passed", result.max_score, "passed"
            if self.diagnoser is not None:  # two mistakes may cancel on a passed test (Diagnoser.cancelled)
                size = _held_bytes(getattr(item, "funcargs", None))
                fits = self._passed_bytes + size <= LOOK_AGAIN_BYTES
                self._passed_bytes += size if fits else 0
                self.diagnoser.keep_passed(result.key, item if fits else None)
        elif report.failed and report.when in ("setup", "call"):
            result.status, result.score = "failed", 0.0
            exc = call.excinfo.value if call.excinfo is not None else None
            result.kind = exc.kind if isinstance(exc, Feedback) else "unreadable"
            result.message = self._failure_text(call.excinfo)
            result.hint = exc.hint if isinstance(exc, Feedback) and result.message.endswith(exc.hint) else ""
            if getattr(exc, "stopped_in", "") in self._contract:  # what is unwritten, for the summary's words
                result.unwritten = exc.stopped_in
            if self.diagnoser is not None and exc is not None:
                self._defer(result, exc, item)
        elif report.skipped and report.when in ("setup", "call"):
            result.status, result.score, result.kind = "failed", 0.0, "skipped"
            result.message = "not run (skipped)"
        if report.when == "teardown":
            result.uses = sorted(self.student.names_used() - {result.function})
            names, known = self._names_run(result), self._ran.get(result.key, set())
            self._ran[result.key] = None if names is None or known is None else known | names
            mark = self._marks.pop(item.nodeid, None)
            if mark is not None:
                result.printed = self.student.output_since(mark, OUTPUT_CHARS_PER_TEST)

    def _defer(self, result: TestRecord, exc: BaseException, item: Any) -> None:
        """Keep a failure for the diagnosis phase, with what a replay of it needs (taken now: pytest lets go of a
        test's arguments after its teardown), if what it holds fits the grader's bound."""
        size = _held_bytes(getattr(exc, "got", None))
        if self._pending_bytes + size > PENDING_BYTES:
            return  # not compared: nothing is said of it
        try:
            replay = self.diagnoser.replay_of(exc, item)
        except Exception:  # noqa: BLE001 - words only: a diagnosis bug must not touch the grade
            log.error("no replay of %s:\n%s", result.key, traceback.format_exc())
            return
        self._pending_bytes += size
        self._pending[result.nodeid] = (exc, replay, self._names_run(result))

    def _diagnose(self, result: TestRecord, exc: BaseException, replay: Any, ran: set[str] | None) -> None:
        """Compare a failure with the catalogue; what it concludes is settled once every failure was compared."""
        try:
            mistakes, compared = self.diagnoser(exc, result.key, ran=ran, replay=replay)
        except Exception:  # noqa: BLE001 - words only: a diagnosis bug must not touch the grade
            log.error("diagnosis failed for %s:\n%s", result.key, traceback.format_exc())
            return
        if compared:  # settled once every failure has been compared (_name_consistent_mistakes)
            result.mistakes, result.diagnosis = list(mistakes), "named" if mistakes else "none"
            self._diagnosed.append(result.nodeid)
            if not mistakes:
                self._keep_for_second_look(replay, exc, result, ran)
        elif self.diagnoser.skipped:  # the budget stopped this look: the second may still find the file's mistakes
            result.diagnosis = "skipped"
            self._diagnosed.append(result.nodeid)
            self._keep_for_second_look(replay, exc, result, ran)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        graded = {r.function for r in self.results.values()}
        graded |= {g.split(".")[0] for g in graded}  # a class whose methods are graded ("AttnSeq2Seq.step")
        for result in self.results.values():  # of the names a test ran, the graded functions and classes
            result.uses = [n for n in result.uses if n in graded and n != result.function.split(".")[0]]

    # -- the diagnosis phase (diagnosis/phase.py): after the suites, in a child process ------------------------
    @property
    def pending(self) -> list[str]:
        """The failures the diagnosis phase will compare with the catalogue."""
        return list(self._pending)

    def diagnose_failures(self) -> dict[str, list]:
        """Every pending failure compared with the catalogue, then the names settled across all tests: the
        diagnosis phase's work (run in a child: it touches only the child's copy). {nodeid: [diagnosis, ids]}."""
        for nodeid, (exc, replay, ran) in self._pending.items():
            self._diagnose(self.results[nodeid], exc, replay, ran)
        try:
            self._name_consistent_mistakes()
        except Exception:  # noqa: BLE001 - words only: a diagnosis bug must not touch the grade
            log.error("naming the mistakes failed:\n%s", traceback.format_exc())
            for nodeid in self._diagnosed:  # the plain sentence where a name would have gone
                self.results[nodeid].mistakes, self.results[nodeid].diagnosis = [], "unavailable"
        return {n: [self.results[n].diagnosis, list(self.results[n].mistakes)] for n in self._pending}

    def apply_diagnosis(self, names: dict[str, tuple[str, list[str]]] | None) -> None:
        """The phase's names (already checked: phase.valid_names) on their tests; None: the phase had none, and
        every failure it would have compared says so. Points are never touched."""
        for nodeid in self._pending:
            result = self.results[nodeid]
            result.diagnosis, result.mistakes = names.get(nodeid, ("", [])) if names is not None else ("unavailable", [])
            if result.diagnosis == "skipped":
                result.diagnosis = ""
        self._pending.clear()
        self._unexplained.clear()

    def _names_run(self, result: TestRecord) -> set[str] | None:
        """The file's names the running test ran: its own function and what the student's code it called refers
        to (None: not known, a grader helper ran); the diagnoser weighs a mistake only where its function ran."""
        names = self.student.names_run()
        return None if names is None else names | {result.function.split(".")[0]}

    def _keep_for_second_look(self, replay: Any, exc: BaseException, result: TestRecord, ran: set[str] | None) -> None:
        """Keep a failure no mistake explained alone, if what it holds is small (the phase's memory is bounded)."""
        size = _held_bytes(getattr(exc, "got", None))
        if self._kept_bytes + size <= LOOK_AGAIN_BYTES:
            self._kept_bytes += size
            self._unexplained[result.nodeid] = (exc, replay, ran)

    def _name_consistent_mistakes(self) -> None:
        """Name a mistake only where it explains everything the submission did, in all its tests; then look
        again, with the mistakes so named, at the failures none explained alone (a file with several mistakes)."""
        if self.diagnoser is None:
            return
        failed = {r.key for r in self.results.values() if r.status != "passed"}
        passed = {r.key for r in self.results.values() if r.status == "passed"} - failed  # every case passed
        ran = self._ran  # per test, the file's names its cases ran (None: not known)
        self.diagnoser.reconsider()  # several mistakes change each other's values: contradictions looked at again
        for nodeid in self._diagnosed:
            result = self.results[nodeid]
            before = result.diagnoses
            kept = self.diagnoser.consistent(before, passed, ran)
            if before and not kept:  # its values are that mistake's, which the rest of the submission rules out
                result.mistakes, result.diagnosis = before[:1], "resembles"
            else:
                result.mistakes = kept
        named = list(dict.fromkeys(n for r in self.results.values() for n in r.diagnoses))
        for nodeid, (exc, call, names_ran) in self._unexplained.items():
            result = self.results[nodeid]
            if result.diagnosis in ("none", "skipped"):
                again = self.diagnoser.again(exc, result.key, call, named, result.diagnosis == "none", passed, names_ran)
                result.mistakes = self.diagnoser.consistent(again, passed, ran)
                if len(result.mistakes) > 1:  # only all of them together reproduce the student's values
                    result.diagnosis = "together"
        for nodeid in self._diagnosed:  # a mistake the second look cleared (found beside the others) stands again
            result = self.results[nodeid]
            if result.diagnosis == "resembles" and self.diagnoser.consistent(result.mistakes, passed, ran):
                result.diagnosis = "named"
        self._drop_redundant()
        found = any(self.results[n].mistakes and self.results[n].diagnosis != "resembles" for n in self._diagnosed)
        for nodeid in self._diagnosed:
            result = self.results[nodeid]
            if result.diagnosis == "resembles" or (result.diagnosis == "together" and len(result.mistakes) > 1):
                continue
            if result.mistakes:
                result.diagnosis = "named"
            else:
                # "matches none" only in a file where no mistake was found: beside one, a combination with a mistake
                # the file hides could reproduce it, and a look the budget stopped tried nothing (nothing is said)
                result.diagnosis = "none" if result.diagnosis == "none" and not found else ""

    def _drop_redundant(self) -> None:
        """A mistake named only on tests where another named mistake is named too, which is named on more tests,
        is not named: the other explains every failure it does, and more (a softmax without the max subtraction
        also gives NaN on fully blocked rows, so attention's `fully_blocked_nan` would add a second, false cause).
        Mistakes named on the same tests are both kept: nothing tells them apart. Every test keeps a name."""
        where: dict[str, set[str]] = {}
        alone = [n for n in self._diagnosed if self.results[n].diagnosis not in ("resembles", "together")]
        for nodeid in alone:  # a test whose mistakes only together explain it keeps them all
            for name in self.results[nodeid].mistakes:
                where.setdefault(name, set()).add(nodeid)
        redundant = {m for m, tests in where.items() if any(tests < others for k, others in where.items() if k != m)}
        for nodeid in alone:
            result = self.results[nodeid]
            if redundant & set(result.mistakes):
                result.mistakes = [m for m in result.mistakes if m not in redundant]

    def _failure_text(self, excinfo: Any) -> str:
        if excinfo is None:
            return "failed"
        exc = excinfo.value
        if isinstance(exc, Feedback):
            return str(exc)
        # Anything else comes from the test's own code handling what the student
        # returned (e.g. indexing a tensor that is not one). The student sees
        # the error kind; the full traceback goes to the instructor-only log.
        log.error("unexpected error in a test:\n%s", "".join(traceback.format_exception(exc)))
        return (
            f"the check could not be completed on what your code returned "
            f"({type(exc).__name__}: {str(exc)[:300]}). Check the return type and shape against the handout."
        )


def split_points(points: float, n: int) -> list[float]:
    """Split ``points`` over ``n`` cases so that the cases, the test and the whole total add up exactly.

    Quarters are exact binary fractions, so any sum of them (Gradescope's, a spreadsheet's) is exact:
    7 over 3 gives 2.5, 2.25, 2.25 (the remainder to the first cases). Only when a test has more
    cases than quarter points do the cases fall back to hundredths (exact to two decimals only).
    """
    unit = 4 if points * 4 >= n else 100  # parts per point
    parts = round(points * unit)
    base, extra = divmod(parts, n)
    return [(base + (1 if i < extra else 0)) / unit for i in range(n)]


LOOK_AGAIN_BYTES = 16 * 2**20  # what the failures kept for a second look may hold in all (answers they carry)
PENDING_BYTES = 64 * 2**20  # what the failures kept for the diagnosis phase may hold in all


def _held_bytes(value: Any, depth: int = 0) -> int:
    """About how many bytes the tensors and arrays in ``value`` hold (a failure kept for a second look)."""
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, np.ndarray):  # (never an attribute asked of anything else: a handle asks the worker)
        return int(value.nbytes)
    if isinstance(value, (list, tuple)) and depth < 3:
        return sum(_held_bytes(v, depth + 1) for v in value[:64]) + 8 * len(value)
    if isinstance(value, dict) and depth < 3:
        return sum(_held_bytes(v, depth + 1) for v in list(value.values())[:64]) + 8 * len(value)
    return 64


def test_title(item: pytest.Item) -> str:
    """ "softmax: rows sum to 1 [float32]" from the test's docstring (or its name)."""
    doc = (getattr(item, "function", None).__doc__ or "").strip().splitlines() if hasattr(item, "function") else []
    title = doc[0].strip() if doc else getattr(item, "originalname", item.name)
    callspec = getattr(item, "callspec", None)
    if callspec is not None:
        title += f" [{callspec.id}]"
    return title


GRADES = "grades"  # the marker a test declares the function it grades with: @pytest.mark.grades("softmax")
# A test whose failure its function's callers are graded around (their tests excuse what it checks, as sdpa's tests
# excuse a softmax without the all -inf guard): the summary never tells a caller to fix this first for it.
APART = "callers_apart"


def graded_function(item: pytest.Item) -> str:
    """The function or class ``item`` grades, as its test declares it (``@pytest.mark.grades("softmax")``,
    on the test or as the module's ``pytestmark``); ``other`` when it declares none (the release refuses that)."""
    mark = item.get_closest_marker(GRADES)
    return str(mark.args[0]) if mark is not None and mark.args else "other"
