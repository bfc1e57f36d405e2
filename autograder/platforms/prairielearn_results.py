"""PrairieLearn's results.json, rendered from the grading's record (:mod:`..record`).

One job: :func:`prairielearn_document` is the renderer (one source of words: the points and sentences
are those every renderer shares, :mod:`..feedback_text`; only the layout is PrairieLearn's);
:func:`bounded` keeps the file under PrairieLearn's 1 MB, cutting with the kit's one cutter
(``text_limits.cut``); :func:`write_prairielearn_results` writes it atomically (root-only as root,
like Gradescope's).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..grading.feedback_text import feedback_texts
from ..grading.record import GradingRecord, TestRecord
from ..grading.results import MAX_TEST_OUTPUT, MAX_TOP_OUTPUT, score_line, top_text, write_results
from ..grading.text_limits import cut

PL_MAX_BYTES = 1024 * 1024  # PrairieLearn refuses a larger results.json
TARGET_BYTES = 900_000  # what the renderer aims under, as written (indented, non-ASCII escaped)
# How a grading ended (results.SUBMISSION_KINDS) that PrairieLearn must not count as an attempt:
# nothing gradable was uploaded, or the grader failed (not the student's doing), or it did not finish.
NOT_GRADABLE = ("ungradable", "grader-error", "unfinished")
NO_ATTEMPT = "This submission does not use up an attempt."
HELD_BACK = (
    "Hidden test: its own feedback is not shown here. The summary at the top of the results says "
    "what the hidden tests check and the points they lost."
)
CUT_NOTE = "\n[... {n} more characters not shown]"


def prairielearn_document(record: GradingRecord, syntax_error: bool = False) -> dict:
    """The PrairieLearn results of ``record`` (the PrairieLearn renderer).

    ``score`` is the record's points over the assignment's total (100), in [0, 1]; each test keeps
    its name and points (``points``/``max_points``) and its feedback as ``output``; its ``message`` is
    its status and the catalogued mistakes the record names in it, by title. A test Gradescope shows
    only once grades are published (hidden tests) keeps its name and points but not its feedback,
    which the summary at the top covers, and names its mistake only where the assignment's
    ``[feedback] hidden_summary`` is ``"causes"``. The top-level ``output`` is the message every
    platform shows above the tests (its first paragraph, the score line, is also ``message``).
    ``gradable`` is false, with the reason in ``format_errors``, when PrairieLearn must not count
    the attempt: nothing gradable was uploaded, the file does not parse (``syntax_error``: the
    engine reports it as an import error), or the grader failed or did not finish.
    """
    output = top_text(record, published_later=False)  # PrairieLearn never publishes hidden tests' own feedback
    if record.kind in NOT_GRADABLE or (record.kind == "import-error" and syntax_error):
        reason = record.problem if record.problem and not record.tests else record.load_error or score_line(record)
        reason = reason.removeprefix("Score 0: ").strip()
        if "." not in reason.split(" ", 1)[0]:  # a sentence, not the student's file name (attention.py ...)
            reason = reason[:1].upper() + reason[1:]
        return {
            "gradable": False,
            "score": 0.0,
            "message": reason,
            "format_errors": [f"{reason} {NO_ATTEMPT}"],
            "output": output,
            "tests": [],
        }
    score = record.score / record.total_points if record.total_points else 0.0
    causes = record.hidden_summary == "causes"
    texts = feedback_texts(record)
    return {
        "gradable": True,
        "score": round(min(1.0, max(0.0, score)), 4),
        "message": score_line(record),
        "output": output,
        "tests": [_test(t, text, record, causes) for t, text in zip(record.tests, texts)],
    }


def _test(t: TestRecord, text: str, record: GradingRecord, hidden_causes: bool) -> dict:
    """One test as PrairieLearn's: the same name, points and words as on Gradescope."""
    passed = t.status == "passed"
    shown = t.visibility == "visible"
    message = "Passed." if passed else "Failed."
    named = [record.named[m].title if m in record.named else m for m in t.diagnoses]
    if named and not passed and (shown or hidden_causes):
        if t.diagnosis == "together":  # only all of them together give the student's values (feedback_text.TOGETHER)
            message += " Likely mistakes, together: " + "; ".join(title.rstrip(".") for title in named[:3]) + "."
        else:  # one, or either of two that give the same values
            message += " Likely mistake: " + " or ".join(title.rstrip(".") for title in named[:2]) + "."
    return {
        "name": t.name,
        "description": f"{'public test' if shown else 'hidden test'} ({t.key})",
        "points": round(t.score, 2),
        "max_points": round(t.max_score, 2),
        "message": message,
        "output": text if shown else "" if passed else HELD_BACK,
    }


def cut_at_sentence(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut where a paragraph or sentence ends, with a note (``text_limits.cut``)."""
    return cut(text, limit, CUT_NOTE)


def _size(document: dict) -> int:
    return len(json.dumps(document, indent=2).encode())  # as write_results writes it


def bounded(document: dict) -> dict:
    """The document with every output cut at sentence ends until the file fits in ``TARGET_BYTES``."""
    doc = json.loads(json.dumps(document))
    tests = doc.get("tests", [])
    limit = MAX_TEST_OUTPUT
    while True:
        doc["output"] = cut_at_sentence(doc.get("output", ""), min(MAX_TOP_OUTPUT, 2 * limit))
        for test in tests:
            test["output"] = cut_at_sentence(test.get("output", ""), limit)
            test["name"] = cut_at_sentence(test.get("name", ""), 300)
        if _size(doc) <= TARGET_BYTES or limit <= 50:
            break
        limit //= 2
    while tests and _size(doc) > TARGET_BYTES:  # thousands of tests: the last ones go, the score stays
        del tests[len(tests) // 2 :]
    return doc


def write_prairielearn_results(path: Path, document: dict) -> None:
    """Write ``document`` (already in PrairieLearn's schema) atomically, bounded under 1 MB."""
    write_results(Path(path), bounded(document))
