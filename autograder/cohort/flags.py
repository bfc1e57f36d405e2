"""Flags: what the dashboard and the gradebook say happened to a submission.

One job: turn a results document into ``(flag, reason)`` pairs, most serious first
(``grader-error``, ``attack``, ``ungradable``, ``import-error``, ``crash``, ``timeout``,
``banned-call``, ``zero``), read only from the outcome kinds the grader recorded where they
happened (``extra_data.kind``), never from text a student's code printed. The dashboard's
"needs attention" list (:data:`ATTENTION_FLAGS`) and ``gradebook.csv``'s ``flags`` column
both come from here.
"""

from __future__ import annotations

# Flags, most serious first. The first five (and a score of 0) put a student on the
# "needs attention" list; late and duplicate are facts for the table.
FLAG_LABELS = {
    "grader-error": "grader error",
    "attack": "suspected attack",
    "ungradable": "ungradable upload",
    "import-error": "does not import",
    "crash": "crash",
    "timeout": "timeout",
    "banned-call": "banned call",
    "zero": "score 0",
    "late": "late",
    "duplicate": "several submissions",
    "superseded": "superseded",
}
ATTENTION_FLAGS = ("grader-error", "attack", "ungradable", "import-error", "crash", "timeout", "banned-call", "zero")

# Flags are facts the grader recorded where they happened (``extra_data.kind`` of the document and of
# each test, see checks.KINDS and results.SUBMISSION_KINDS), never patterns in its text: nothing a
# student's code prints can raise or hide a flag.
TEST_KIND_FLAGS = {
    "timeout": ("timeout", "ran out of time"),
    "crash": ("crash", "the student's process stopped or was killed while answering"),
    "memory": ("crash", "hit the memory, process or disk limit"),
    "exit": ("attack", "the code exited the grader's worker itself (SystemExit, KeyboardInterrupt)"),
    "skipped": ("attack", "tests were skipped from inside the student's code"),
    "channel": ("attack", "the worker sent what no honest worker sends (the grader's channel was interfered with)"),
    "banned": ("banned-call", "called a function the assignment bans"),
}
SUBMISSION_KIND_FLAGS = {
    "grader-error": "grader-error",
    "unfinished": "grader-error",
    "stopped": "timeout",
    "ungradable": "ungradable",
    "import-error": "import-error",
}


def submission_flags(document: dict) -> list[tuple[str, str]]:
    """(flag, reason) pairs for one results document, most serious first, one per flag."""
    found: dict[str, str] = {}
    tests = document.get("tests") or []
    extra = document.get("extra_data") or {}
    kind = extra.get("kind") or ("graded" if tests else "ungradable")  # documents of kits before 0.4 have no kind
    output = document.get("output", "") or ""
    first_line = next((line.strip() for line in output.splitlines() if line.strip()), "")
    if extra.get("config_errors"):
        found["grader-error"] = "the grader's configuration has errors: " + "; ".join(map(str, extra["config_errors"]))[:300]
    if kind in SUBMISSION_KIND_FLAGS and SUBMISSION_KIND_FLAGS[kind] not in found:
        found[SUBMISSION_KIND_FLAGS[kind]] = first_line[:400]  # the grader's own score line: its reason
    load = extra.get("load")
    if load in TEST_KIND_FLAGS:  # what happened while importing (a hang, a memory bomb, an exit...)
        flag, reason = TEST_KIND_FLAGS[load]
        found.setdefault(flag, f"{reason}, while importing")
    if extra.get("links"):
        found.setdefault("attack", f"the upload held {extra['links']} symbolic link(s) (skipped, never followed)")
    for t in tests:
        test_kind = (t.get("extra_data") or {}).get("kind")
        if test_kind in TEST_KIND_FLAGS:
            flag, reason = TEST_KIND_FLAGS[test_kind]
            found.setdefault(flag, f"{reason} (in: {t.get('name', '?')[:120]})")
    if float(document.get("score", 0) or 0) == 0:
        found["zero"] = "scored 0"
    return sorted(found.items(), key=lambda item: list(FLAG_LABELS).index(item[0]))
