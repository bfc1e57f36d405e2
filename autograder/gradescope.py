"""The Gradescope entry point: ``run_autograder`` calls ``python -m autograder gradescope``.

Layout (``AUTOGRADER_ROOT``, default ``/autograder``): ``source/`` is the
unzipped autograder.zip, ``submission/`` the student's upload and
``results/results.json`` what Gradescope reads. When run as root, the
grader's own folders are made private (0700) before student code starts, so
the worker's unprivileged user cannot read the tests, the reference or the
results.
"""

from __future__ import annotations

import os
from pathlib import Path

from .config import KIT_ROOT, list_assignments, load_assignment
from .grade import grade_submission
from .results import failure_document, write_results
from .sandbox import running_as_root


def autograder_root() -> Path:
    return Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))


def run_gradescope() -> int:
    root = autograder_root()
    results = root / "results" / "results.json"
    try:
        names = list_assignments(KIT_ROOT)
        if len(names) != 1:
            raise RuntimeError(f"autograder.zip must hold exactly one assignment, found {names}")
        assignment = load_assignment(names[0], KIT_ROOT)
    except Exception as exc:  # noqa: BLE001 - always leave a results file
        write_results(results, failure_document(f"The autograder is misconfigured ({exc}); please tell course staff."))
        print(f"[grader] cannot start: {exc}")
        return 1
    if running_as_root():
        for private in (KIT_ROOT, results.parent, root / "submission"):
            if private.exists():
                os.chmod(private, 0o700)
    grade = grade_submission(assignment, root / "submission", results)
    print(f"[grader] {assignment.name}: {grade.score:g} points; results in {results}")
    return 0
