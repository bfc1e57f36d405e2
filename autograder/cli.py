"""Command line: ``python -m autograder {grade,grade-all,release,gradescope,prairielearn,...}``."""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from pathlib import Path
from typing import Any

from .config import ENGINE, INSTRUCTOR_ONLY, KIT_ROOT, ConfigError, list_assignments, load_assignment


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


def _cmd_grade_many(args: argparse.Namespace) -> int:
    import json

    from .grading.parallel import grade_many

    jobs = [(Path(job[0]), Path(job[1]), *job[2:]) for job in json.loads(Path(args.jobs_file).read_text())]
    grade_many(load_assignment(args.assignment), jobs)
    return 0


def _cmd_seeds(args: argparse.Namespace) -> int:
    from .grading.grade import reference_failures_by_seed

    failures = reference_failures_by_seed(load_assignment(args.assignment), list(range(args.first, args.first + args.count)))
    bad = {seed: f for seed, f in failures.items() if f}
    for seed, lines in bad.items():
        print(f"seed {seed}: " + "; ".join(lines))
    print(f"{args.assignment}: reference passes every test under {len(failures) - len(bad)} of {len(failures)} seeds")
    return 1 if bad else 0


def _cmd_determinism(args: argparse.Namespace) -> int:
    from .release.determinism import main as determinism_main

    return determinism_main(args.assignments or list_assignments(), args.settings)


def _on_assignments(module: str) -> Any:
    """A command that runs ``module``'s ``main`` on the assignments named (all when none is)."""

    def command(args: argparse.Namespace) -> int:
        return importlib.import_module(module, __package__).main(args.assignments or list_assignments())

    return command


def _cmd_points(args: argparse.Namespace) -> int:
    from .config import points_table

    for name in args.assignments or list_assignments():
        print(points_table(load_assignment(name)))
    return 0


def _cmd_new(args: argparse.Namespace) -> int:
    from .release.scaffold import main as scaffold_main

    return scaffold_main(args.name, args.function or ["scale"], Path(args.root) if args.root else None, args.title)


def _cmd_rename_test(args: argparse.Namespace) -> int:
    from .release.rename import main as rename_main

    return rename_main(args.assignment, args.old, args.new, Path(args.root) if args.root else None)


def _cmd_gradescope(args: argparse.Namespace) -> int:
    from .platforms.gradescope import run_gradescope

    return run_gradescope()


def _cmd_prairielearn(args: argparse.Namespace) -> int:
    from .platforms.prairielearn import run_prairielearn

    return run_prairielearn()


def _cmd_release(args: argparse.Namespace) -> int:
    import datetime as dt

    from .release.build import main as release_main

    as_of = dt.date.fromisoformat(args.as_of) if args.as_of else None
    return release_main(
        args.assignments or list_assignments(),
        check=not args.no_check,
        out=Path(args.out),
        as_of=as_of,
        otter=args.otter,
        cache=Path(args.cache) if args.cache else None,
        course_file=Path(args.course) if args.course else None,
    )


def _cmd_grade_all(args: argparse.Namespace) -> int:
    from .cohort.batch import main as batch_main

    return batch_main(args)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m autograder",
        description=__doc__,
        epilog="python -m autograder bench [--help] measures grading time and memory (its own options).",
    )
    parser.add_argument(
        "--kit-root",
        metavar="CHECKOUT",
        help="the kit checkout to work on (default: $KIT_ROOT, else the current folder's checkout, else the installed one)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _grading_commands(sub)
    _release_commands(sub)
    _measure_commands(sub)
    _authoring_commands(sub)
    return parser


def _grading_commands(sub: Any) -> None:
    """The commands for grading one submission, a class, or on a platform."""
    p = sub.add_parser("grade", help="grade one submission (file, folder or zip)")
    p.add_argument("assignment")
    p.add_argument("submission")
    p.add_argument("--results", help="where to write results.json (default ./results.json)")
    p.add_argument("--no-diagnosis", action="store_true", help="skip naming catalogued mistakes")
    p.set_defaults(func=_cmd_grade)

    p = sub.add_parser("grade-all", help="grade a folder of submissions (Gradescope export or plain)")
    p.add_argument("assignment")
    p.add_argument("folder")
    p.add_argument("--out", required=True, help="folder for results/, report.html and the gradebooks")
    p.add_argument("--force", action="store_true", help="regrade submissions already graded")
    p.add_argument("--jobs", type=int, default=0, help="parallel graders (default: the machine's cores)")
    p.add_argument(
        "--compare",
        metavar="EARLIER_OUT",
        help="an earlier --out folder: write regrade_diff.csv (every score that changed, and which tests) "
        "and show it in report.html; may be --out itself with --force",
    )
    p.add_argument(
        "--due",
        help="due date and time (e.g. 2026-11-01T23:59-08:00): flags later submissions as late; overrides the "
        "assignment's `due` in course.toml (the default); `--due none` flags nothing",
    )
    p.add_argument(
        "--canvas-column",
        default="",
        help='the assignment column of canvas.csv, e.g. "Attention (12345)" to update an existing Canvas assignment '
        "(default: the assignment's title, which Canvas imports as a new assignment)",
    )
    p.add_argument(
        "--course",
        metavar="COURSE_TOML",
        help="the course file whose deadline, late policy, extensions and similarity settings apply (default: the kit's course.toml)",
    )
    p.set_defaults(func=_cmd_grade_all)

    p = sub.add_parser("grade-many", help="(internal) grade a JSON list of [upload, results] pairs in one process")
    p.add_argument("assignment")
    p.add_argument("jobs_file")
    p.set_defaults(func=_cmd_grade_many)

    p = sub.add_parser("gradescope", help="Gradescope entry point (used by run_autograder)")
    p.set_defaults(func=_cmd_gradescope)

    p = sub.add_parser("prairielearn", help="PrairieLearn entry point (used by the grading package's run_grader.sh)")
    p.set_defaults(func=_cmd_prairielearn)


def _release_commands(sub: Any) -> None:
    """The commands for building, proving and measuring releases."""
    p = sub.add_parser("release", help="build and self-check dist/<assignment>/ zips")
    p.add_argument("assignments", nargs="*")
    p.add_argument("--out", default=str(KIT_ROOT / "dist"), help="where the zips go (default: the kit's dist/)")
    p.add_argument("--no-check", action="store_true", help="skip the self-check (not for real releases)")
    p.add_argument("--as-of", help="release date YYYY-MM-DD for course.toml's dated choices (default today)")
    p.add_argument("--otter", action="store_true", help="also build Otter's own Gradescope zip (otter-autograder.zip)")
    p.add_argument("--cache", help="the self-check's cache folder (default .cache/selfcheck; `make clean` empties it)")
    p.add_argument(
        "--course",
        help="another course file than the kit's course.toml (its hints, dates, ships...); dist/ only, "
        "student_template/ stays as the kit's course.toml makes it",
    )
    p.set_defaults(func=_cmd_release)

    p = sub.add_parser("stubs", help="regenerate student_template/ from solutions/")
    p.add_argument("assignments", nargs="*")
    p.set_defaults(func=_cmd_stubs)

    p = sub.add_parser("selfcheck", help="grade reference, stub, variants and mistakes; print the mutation table")
    p.add_argument("assignments", nargs="*")
    p.set_defaults(func=_cmd_selfcheck)

    p = sub.add_parser("seeds", help="run the suites on the reference under many seeds (flake check)")
    p.add_argument("assignment")
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--first", type=int, default=1, help="the first seed (grading's own is 0)")
    p.set_defaults(func=_cmd_seeds)


def _measure_commands(sub: Any) -> None:
    """The commands that measure a release: determinism, snapshot, mutants, caught_by, points."""
    p = sub.add_parser(
        "determinism",
        help="grade the catalogue again under other CPU kernels, threads and hash seeds; compare with the release's own gradings",
    )
    p.add_argument("assignments", nargs="*")
    p.add_argument("--settings", nargs="+", default=["pinned", "unpinned"], choices=["pinned", "unpinned"])
    p.set_defaults(func=_cmd_determinism)

    p = sub.add_parser(
        "snapshot",
        help="write snapshots/<a>.json: every catalogue grading's points, kinds and names "
        "per test (from the release's cache); print what changed since the committed one",
    )
    p.add_argument("assignments", nargs="*")
    p.set_defaults(func=_on_assignments(".release.snapshot"))

    p = sub.add_parser(
        "mutants",
        help="derive one-site mutants of each reference; grade them; print the mutation "
        "score and every survivor (fails on a survivor not recorded as equivalent)",
    )
    p.add_argument("assignments", nargs="*")
    p.set_defaults(func=_on_assignments(".release.mutants"))

    p = sub.add_parser(
        "caught-by",
        help="grade every catalogued mistake on every test (cached; the release then shows it): print each CAUGHT_BY "
        "that misses tests the mistake fails or names tests it passes, with the CAUGHT_BY that matches (exit 1 if any)",
    )
    p.add_argument("assignments", nargs="*")
    p.set_defaults(func=_on_assignments(".release.caught_by"))

    p = sub.add_parser("points", help="print each test's points as assignment.toml gives them ([points]), split over its cases")
    p.add_argument("assignments", nargs="*")
    p.set_defaults(func=_cmd_points)


def _authoring_commands(sub: Any) -> None:
    """The commands for writing assignments."""
    p = sub.add_parser(
        "new",
        help="scaffold a new assignment that releases as it is (a toy function, its tests, ten catalogued mistakes, "
        "the course entry)",
    )
    p.add_argument("name", help="the assignment, also the module students submit (<name>.py); a lowercase identifier")
    p.add_argument(
        "--function",
        action="append",
        default=None,
        help="a function students write (repeat for several: --function a --function b; default scale)",
    )
    p.add_argument("--title", help="the assignment's title (default 'Scaling a tensor')")
    p.add_argument("--root", help="the kit's root to write into (default: this kit)")
    p.set_defaults(func=_cmd_new)

    p = sub.add_parser(
        "rename-test",
        help="rename a test everywhere: its function, assignment.toml, every CAUGHT_BY, [uncaught], the kit's tests",
    )
    p.add_argument("assignment")
    p.add_argument("old", help="the test's id, as in assignment.toml: hidden/test_x.py::test_y")
    p.add_argument("new", help="the new function name (test_z), in the same file")
    p.add_argument("--root", help="the kit's root to edit (default: this kit)")
    p.set_defaults(func=_cmd_rename_test)


def _cmd_stubs(args: argparse.Namespace) -> int:
    from .release.student_folder import write_student_template

    for name in args.assignments or list_assignments():
        print(f"wrote {write_student_template(load_assignment(name))}")
    return 0


def _cmd_selfcheck(args: argparse.Namespace) -> int:
    import tempfile

    from .release.selfcheck import self_check
    from .release.zips import build_zips

    status = 0
    for name in args.assignments or list_assignments():
        assignment = load_assignment(name)
        with tempfile.TemporaryDirectory() as tmp:
            for file_name, data in build_zips(assignment).items():
                (Path(tmp) / file_name).write_bytes(data)
            report = self_check(assignment, Path(tmp))
        print(report.text())
        status |= 0 if report.ok else 1
    return status


# What a copy of the grading engine alone (autograder.zip, the PrairieLearn package) runs; the other commands
# are a course staff's, and need the instructor's tools that the zips leave out (config.INSTRUCTOR_ONLY).
GRADING_COMMANDS = ("grade", "gradescope", "prairielearn")


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
    from .checkout import switch_checkout

    argv, status = switch_checkout(argv)  # the checkout this runs in, if another: its engine runs the command
    if status is not None:
        return status
    if argv[:1] and argv[0] not in GRADING_COMMANDS and not argv[0].startswith("-") and not _has_instructor_tools():
        return _instructor_command(argv[0])
    try:
        if argv[:1] == ["bench"]:  # bench parses its own options (see autograder/release/bench.py)
            from .release.bench import main as bench_main

            return bench_main(argv[1:])
        args = build_parser().parse_args(argv)
        # The operator's log (stderr), kept apart from what students see (results.json).
        logging.basicConfig(level=logging.INFO, format="[grader] %(message)s", stream=sys.stderr)
        return args.func(args)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
