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
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from .checks import Feedback, recording
from .config import Assignment
from .seam import Deadlines, load_module
from .text_limits import cut

log = logging.getLogger("autograder.scoring")
OUTPUT_CHARS_PER_TEST = 2000


@dataclass
class TestResult:
    key: str  # "hidden/test_softmax.py::test_rows_sum_to_one"
    nodeid: str
    name: str
    max_score: float
    score: float = 0.0
    status: str = "failed"
    output: str = ""
    visibility: str = "after_published"
    diagnoses: list[str] = field(default_factory=list)  # ids of catalogued mistakes recognised
    kind: str = "not-run"  # how it ended (checks.KINDS), set where it happened; never read from the output


class ScoringPlugin:
    def __init__(
        self,
        assignment: Assignment,
        student: Any,
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
        self.results: dict[str, TestResult] = {}
        self.config_errors: list[str] = []
        self._marks: dict[str, Any] = {}
        self._diagnosed: dict[str, int] = {}  # nodeid -> where its diagnosis goes in the output
        # failures no mistake explained alone, kept (small ones, LOOK_AGAIN_BYTES in all) for a second look
        # once every test has run: nodeid -> (exception, item)
        self._unexplained: dict[str, tuple[BaseException, Any]] = {}
        self._kept_bytes = 0
        self._reference = None

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
            self.results[item.nodeid] = TestResult(
                key=key,
                nodeid=item.nodeid,
                name=test_title(item),
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
        timed = self.student.deadlines(deadlines) if hasattr(type(self.student), "deadlines") else nullcontext()
        with timed, recording():
            yield

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        now = time.monotonic()
        captures = hasattr(type(self.student), "output_mark")  # an in-process student (local.py) captures nothing
        self._marks[item.nodeid] = self.student.output_mark() if captures else None
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
        elif report.failed and report.when in ("setup", "call"):
            result.status, result.score = "failed", 0.0
            exc = call.excinfo.value if call.excinfo is not None else None
            result.kind = exc.kind if isinstance(exc, Feedback) else "unreadable"
            result.output = self._failure_text(call.excinfo)
            if self.diagnoser is not None and call.excinfo is not None:
                try:
                    result.diagnoses, text = self.diagnoser(call.excinfo.value, result.key, item)
                except Exception:  # noqa: BLE001 - words only: a diagnosis bug must not touch the grade
                    log.error("diagnosis failed for %s:\n%s", result.key, traceback.format_exc())
                    text = ""
                if text:  # placed when the run ends, once every test has been seen (_name_consistent_mistakes)
                    self._diagnosed[item.nodeid] = len(result.output)
                if text and not result.diagnoses:
                    self._keep_for_second_look(item, call.excinfo.value)
        elif report.skipped and report.when in ("setup", "call"):
            result.status, result.score, result.kind = "failed", 0.0, "skipped"
            result.output = "not run (skipped)"
        if report.when == "teardown":
            mark = self._marks.pop(item.nodeid, None)
            if mark is not None:
                printed = self.student.output_since(mark, OUTPUT_CHARS_PER_TEST)
                if printed.strip():
                    result.output += ("\n\n" if result.output else "") + "Your code printed:\n" + printed

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        try:
            self._name_consistent_mistakes()
        except Exception:  # noqa: BLE001 - words only: a diagnosis bug must not touch the grade
            log.error("naming the mistakes failed:\n%s", traceback.format_exc())
            for nodeid, at in self._diagnosed.items():  # the plain sentence where a name would have gone
                result = self.results[nodeid]
                result.diagnoses = []
                result.output = result.output[:at] + "\n\n" + NO_MATCH_TEXT + result.output[at:]
            self._diagnosed.clear()
            self._unexplained.clear()

    def _keep_for_second_look(self, item: Any, exc: BaseException) -> None:
        """Keep a failure no mistake explained alone, if what it holds is small (the grader's memory is bounded)."""
        size = _held_bytes(getattr(exc, "got", None))
        if self._kept_bytes + size <= LOOK_AGAIN_BYTES:
            self._kept_bytes += size
            self._unexplained[item.nodeid] = (exc, item)

    def _name_consistent_mistakes(self) -> None:
        """Name a mistake only where it explains everything the submission did, in all its tests; then look
        again, with the mistakes so named, at the failures none explained alone (a file with several mistakes)."""
        if self.diagnoser is None or not hasattr(self.diagnoser, "consistent"):
            return
        failed = {r.key for r in self.results.values() if r.status != "passed"}
        passed = {r.key for r in self.results.values() if r.status == "passed"} - failed  # every case passed
        if hasattr(self.diagnoser, "reconsider"):
            self.diagnoser.reconsider()  # several mistakes change each other's values: contradictions looked at again
        texts = {}
        for nodeid in self._diagnosed:
            result = self.results[nodeid]
            before = result.diagnoses
            result.diagnoses = self.diagnoser.consistent(before, passed)
            texts[nodeid] = self.diagnoser.resembles(before) if before and not result.diagnoses else None
        named = list(dict.fromkeys(n for r in self.results.values() for n in r.diagnoses))
        for nodeid, (exc, item) in self._unexplained.items():
            result = self.results[nodeid]
            if not result.diagnoses and texts.get(nodeid) is None:
                result.diagnoses = self.diagnoser.consistent(self.diagnoser.again(exc, result.key, item, named), passed)
        for nodeid, at in self._diagnosed.items():
            result = self.results[nodeid]
            text = texts[nodeid] if texts[nodeid] and not result.diagnoses else self.diagnoser.explain(result.diagnoses)
            result.output = result.output[:at] + "\n\n" + text + result.output[at:]
        self._diagnosed.clear()
        self._unexplained.clear()

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


NO_MATCH_TEXT = "(The grader could not compare your result with the classic mistakes it knows this time.)"
LOOK_AGAIN_BYTES = 16 * 2**20  # what the failures kept for a second look may hold in all (answers they carry)


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


# -- what the student reads first ---------------------------------------------------
HIDDEN_SUMMARY_MODES = ("off", "points", "categories", "causes")  # assignment.toml [feedback] hidden_summary
OPEN = {"hidden": 0, "after_published": 1, "after_due_date": 2, "visible": 3}  # how soon a student sees a test


def function_of(title: str) -> str:
    """The function or class a test grades: the title's first word before its colon (``"softmax: rows
    sum to 1 [float32]"`` -> ``softmax``), ``other`` for a title without one. The one parser of titles:
    the summary, the dashboard and the gradebook's columns all use it."""
    head, colon, _ = title.partition(":")
    words = head.split()
    return words[0].rstrip(",") if colon and words else "other"


def _category(title: str) -> str:
    """``"softmax: a slice that is all -inf gives zeros [float32]"`` -> ``"a slice that is all -inf gives zeros"``."""
    what = title.split(":", 1)[1] if ":" in title else title
    if what.rstrip().endswith("]") and "[" in what:
        what = what[: what.rindex("[")]
    return what.strip()


def _points(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


CATEGORY_CHARS = 240  # the categories of one function's lost hidden tests, on one line


def bound_line(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a word boundary (never mid-word), with "…"."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"


def _first_line(text: str, limit: int = 240) -> str:
    line = next((x.strip() for x in text.splitlines() if x.strip()), "failed")
    return bound_line(line, limit)


def function_summary(
    tests: list[TestResult],
    hidden_summary: str = "categories",
    titles: dict[str, str] | None = None,
    changes: dict[str, set[str]] | None = None,
) -> str:
    """One line per graded function, what the student reads first.

    Tests a student sees now (``visible``): "passed", or the one most likely cause (the
    first catalogued mistake recognised, else the first failing check's first line).
    Tests whose details come later: points lost and what those tests check ("-14 in
    hidden tests that check: fully blocked rows ..."), as ``hidden_summary`` allows:
    ``off`` (nothing), ``points``, ``categories`` (the default) or ``causes`` (also the
    likely mistake's title). Hidden inputs, expected values and outputs never appear.
    """
    titles = titles or {}
    changes = changes or {}
    by_function: dict[str, list[TestResult]] = {}
    for t in tests:
        by_function.setdefault(function_of(t.name), []).append(t)
    lines = []
    for function, group in by_function.items():
        seen_now = [t for t in group if t.visibility == "visible"]
        later = [t for t in group if t.visibility != "visible"]
        parts = []
        failed_now = [t for t in seen_now if t.status != "passed"]
        missing = any(t.kind == "not-implemented" for t in group if t.status != "passed")
        if missing:
            parts.append("not implemented yet")
        elif failed_now:
            cause = next((titles[m] for t in failed_now for m in t.diagnoses if m in titles), None)
            cause = cause or _first_line(failed_now[0].output)
            parts.append(f"{len(failed_now)} of {len(seen_now)} public tests failed; most likely: {cause.rstrip('.')}")
        elif seen_now:
            parts.append("public tests passed")
        lost = sum(t.max_score - t.score for t in later)
        if later and hidden_summary != "off":
            if lost <= 1e-9:
                parts.append("hidden tests passed")
            else:
                text = f"-{_points(lost)} in hidden tests"
                if hidden_summary in ("categories", "causes") and not missing:
                    categories = list(dict.fromkeys(_category(t.name) for t in later if t.score < t.max_score))
                    text += " that check: " + bound_line("; ".join(categories), CATEGORY_CHARS)
                if hidden_summary == "causes":
                    cause = next((titles[m] for t in later for m in t.diagnoses if m in titles), None)
                    if cause:
                        text += f" (likely: {cause})"
                parts.append(text)
        if not parts:
            continue
        if all(t.status == "passed" for t in group) and (hidden_summary != "off" or not later):
            parts = ["passed"]
        shown = [t for t in group if t.visibility == "visible" or hidden_summary in ("categories", "causes")]
        upstream = _upstream(function, shown, changes) if len(shown) == len(group) else []
        if upstream and not missing:
            parts.append(
                f"fails because {' and '.join(f'`{u}`' for u in upstream)} {'is' if len(upstream) == 1 else 'are'} wrong"
            )
        lines.append(f"- {function}: " + "; ".join(parts))
    if not lines:
        return ""
    head = "Summary by function"
    if hidden_summary != "off" and any(t.visibility != "visible" for t in tests):
        head += " (hidden tests: what they check and the points lost now; their full feedback once grades are published)"
    return head + ":\n" + "\n".join(lines)


def _upstream(function: str, group: list[TestResult], changes: dict[str, set[str]]) -> list[str]:
    """The other functions whose catalogued mistakes explain every failure of ``function``'s tests, when
    none of them changes ``function`` itself (its tests fail only because of code it calls)."""
    failed = [t for t in group if t.status != "passed"]
    if not failed or any(not t.diagnoses for t in failed):
        return []
    culprits: set[str] = set()
    for t in failed:
        for mistake in t.diagnoses:
            changed = changes.get(mistake)
            if not changed or function in changed:
                return []
            culprits |= changed
    return sorted(culprits)


SAME_AS = "(The same likely mistake as in “{name}” above, explained there.)"
MIN_REPEATED = 80  # shorter paragraphs ("Expected 3, got 4.") are cheaper to repeat than to refer to
EXPLANATION = "Likely mistake:"  # only a mistake's explanation is worth pointing back to
OUTPUT_LIMIT_PER_TEST = 4000
OUTPUT_LIMIT_TOTAL = 60000  # Gradescope cuts a results page at about 100,000 characters


def collapse_feedback(entries: list[dict]) -> None:
    """Replace paragraphs repeated from an earlier test by a pointer to it; bound every output.

    A pointer only goes to a test the student sees at least as soon as this one (a visible
    test never points into an after_published one). Edits ``entries`` (results.json tests).
    """
    first: dict[str, tuple[str, int]] = {}
    limit = max(500, min(OUTPUT_LIMIT_PER_TEST, OUTPUT_LIMIT_TOTAL // max(1, len(entries))))
    for entry in entries:
        seen_here = OPEN.get(entry.get("visibility", "visible"), 3)
        paragraphs: list[str] = []
        for paragraph in (entry.get("output") or "").split("\n\n"):
            key = paragraph.strip()
            if not key.startswith(EXPLANATION) or len(key) < MIN_REPEATED:
                paragraphs.append(paragraph)  # a check's own words, or "matches none": never a pointer
                continue
            if key in first and first[key][1] >= seen_here:
                pointer = SAME_AS.format(name=first[key][0])
                if not paragraphs or paragraphs[-1] != pointer:
                    paragraphs.append(pointer)
                continue
            paragraphs.append(paragraph)
            # pointed back to only where the student can read it whole (bound_text below keeps it)
            if len("\n\n".join(paragraphs)) <= limit and (key not in first or first[key][1] < seen_here):
                first[key] = (entry["name"], seen_here)
        entry["output"] = "\n\n".join(paragraphs)
    for entry in entries:
        entry["output"] = bound_text(entry.get("output") or "", limit)


def bound_text(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut where a sentence (or a paragraph) ends (``text_limits.cut``)."""
    return cut(text, limit)
