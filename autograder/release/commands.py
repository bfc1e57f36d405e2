"""A course staff's commands for releases: build, prove, measure and author (``python -m autograder release ...``).

One job: these commands' options and what each runs. The CLI (:mod:`autograder.cli`) adds them beside the grading
commands when this copy of the engine holds the instructor's tools; ``grade-all`` is the cohort's
(:func:`autograder.cohort.batch.add_command`). autograder.zip and the PrairieLearn package ship neither.
"""

from __future__ import annotations

import argparse
import importlib
from pathlib import Path
from typing import Any

from ..config import KIT_ROOT, list_assignments, load_assignment
from .banned_names import check_banned


def add_commands(sub: Any) -> None:
    _release_commands(sub)
    _measure_commands(sub)
    _authoring_commands(sub)


def _on_assignments(module: str) -> Any:
    """A command that runs ``module``'s ``main`` on the assignments named (all when none is)."""

    def command(args: argparse.Namespace) -> int:
        return importlib.import_module(module, __package__).main(args.assignments or list_assignments())

    return command


def _cmd_release(args: argparse.Namespace) -> int:
    import datetime as dt

    from .build import main as release_main

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


def _cmd_stubs(args: argparse.Namespace) -> int:
    from .student_folder import write_student_template

    for name in args.assignments or list_assignments():
        print(f"wrote {write_student_template(load_assignment(name))}")
    return 0


def _cmd_selfcheck(args: argparse.Namespace) -> int:
    import tempfile

    from .selfcheck import self_check
    from .zips import build_zips

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


def _cmd_caught_by(args: argparse.Namespace) -> int:
    from .caught_by import main as caught_by_main

    return caught_by_main(args.assignments or list_assignments(), write=args.write)


def _cmd_seeds(args: argparse.Namespace) -> int:
    from .determinism import reference_failures_by_seed

    failures = reference_failures_by_seed(load_assignment(args.assignment), list(range(args.first, args.first + args.count)))
    bad = {seed: f for seed, f in failures.items() if f}
    for seed, lines in bad.items():
        print(f"seed {seed}: " + "; ".join(lines))
    print(f"{args.assignment}: reference passes every test under {len(failures) - len(bad)} of {len(failures)} seeds")
    return 1 if bad else 0


def _cmd_determinism(args: argparse.Namespace) -> int:
    from .determinism import main as determinism_main

    return determinism_main(args.assignments or list_assignments(), args.settings)


def _cmd_points(args: argparse.Namespace) -> int:
    """Each assignment's points, once its assignment.toml is read and its banned names resolve (as the release checks)."""
    for name in args.assignments or list_assignments():
        assignment = load_assignment(name)
        check_banned(assignment.root / "assignment.toml", assignment.banned)
        print(f"{assignment.name}: {assignment.total_points:g} points")
        for key, value in assignment.points.items():
            print(f"  {value:>6.2f}  {key}")
    return 0


def _cmd_new(args: argparse.Namespace) -> int:
    from .scaffold import main as scaffold_main

    return scaffold_main(args.name, args.function or ["scale"], Path(args.root) if args.root else None, args.title)


def _cmd_rename_test(args: argparse.Namespace) -> int:
    from .rename import main as rename_main

    return rename_main(args.assignment, args.old, args.new, Path(args.root) if args.root else None)


def _release_commands(sub: Any) -> None:
    """The commands for building and proving releases."""
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
    p.set_defaults(func=_on_assignments(".snapshot"))

    p = sub.add_parser(
        "mutants",
        help="derive one-site mutants of each reference; grade them; print the mutation "
        "score and every survivor (fails on a survivor not recorded as equivalent)",
    )
    p.add_argument("assignments", nargs="*")
    p.set_defaults(func=_on_assignments(".mutants"))

    p = sub.add_parser(
        "caught-by",
        help="grade every catalogued mistake on every test (cached; the release then checks it): print each CAUGHT_BY "
        "that misses tests the mistake fails or names tests it passes, with the CAUGHT_BY that matches (exit 1 if any)",
    )
    p.add_argument("assignments", nargs="*")
    p.add_argument(
        "--write",
        action="store_true",
        help="rewrite each CAUGHT_BY that does not match in its mistakes/<id>.py (the release refuses one that does not)",
    )
    p.set_defaults(func=_cmd_caught_by)

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
