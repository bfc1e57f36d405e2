"""The record of a grading: what each test found, as data. Every text anyone reads is rendered from it.

One job: the record's shape and its one serialisation. A test ends as a :class:`TestRecord` (its key,
the function it grades, points, how it ended, the check's own words, the catalogued mistakes named,
what the student printed); the whole grading is a :class:`GradingRecord`. Renderers turn it into
each audience's text and nothing else edits that text: :mod:`.results` (Gradescope's results.json,
the console table), :mod:`.platforms.prairielearn_results` (PrairieLearn's results.json), and the
cohort's readers (:mod:`.cohort`, the dashboard, the gradebooks, the per-student pages), which read
the record back from a results file with :func:`GradingRecord.from_results`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# What the comparison with the catalogue of classic mistakes concluded for a failed test (``diagnosis``).
DIAGNOSIS = {
    "": "nothing said (the test passed, nothing to compare, no replay budget left, or nothing reproduced it in a "
    "file where other mistakes were found: a combination with a mistake the file hides might)",
    "named": "the catalogued mistake in ``mistakes`` explains it (two: either does, the values cannot tell which)",
    "together": "the catalogued mistakes in ``mistakes``, all made together (a file with several mistakes), explain it",
    "none": "compared with the catalogue, in a file where no mistake was found: the result matches none of them",
    "resembles": "the values are those of the mistake in ``mistakes``, which the rest of the submission rules out",
    "unavailable": "the comparison itself failed (a grader bug): the plain sentence is said",
}


@dataclass
class TestRecord:
    """One test (one parametrized case) of one grading."""

    __test__ = False  # not a test class, for pytest

    key: str  # "hidden/test_softmax.py::test_rows_sum_to_one": its points are assignment.toml's [points] entry
    nodeid: str
    name: str  # the title students read: the test's docstring, and its case ("softmax: rows sum to 1 [float32]")
    function: str  # the function or class it grades, declared beside the test (``@pytest.mark.grades``)
    max_score: float
    score: float = 0.0
    status: str = "failed"  # "passed" or "failed"
    visibility: str = "after_published"
    kind: str = "not-run"  # how it ended (checks.KINDS), set where it happened; never read from a message
    message: str = ""  # the check's own words (a Feedback's message), written for students
    hint: str = ""  # of those, the test's advice about the function it grades (its last sentences; Feedback.hint)
    diagnosis: str = ""  # DIAGNOSIS
    mistakes: list[str] = field(default_factory=list)  # ids of catalogued mistakes named (or resembled)
    printed: str = ""  # what the student's code printed during the test (bounded)
    # the other graded functions of the file the test ran: those it fetched and those they call, by the grader's
    # own scan of the source (Student.names_used); a failure may come from one of them
    uses: list[str] = field(default_factory=list)
    # a function of the contract the failure stopped in, not written yet (its NotImplementedError, kind
    # "not-implemented") or missing from the file (a NameError): the worker's word, for the summary's wording only
    unwritten: str = ""
    # its function's callers are graded around this test's failure (@pytest.mark.callers_apart): never a cause
    apart: bool = False

    @property
    def diagnoses(self) -> list[str]:
        """The mistakes this test names (not one it only resembles)."""
        return self.mistakes if self.diagnosis in ("named", "together") else []


@dataclass
class NamedMistake:
    """A catalogued mistake a grading names: what the renderers say of it."""

    title: str
    explanation: str = ""
    changes: list[str] = field(default_factory=list)  # the functions and classes it changes


@dataclass
class GradingRecord:
    """One grading of one submission."""

    kind: str = "graded"  # results.SUBMISSION_KINDS
    tests: list[TestRecord] = field(default_factory=list)
    problem: str = ""  # why nothing could be graded (kind "ungradable" or "grader-error"), for the student
    load_error: str = ""  # why the file could not be imported (kind "import-error")
    load: str = ""  # how the import ended (checks.KINDS), when it failed
    notes: list[str] = field(default_factory=list)  # what the unpacking noticed (another file ignored, a notebook)
    config_errors: list[str] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)  # what hung, crashed or broke the channel (never cached)
    links: int = 0  # how many symbolic links the upload held (skipped, never followed)
    named: dict[str, NamedMistake] = field(default_factory=dict)  # the mistakes its tests name or resemble
    execution_time: float = 0.0
    hidden_summary: str = "categories"  # assignment.toml [feedback] hidden_summary, as graded
    total_points: float = 100.0

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tests)

    # -- the one serialisation: the structured part of a results file ------------------------
    def extra(self) -> dict[str, Any]:
        """The grading's data as results.json's top-level ``extra_data`` (the tests carry their own)."""
        extra: dict[str, Any] = {"kind": self.kind}
        for name in ("load", "config_errors", "stopped", "links", "notes"):
            if getattr(self, name):
                extra[name] = getattr(self, name)
        if self.named:
            extra["named"] = {k: asdict(v) for k, v in self.named.items()}
        return extra

    @staticmethod
    def test_extra(t: TestRecord) -> dict[str, Any]:
        extra = {"test": t.key, "function": t.function, "kind": t.kind, "mistakes": t.diagnoses, "diagnosis": t.diagnosis}
        if t.diagnosis == "resembles":
            extra["resembles"] = t.mistakes
        if t.uses:
            extra["uses"] = t.uses
        if t.unwritten:
            extra["unwritten"] = t.unwritten
        if t.apart:
            extra["apart"] = True
        return extra

    @classmethod
    def from_results(cls, document: dict) -> "GradingRecord":
        """The record read back from a results file this kit wrote (grade-all's, the self-check's): its data
        exactly, and each test's rendered feedback as its ``message`` (what the student read)."""
        extra = document.get("extra_data") or {}
        tests = []
        for t in document.get("tests") or []:
            data = t.get("extra_data") or {}
            mistakes = list(data.get("mistakes") or data.get("resembles") or [])
            tests.append(
                TestRecord(
                    key=str(data.get("test", t.get("name", ""))),
                    nodeid=str(data.get("test", "")),
                    name=str(t.get("name", "")),
                    function=str(data.get("function") or "other"),
                    max_score=float(t.get("max_score", 0) or 0),
                    score=float(t.get("score", 0) or 0),
                    status="passed" if t.get("status") == "passed" else "failed",
                    visibility=str(t.get("visibility", "visible")),
                    kind=str(data.get("kind", "not-run")),
                    message=str(t.get("output") or ""),
                    diagnosis=str(data.get("diagnosis") or ("named" if mistakes else "")),
                    mistakes=mistakes,
                    uses=[str(u) for u in data.get("uses") or [] if isinstance(u, str)][:64],
                    unwritten=str(data.get("unwritten") or "")[:100],
                    apart=data.get("apart") is True,
                )
            )
        named = {k: NamedMistake(**v) for k, v in (extra.get("named") or {}).items() if isinstance(v, dict)}
        return cls(
            kind=str(extra.get("kind", "graded")),
            tests=tests,
            load=str(extra.get("load", "")),
            notes=list(extra.get("notes") or []),
            config_errors=list(extra.get("config_errors") or []),
            stopped=list(extra.get("stopped") or []),
            links=as_count(extra.get("links")),
            named=named,
            execution_time=float(document.get("execution_time", 0) or 0),
        )


def as_count(value: Any) -> int:
    """A count read back from a results file: a number as it was written (a list, as older files held, by its length)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return max(0, int(value))
    if isinstance(value, (list, tuple)):
        return len(value)
    return 0
