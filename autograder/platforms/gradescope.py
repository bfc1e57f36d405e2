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
import threading
from pathlib import Path

from ..config import KIT_ROOT, list_assignments, load_assignment
from ..sandbox import running_as_root

log = logging.getLogger("autograder.platforms.gradescope")


def autograder_root() -> Path:
    return Path(os.environ.get("AUTOGRADER_ROOT", "/autograder"))


LAST_RESORT_MARGIN_S = 90  # run_timeout (420 s) + 90 s stays well inside Gradescope's 10 minutes


def _last_resort(results: Path, after_s: float) -> None:
    """If grading is somehow still running after ``after_s`` seconds (every request has its own
    deadline, so this should never fire), write a results file that says so and stop, rather
    than let Gradescope's 10-minute limit end the run with no results at all."""

    from ..grading.results import failure_document, write_results  # imports torch: after the zygote has started

    def fire() -> None:
        write_results(
            results,
            failure_document(
                f"Grading ran out of time: it was stopped after {after_s:.0f} s. This is unusual; "
                "please tell course staff, with your submission time."
            ),
        )
        log.error("last resort: grading stopped after %.0f s", after_s)
        from ..sandbox.proctree import kill_user
        from ..sandbox.users import ensure_student_user

        user = ensure_student_user()
        if user is not None:
            kill_user(user.pw_uid)
        os._exit(3)

    timer = threading.Timer(after_s, fire)
    timer.daemon = True
    timer.start()


def run_gradescope() -> int:
    root = autograder_root()
    results = root / "results" / "results.json"
    try:
        names = list_assignments(KIT_ROOT)
        if len(names) != 1:
            raise RuntimeError(f"autograder.zip must hold exactly one assignment, found {names}")
        assignment = load_assignment(names[0], KIT_ROOT)
    except Exception as exc:  # noqa: BLE001 - always leave a results file
        from ..grading.results import failure_document, write_results

        write_results(results, failure_document(f"The autograder is misconfigured ({exc}); please tell course staff."))
        log.error("cannot start: %s", exc)
        return 1
    if running_as_root():
        for private in (results.parent, root / "submission"):  # the kit itself: sandbox.protect_secrets
            if private.exists():
                os.chmod(private, 0o700)
    from ..sandbox.zygote import started_before_torch

    # the worker template's torch import overlaps the grader's (from here on)
    with started_before_torch(assignment.banned, assignment.trains) as zygote:
        _last_resort(results, assignment.run_timeout + LAST_RESORT_MARGIN_S)
        from ..grading.grade import grade_submission

        grade = grade_submission(assignment, root / "submission", results, zygote=zygote)
    log.info("%s: %g points; results in %s", assignment.name, grade.score, results)
    return 0
