"""Gradescope's results.json: build it, and write it so it is never half-written."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

from .config import Assignment
from .scoring import OUTPUT_LIMIT_PER_TEST, TestResult, bound_text, collapse_feedback, function_summary
from .text_limits import cut


def results_document(
    tests: Iterable[TestResult],
    output: str,
    execution_time: float,
    extra: dict | None = None,
    assignment: Assignment | None = None,
) -> dict:
    """The results document: a score per test, their sum, and a message for the student.

    The message starts with its first paragraph (the score line), then a summary by
    function (:func:`.scoring.function_summary`: what failed and why, and the points lost in
    hidden tests as the assignment's ``[feedback] hidden_summary`` allows), then the rest.
    Paragraphs repeated across tests are collapsed and every output is bounded.
    """
    tests = list(tests)
    entries = []
    total = 0.0
    for number, t in enumerate(tests, start=1):
        score = round(t.score, 2)
        total += score
        entries.append(
            {
                "name": t.name,
                "number": str(number),
                "score": score,
                "max_score": round(t.max_score, 2),
                "status": "passed" if t.status == "passed" else "failed",
                "visibility": t.visibility,
                "output": t.output,
                "extra_data": {"test": t.key, "mistakes": t.diagnoses, "kind": t.kind},
            }
        )
    collapse_feedback(entries)
    mode = getattr(assignment, "hidden_summary", "categories")
    named = {m for t in tests if t.status != "passed" for m in t.diagnoses}
    summary = function_summary(tests, mode, _mistake_titles(assignment), _mistake_functions(assignment, named))
    if summary:
        head, _, rest = output.partition("\n\n")
        output = "\n\n".join(part for part in (head, summary, rest) if part)
    return {
        "score": round(total, 2),
        "execution_time": round(execution_time, 2),
        "output": bound_text(output, OUTPUT_LIMIT_PER_TEST * 2),
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": entries,
        "extra_data": extra or {},
    }


def _mistake_titles(assignment: Assignment | None) -> dict[str, str]:
    """{mistake id: its title} from the catalogue, for "most likely: ..." in the summary."""
    if assignment is None:
        return {}
    from .catalogue import read_catalogue

    try:
        return {entry.name: entry.title for entry in read_catalogue(assignment, "mistake")}
    except (OSError, SyntaxError, ValueError):
        return {}


def _mistake_functions(assignment: Assignment | None, names: set[str]) -> dict[str, set[str]]:
    """{mistake id: the functions and classes it changes}, for the mistakes named in this submission."""
    if assignment is None or not names:
        return {}
    from .catalogue import changed_names, read_catalogue

    try:
        return {e.name: changed_names(assignment, e) for e in read_catalogue(assignment, "mistake") if e.name in names}
    except (OSError, SyntaxError, ValueError):
        return {}


# How grading of a whole submission ended (``extra_data.kind`` of results.json), beside each test's kind.
SUBMISSION_KINDS = {
    "graded": "the tests ran",
    "import-error": "the file could not be imported: no test could run",
    "ungradable": "the upload holds no gradable file (the reason is the output)",
    "grader-error": "the grader failed (internal error or misconfiguration): not the student's doing",
    "unfinished": "grading did not finish (the placeholder written before grading starts)",
}


def failure_document(message: str, execution_time: float = 0.0, extra: dict | None = None, kind: str = "grader-error") -> dict:
    """A valid score-0 document for when grading could not run (or has not finished): ``kind`` says which."""
    return {
        "score": 0,
        "execution_time": round(execution_time, 2),
        "output": message,
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
        "extra_data": {**(extra or {}), "kind": kind},
    }


def write_results(path: Path, document: dict[str, Any]) -> None:
    """Write atomically: a reader sees the old file or the new one, never a partial one.

    Whatever the submission printed or raised, the file is valid UTF-8 JSON under
    ``MAX_RESULTS_BYTES`` (see :func:`bounded_document`). As root it is readable by root only.
    """
    document = bounded_document(document)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".results-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(document, f, indent=2)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o600 if hasattr(os, "geteuid") and os.geteuid() == 0 else 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


MAX_RESULTS_BYTES = 900_000  # Gradescope cuts outputs near 100,000 characters; the file stays under 1 MB
MAX_TEST_OUTPUT = 8_000
MAX_TOP_OUTPUT = 16_000
_CONTROL = dict.fromkeys(c for c in range(32) if chr(c) not in "\n\t")
_CONTROL.update(dict.fromkeys(range(0x7F, 0xA0)))


def clean_text(value: Any, limit: int | None = None) -> str:
    """Valid UTF-8 text without control characters (lone surrogates and undecodable bytes
    become U+FFFD), cut to ``limit`` characters with a note."""
    text = value if isinstance(value, str) else str(value)
    text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").translate(_CONTROL)
    if limit is not None and len(text) > limit:
        text = cut(text, limit, "\n[... {n} more characters not shown]")
    return text


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def bounded_document(document: dict[str, Any]) -> dict[str, Any]:
    """The document with every string made valid text, each output capped, and the whole
    under ``MAX_RESULTS_BYTES`` (test outputs are cut further until it fits)."""
    doc = _clean(document)
    if "output" in doc:
        doc["output"] = clean_text(doc["output"], MAX_TOP_OUTPUT)
    tests = doc.get("tests") or []
    for test in tests:
        if "output" in test:
            test["output"] = clean_text(test["output"], MAX_TEST_OUTPUT)
    limit = MAX_TEST_OUTPUT
    while len(json.dumps(doc).encode()) > MAX_RESULTS_BYTES and limit > 50:
        limit //= 2
        for test in tests:
            test["output"] = clean_text(test.get("output", ""), limit)
            test["name"] = clean_text(test.get("name", ""), 300)
        doc["output"] = clean_text(doc.get("output", ""), min(MAX_TOP_OUTPUT, limit * 2))
    if len(json.dumps(doc).encode()) > MAX_RESULTS_BYTES:
        doc["extra_data"] = {}
        doc["tests"] = tests[:500]
    return doc
