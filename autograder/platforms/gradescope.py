"""The Gradescope entry point: ``run_autograder`` calls ``python -m autograder gradescope``.

Layout (``AUTOGRADER_ROOT``, default ``/autograder``): ``source/`` is the
unzipped autograder.zip, ``submission/`` the student's upload and
``results/results.json`` what Gradescope reads. When run as root, the
grader's own folders are made private (0700) before student code starts, so
the worker's unprivileged user cannot read the tests, the reference or the
results.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ..sandbox import running_as_root
from .entry import last_resort, the_assignment

log = logging.getLogger("autograder.platforms.gradescope")


def autograder_root() -> Path:
    return Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))


LAST_RESORT_MARGIN_S = 90  # run_timeout (420 s) + 90 s stays well inside Gradescope's 10 minutes


def run_gradescope() -> int:
    root = autograder_root()
    results = root / "results" / "results.json"

    def write_failure(message: str) -> None:
        from ..grading.results import failure_document, write_results  # imports torch: after the zygote has started

        write_results(results, failure_document(message))

    try:
        assignment = the_assignment("autograder.zip")
    except Exception as exc:  # noqa: BLE001 - always leave a results file
        write_failure(f"The autograder is misconfigured ({exc}); please tell course staff.")
        log.error("cannot start: %s", exc)
        return 1
    if running_as_root():
        for private in (results.parent, root / "submission"):  # the kit itself: sandbox.protect_secrets
            if private.exists():
                os.chmod(private, 0o700)
    from ..sandbox.zygote import started_before_torch

    # the worker template's torch import overlaps the grader's (from here on)
    with started_before_torch(assignment.banned, assignment.trains) as zygote:
        last_resort(write_failure, assignment.run_timeout + LAST_RESORT_MARGIN_S)
        from ..grading.grade import grade_submission

        grade = grade_submission(assignment, root / "submission", results, zygote=zygote)
    log.info("%s: %g points; results in %s", assignment.name, grade.score, results)
    return 0
