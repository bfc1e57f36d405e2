"""PrairieLearn's results.json, rendered from the Gradescope results document the engine writes.

One job: :func:`prairielearn_document` is the renderer (one source of words: the points and
sentences are the engine's, only the layout is PrairieLearn's); :func:`cut_at_sentence` and
:func:`bounded` keep the file under PrairieLearn's 1 MB; :func:`write_prairielearn_results`
writes it atomically (root-only as root, like Gradescope's).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..config import Assignment, ConfigError
from ..results import MAX_TEST_OUTPUT, MAX_TOP_OUTPUT, write_results

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
_SCORE_PREFIX = re.compile(r"^(Score 0: |\d+(\.\d+)? / \d+(\.\d+)? points\.\s*)")
# Gradescope's words that are not true on PrairieLearn, which never publishes hidden feedback:
GRADESCOPE_ONLY_PHRASES = ("; their full feedback once grades are published",)


def prairielearn_document(document: dict, assignment: Assignment | None = None, syntax_error: bool = False) -> dict:
    """The PrairieLearn results of the engine's Gradescope ``document`` (the PrairieLearn renderer).

    ``score`` is the Gradescope score over the assignment's total points (100), in [0, 1]; each
    test keeps its name and points (``points``/``max_points``) and its feedback as ``output``; its
    ``message`` is its status and the catalogued mistake the engine named in it (by the catalogue's
    title, as the engine's feedback names it). A test Gradescope shows only once grades are
    published (hidden tests) keeps its name and points but not its feedback, which the summary at
    the top covers, and names its mistake only where the assignment's ``[feedback] hidden_summary``
    is ``"causes"``. The top-level ``output`` is the engine's (its first paragraph, the score line,
    is also ``message``).
    ``gradable`` is false, with the reason in ``format_errors``, when PrairieLearn must not count
    the attempt: nothing gradable was uploaded, the file does not parse (``syntax_error``: the
    engine reports it as an import error), or the grader failed or did not finish.
    """
    kind = (document.get("extra_data") or {}).get("kind", "graded")
    output = str(document.get("output", ""))
    for phrase in GRADESCOPE_ONLY_PHRASES:
        output = output.replace(phrase, "")
    message = output.split("\n\n", 1)[0]
    if kind in NOT_GRADABLE or (kind == "import-error" and syntax_error):
        reason = _SCORE_PREFIX.sub("", message).strip() or message
        reason = reason[:1].upper() + reason[1:]
        return {
            "gradable": False,
            "score": 0.0,
            "message": reason,
            "format_errors": [f"{reason} {NO_ATTEMPT}"],
            "output": output,
            "tests": [],
        }
    total = assignment.total_points if assignment is not None else 100.0
    score = float(document.get("score", 0)) / total if total else 0.0
    titles = _mistake_titles(assignment)
    causes = getattr(assignment, "hidden_summary", "categories") == "causes"
    return {
        "gradable": True,
        "score": round(min(1.0, max(0.0, score)), 4),
        "message": message,
        "output": output,
        "tests": [_test(t, titles, causes) for t in document.get("tests", [])],
    }


def _test(test: dict, titles: dict[str, str], hidden_causes: bool) -> dict:
    """One Gradescope test entry as PrairieLearn's: the same name, points and words."""
    passed = test.get("status") == "passed"
    shown = test.get("visibility", "visible") == "visible"
    extra = test.get("extra_data") or {}
    message = "Passed." if passed else "Failed."
    named = [titles.get(m, m) for m in extra.get("mistakes", [])]
    if named and not passed and (shown or hidden_causes):
        message += " Likely mistake: " + "; ".join(title.rstrip(".") for title in named) + "."
    return {
        "name": test.get("name", ""),
        "description": f"{'public test' if shown else 'hidden test'} ({extra.get('test', '')})",
        "points": test.get("score", 0),
        "max_points": test.get("max_score", 0),
        "message": message,
        "output": test.get("output", "") if shown else "" if passed else HELD_BACK,
    }


def _mistake_titles(assignment: Assignment | None) -> dict[str, str]:
    """{mistake id: its title} from the assignment's catalogue ({} without one)."""
    if assignment is None:
        return {}
    from ..catalogue import read_catalogue

    try:
        return {entry.name: entry.title for entry in read_catalogue(assignment, "mistake")}
    except (OSError, SyntaxError, ValueError, ConfigError):
        return {}


def cut_at_sentence(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at the end of a sentence (or else a line, or a
    word), with a note of how much was left out; unchanged when it fits."""
    if len(text) <= limit:
        return text
    note = f"\n[... {len(text)} more characters not shown]"  # at least as long as the note written
    head = text[: max(0, limit - len(note))]
    cut = max([head.rfind(mark) + 1 for mark in (". ", ".\n", "! ", "? ", ":\n")] + [head.rfind("\n\n")])
    if cut < len(head) // 2:
        cut = max(head.rfind("\n"), head.rfind(" "))
    if cut < len(head) // 2:
        cut = len(head)
    kept = text[:cut].rstrip()
    return f"{kept}\n[... {len(text) - len(kept)} more characters not shown]"


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
