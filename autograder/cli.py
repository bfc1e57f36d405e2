"""Command line: ``python -m autograder <command>`` (``grade``, ``gradescope``, ``prairielearn``; a staff's in the kit).

One job: parse the command and run it. The grading commands are here; a course staff's commands (``grade-all``:
:mod:`.cohort.batch` and :mod:`.pool.parallel`; ``release``, its proofs and measures, authoring:
:mod:`.release.commands`) are added from the instructor's tools when this copy of the engine holds them, and refused with where to run them when not.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from .config import ENGINE, INSTRUCTOR_ONLY, ConfigError, load_assignment


def _cmd_grade(args: argparse.Namespace) -> int:
    from .sandbox.zygote import started_before_torch

    assignment = load_assignment(args.assignment)
    upload = Path(args.submission)
    if not upload.exists():
        print(f"error: {upload} does not exist; pass the student's file, folder or zip.", file=sys.stderr)
        return 2
    results = Path(args.results) if args.results else Path("results.json")
    import signal

    # SIGTERM exits through Python, so the grading's `finally` removes its reserve file and worker (grade.exit_on_terminate)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # the worker template's torch import overlaps the grader's (next line)
    with started_before_torch(assignment.banned, assignment.trains) as zygote:
        from .grading.grade import grade_submission
        from .grading.results import console_table

        grade = grade_submission(assignment, upload, results, diagnose=not args.no_diagnosis, zygote=zygote)
    print(console_table(grade.record))
    print(f"\nresults written to {results}")
    if grade.config_errors:
        print("\nthe grader's configuration has errors:\n  " + "\n  ".join(grade.config_errors), file=sys.stderr)
        return 3
    return 0


def _cmd_platform(args: argparse.Namespace) -> int:
    """Gradescope's or PrairieLearn's entry point: the platform's own folders, limits and results file."""
    from .platforms.gradescope import run_gradescope
    from .platforms.prairielearn import run_prairielearn

    return run_gradescope() if args.command == "gradescope" else run_prairielearn()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m autograder",
        description="Grade a submission, or on Gradescope or PrairieLearn; in the kit's checkout, a course staff's "
        "commands too (grade-all, release and its proofs and measures, new, rename-test).",
        epilog="python -m autograder bench [--help] measures grading time and memory (its own options).",
    )
    parser.add_argument(
        "--kit-root",
        metavar="CHECKOUT",
        help="the kit checkout to work on (default: $KIT_ROOT, else the current folder's checkout, else the installed one)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _grading_commands(sub)
    if _has_instructor_tools():  # a course staff's commands, in the kit's checkout (the zips ship no such tools)
        from .cohort.batch import add_command as add_grade_all
        from .pool.parallel import add_command as add_grade_many
        from .release.commands import add_commands as add_release_commands
        from .release.simulate import add_command as add_simulate

        add_grade_all(sub)
        add_grade_many(sub)
        add_release_commands(sub)
        add_simulate(sub)
    return parser


def _grading_commands(sub: Any) -> None:
    """The commands for grading one submission, or on a platform (all that a copy of the engine alone runs)."""
    p = sub.add_parser("grade", help="grade one submission (file, folder or zip)")
    p.add_argument("assignment")
    p.add_argument("submission")
    p.add_argument("--results", help="where to write results.json (default ./results.json)")
    p.add_argument("--no-diagnosis", action="store_true", help="skip naming catalogued mistakes")
    p.set_defaults(func=_cmd_grade)

    p = sub.add_parser("gradescope", help="Gradescope entry point (used by run_autograder)")
    p.set_defaults(func=_cmd_platform)

    p = sub.add_parser("prairielearn", help="PrairieLearn entry point (used by the grading package's run_grader.sh)")
    p.set_defaults(func=_cmd_platform)


# What a copy of the grading engine alone (autograder.zip, the PrairieLearn package) runs; the other commands
# are a course staff's, and need the instructor's tools that the zips leave out (config.INSTRUCTOR_ONLY).
GRADING_COMMANDS = ("grade", "gradescope", "prairielearn")
# A course staff's commands that run no student code, so need no grading environment.
NO_STUDENT_CODE = ("points", "new", "rename-test", "stubs", "gradescope", "prairielearn")


def _has_instructor_tools() -> bool:
    """Whether this copy of the engine holds them (judged by its own folder: an editable install elsewhere
    could otherwise lend a shipped copy the checkout's)."""
    return all((ENGINE / name).is_dir() for name in INSTRUCTOR_ONLY)


def _instructor_command(command: str) -> int:
    print(
        f"error: `{command}` is a course staff's command, and this copy of the engine is the grading engine alone "
        "(autograder.zip and the PrairieLearn package ship no release or cohort tools); run it in the kit's checkout.",
        file=sys.stderr,
    )
    return 2


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if _has_instructor_tools():  # the checkout this runs in, if another: its engine runs the command
        from .release.checkout import switch_checkout

        argv, status = switch_checkout(argv)
        if status is not None:
            return status
    if argv[:1] and argv[0] not in GRADING_COMMANDS and not argv[0].startswith("-") and not _has_instructor_tools():
        return _instructor_command(argv[0])
    try:
        if argv[:1] == ["bench"]:  # bench parses its own options (see autograder/release/bench.py)
            from .release.bench import main as bench_main
            from .release.grading_env import grading_python_for_children

            grading_python_for_children()

            return bench_main(argv[1:])
        args = build_parser().parse_args(argv)
        if _has_instructor_tools() and args.command not in NO_STUDENT_CODE:
            from .release.grading_env import grading_python_for_children

            # student code runs with the packages the platform installs, never the kit's venv (release/grading_env.py)
            grading_python_for_children()
        # The operator's log (stderr), kept apart from what students see (results.json).
        logging.basicConfig(level=logging.INFO, format="[grader] %(message)s", stream=sys.stderr)
        return args.func(args)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`... | head`): nothing more to say
        sys.stderr = sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - Python flushes them at exit
        return 0
