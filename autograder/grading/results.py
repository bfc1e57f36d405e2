"""Gradescope's results.json: build it, and write it so it is never half-written."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .feedback_text import OUTPUT_LIMIT_PER_TEST, feedback_texts, record_summary
from .record import GradingRecord, as_count
from .text_limits import cut


def results_document(record: GradingRecord) -> dict:
    """Gradescope's results document of ``record`` (the Gradescope renderer): a score per test, their sum,
    and a message for the student.

    The message starts with the score line (:func:`score_line`), then the summary by function
    (:func:`.feedback_text.record_summary`: what failed and why, and the points lost in hidden tests as
    the assignment's ``[feedback] hidden_summary`` allows), then the grading's notes. Each test's feedback
    is :func:`.feedback_text.feedback_texts`. A grading that could not run says only why (``record.problem``).
    """
    texts = feedback_texts(record)
    entries = []
    for number, (t, text) in enumerate(zip(record.tests, texts), start=1):
        entries.append(
            {
                "name": t.name,
                "number": str(number),
                "score": round(t.score, 2),
                "max_score": round(t.max_score, 2),
                "status": "passed" if t.status == "passed" else "failed",
                "visibility": t.visibility,
                "output": text,
                "extra_data": GradingRecord.test_extra(t),
            }
        )
    return {
        "score": round(sum(e["score"] for e in entries), 2),
        "execution_time": round(record.execution_time, 2),
        "output": top_text(record),
        "output_format": "text",  # said, not left to the platform's default: a student's text never renders as HTML
        "test_output_format": "text",
        "test_name_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": entries,
        "extra_data": record.extra(),
    }


MISCONFIGURED = "The autograder is misconfigured; course staff have been notified by the grader's log."


def top_text(record: GradingRecord, published_later: bool = True) -> str:
    """The message above the tests: the score line, the summary by function, the grading's notes; or, when
    nothing could be graded, only why. ``published_later``: the platform publishes hidden feedback later."""
    if record.problem and not record.tests:
        return record.problem
    summary = record_summary(record, published_later)
    output = "\n\n".join(part for part in (score_line(record), summary, *_notes(record)) if part)
    return cut(output, OUTPUT_LIMIT_PER_TEST * 2)


def console_table(record: GradingRecord) -> str:
    """The console's rendering (``grade``): a plain-text table of the tests, then the message."""
    rows = [(t.name, f"{round(t.score, 2):g}/{round(t.max_score, 2):g}", t.status) for t in record.tests]
    width = min(max([len(r[0]) for r in rows] + [4]), 90)
    lines = [f"{'test':<{width}}  {'points':>9}  status", "-" * (width + 19)]
    lines += [f"{name[:width]:<{width}}  {pts:>9}  {status}" for name, pts, status in rows]
    lines += ["-" * (width + 19), f"{'total':<{width}}  {round(record.score, 2):>9g}"]
    top = top_text(record)
    return clean_text("\n".join(lines + (["", top] if top else [])))  # a terminal gets the student's text cleaned too


def score_line(record: GradingRecord) -> str:
    """The first thing the student reads: "63.00 / 100 points.", and why no test ran when none could."""
    line = f"{sum(t.score for t in record.tests):.2f} / {sum(t.max_score for t in record.tests):.0f} points."
    if record.tests and all(t.score >= t.max_score for t in record.tests):
        line += " Every test passed."
    if record.load_error:
        line += " No test could run: " + record.load_error.replace("\n\n", "\n")
    return line


def _notes(record: GradingRecord) -> list[str]:
    return [*record.notes, *([MISCONFIGURED] if record.config_errors else [])]


# How grading of a whole submission ended (``extra_data.kind`` of results.json), beside each test's kind.
SUBMISSION_KINDS = {
    "graded": "the tests ran",
    "import-error": "the file could not be imported: no test could run",
    "ungradable": "the upload holds no gradable file (the reason is the output)",
    "grader-error": "the grader failed (internal error or misconfiguration): not the student's doing",
    "unfinished": "grading did not finish (the placeholder written before grading starts)",
    "stopped": "grade-all stopped the grading: it reported nothing far past its limit (kept until --force)",
}


def failure_document(message: str, execution_time: float = 0.0, extra: dict | None = None, kind: str = "grader-error") -> dict:
    """A valid score-0 document for when grading could not run (or has not finished): ``kind`` says which."""
    links = as_count((extra or {}).get("links"))
    return results_document(GradingRecord(kind=kind, problem=message, execution_time=execution_time, links=links))


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
# bidirectional overrides and isolates reorder the text around them (a message that reads as the grader's)
_CONTROL.update(dict.fromkeys([0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)]))
_CONTROL.update({0x2028: " ", 0x2029: " "})  # line and paragraph separators: lines only where "\n" says


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
