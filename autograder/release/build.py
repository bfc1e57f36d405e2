"""Build a release: student_template/<a>/, dist/<a>/{student,autograder}.zip and dist/<a>/prairielearn/.

A release is a pure function of the sources (solutions/, assignments/,
autograder/): stubs are generated, never edited; zips are byte-identical
from the same sources (fixed timestamps, order and permissions). Each assignment is built and
self-checked beside dist/<a>/ and replaces it only when the self-check passes (:mod:`.dist_folder`): a
refused release leaves the last good one in place. The cheap checks (assignment.toml, its points, the
catalogue's declarations and PATCHes) run on every assignment before anything is built (:func:`preflight`).

One job: the ``release`` command, start to end (:func:`main`). The student's folder is
:mod:`.student_folder`, the check for solution code in it :mod:`.solution_leaks`, the zips
:mod:`.zips`, the cross-assignment check :mod:`.answer_check`, and the proofs :mod:`.selfcheck`.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING

from ..catalogue import KINDS, read_catalogue, submission_source
from ..config import KIT_ROOT, Assignment, ConfigError, list_assignments, load_assignment
from .dist_folder import discard, kept, staging_folder, swap_in, tidy
from .solution_leaks import solution_code_check
from .student_folder import write_student_template
from .zips import build_zips, student_files_from_zip

if TYPE_CHECKING:
    from .course import Course


def main(
    names: list[str],
    check: bool = True,
    out: Path = KIT_ROOT / "dist",
    as_of: dt.date | None = None,
    otter: bool = False,
    cache: Path | None = None,
    course_file: Path | None = None,
) -> int:
    """``python -m autograder release``: regenerate, build, self-check, then write dist/.

    Assignments are built in the course's order (``course.toml``, or ``course_file``), each with
    its hints and dates and what the course ships on ``as_of`` (default today). Before anything is
    written, every student.zip is checked to hold none of its own reference's solution code
    (:func:`solution_code_check`: the hints the course ships may quote single lines) and no code
    that answers another assignment (:mod:`.course`); one cross-assignment finding refuses the
    whole release. Assignments are then self-checked two at a time (each grades with two
    processes): the serial parts of one (unzipping, the public tests, the simulated Gradescope
    run) overlap with the gradings of the other. student_template/ is regenerated only from the
    kit's own course.toml (another ``course_file`` builds dist/ alone).
    """
    from .answer_check import course_findings
    from .course import COURSE_FILE, load_course

    if not names:
        print("error: no assignments found under assignments/", file=sys.stderr)
        return 2
    as_of = as_of or dt.date.today()
    course = load_course(path=course_file)
    own_course = course_file is None or Path(course_file).resolve() == (KIT_ROOT / COURSE_FILE).resolve()
    if not own_course:
        print(f"course: {course_file} (student_template/ is left as the kit's course.toml makes it)")
    names = sorted(names, key=lambda n: course.order.index(n) if n in course.order else len(course.order))
    why: dict[str, str] = {}  # assignment -> what failed, for the summary at the end
    ready = preflight(names, out, why)  # in a second, before the minutes of building and proving
    built = [b for b in (_build_one(name, course, as_of, otter, own_course, out, why) for name in ready) if b]
    findings = course_findings({a.name: student_files_from_zip(zips["student.zip"]) for a, zips in built}, course, as_of)
    for finding in findings:
        print(f"answer leak: {finding}", file=sys.stderr)
    if findings:
        print(
            "release refused: a student.zip holds code that answers another assignment. Remove it, make it the "
            "student's own work, or ship it as a dated choice in course.toml ([[assignment.ships]]).",
            file=sys.stderr,
        )
        return 1
    if built:
        print(f"cross-assignment check: no student.zip of {', '.join(a.name for a, _ in built)} answers another assignment")
    tables = _self_check_all(built, check, out, cache, why, course)
    tidy(out)
    failures = len(why)
    if built and not failures:
        out.mkdir(parents=True, exist_ok=True)
        (out / "course.md").write_text(course.schedule() + f"\nBuilt on {as_of}.\n")
    if not failures and set(tables) == set(list_assignments()):  # a partial release leaves the catalogue page alone
        write_generated_block("mutation", "\n\n".join(tables[n] for n in sorted(tables)), KIT_ROOT / CATALOGUE_PAGE)
    if check and own_course:  # what the release refuses: the self-check's registered proofs, whatever was built
        write_refusal_lists()
    print(_summary(names, why, out, check), file=sys.stderr if why else sys.stdout)
    return 1 if failures else 0


# A refusal about points: `python -m autograder points <a>` shows them in a fraction of a second.
POINTS_PROBLEM = re.compile(r"\[points\]|points add up|points key|worth > 0|the points of all tests")


def fast_check(name: str, reason: str) -> str:
    """The command that checks ``reason`` again in a second, when there is one."""
    return f" (check it in a second: `python -m autograder points {name}`)" if POINTS_PROBLEM.search(reason) else ""


def preflight(names: list[str], out: Path, why: dict[str, str]) -> list[str]:
    """The assignments whose cheap checks pass: assignment.toml (its points add up to 100, each names a test),
    the catalogue's declarations (each CAUGHT_BY test has points) and PATCHes. Each refused is said at once,
    with the reason in ``why``."""
    ready = []
    for name in names:
        try:
            assignment = load_assignment(name)
            for kind in KINDS:
                for entry in read_catalogue(assignment, kind):
                    submission_source(assignment, entry)  # a PATCH that no longer matches the reference
                    unknown = [k for k in entry.caught_by if k not in assignment.points]
                    if unknown:
                        raise ConfigError(
                            f"{kind} {entry.name} ({entry.path}): CAUGHT_BY names {unknown}, which [points] does not "
                            "(a test renamed or removed; `rename-test` renames one everywhere)"
                        )
        except ConfigError as exc:
            reason = f"cannot build: {exc}"
            print(f"[{name}] refused before building: {exc}{fast_check(name, reason)}; {kept(out, name)}", file=sys.stderr)
            why[name] = reason
            continue
        ready.append(name)
    return ready


def _build_one(
    name: str, course: Course, as_of: dt.date, otter: bool, own_course: bool, out: Path, why: dict[str, str]
) -> tuple[Assignment, dict[str, bytes]] | None:
    """Build assignment ``name``'s files (zips, the PrairieLearn question) and check them for solution code;
    None, with the reason in ``why``, when it cannot be built."""
    try:
        assignment = load_assignment(name)
        entry = course.entry(name)
        shipped = frozenset(n for ns in entry.shipped(as_of).values() for n in ns)
        zips = build_zips(assignment, shipped, entry.hints, refresh_numbers=True, otter=otter, entry=entry)
        if "prairielearn" in course.platforms:  # dist/<a>/prairielearn/: release/prairielearn_question.py
            zips.update(_prairielearn_files(assignment, zips["student.zip"], course.title))
        leaks = solution_code_check(assignment, student_files_from_zip(zips["student.zip"]), entry)
        if leaks.found:
            raise ConfigError(
                leaks.text() + ". Take it out of the handout, notebook or tests (the hints may quote single lines)."
            )
        if own_course:
            write_student_template(assignment)
        if shipped:
            print(f"[{name}] ships earlier reference code (course.toml, as of {as_of}): {', '.join(sorted(shipped))}")
        if entry.hints:
            print(f"[{name}] ships the handout's code-level hints (course.toml: hints = true)")
        return assignment, zips
    except ConfigError as exc:
        print(f"[{name}] cannot build: {exc}; {kept(out, name)}", file=sys.stderr)
        why[name] = f"cannot build: {exc}"
        return None


def _self_check_all(
    built: list[tuple[Assignment, dict[str, bytes]]],
    check: bool,
    out: Path,
    cache: Path | None,
    why: dict[str, str],
    course: Course,
) -> dict[str, str]:
    """Self-check and write each built assignment, two at a time; {assignment: its mutation table}, and the
    reason in ``why`` for each that failed."""
    tables: dict[str, str] = {}
    lanes = max(1, min(2, len(built))) if check else 1
    # Each lane grades with its share of the cores (a grader process each on two cores, and the zips' proofs
    # beside them; one assignment alone has them all): more processes than cores only adds their start-up (an
    # interpreter, torch and a zygote each) to a release that keeps every core busy.
    jobs = max(1, (os.cpu_count() or 2) // lanes)
    with ThreadPoolExecutor(max_workers=lanes) as pool:
        # the longest first (the training suites), so the two lanes finish together
        order = sorted(built, key=lambda item: -item[0].test_timeout)
        futures = [pool.submit(_release_one, assignment, zips, check, out, cache, course, jobs) for assignment, zips in order]
        futures_names = {f: a.name for f, (a, _) in zip(futures, order)}
        for future in as_completed(futures):
            try:
                name, table, problems = future.result()
            except Exception as exc:  # noqa: BLE001 - one broken assignment must not hide the others' results
                name, table, problems = futures_names[future], None, [f"{type(exc).__name__}: {exc}"]
            if table is None:
                why[name] = "self-check failed: " + "; ".join(problems[:5]) + (" ..." if len(problems) > 5 else "")
            elif table:
                tables[name] = table
    return tables


def _summary(names: list[str], why: dict[str, str], out: Path, checked: bool = True) -> str:
    done_how = "built and self-checked" if checked else "built, NOT self-checked (--no-check; not for real releases)"
    if not why:
        return f"release: {len(names)} assignment(s) {done_how} into {out}/: {', '.join(names)}"
    lines = [f"release FAILED for {len(why)} of {len(names)} assignment(s) (each {out}/<name>/ keeps its last good release):"]
    lines += [f"  - {name}: {reason}{fast_check(name, reason)}" for name, reason in why.items()]
    done = [n for n in names if n not in why]
    if done:
        lines.append(f"  {done_how}: {', '.join(done)}")
    return "\n".join(lines)


def _release_one(
    assignment: Assignment,
    zips: dict[str, bytes],
    check: bool,
    out: Path,
    cache: Path | None = None,
    course: Course | None = None,
    jobs: int = 0,
) -> tuple[str, str | None, list[str]]:
    """Self-check one assignment's zips in a folder beside dist/<name>/ and swap it in when they pass; (name,
    mutation table or None if refused, the self-check's problems). A refusal leaves dist/<name>/ as it was.
    ``course``: the course it was built from (the self-check judges student.zip by the same hints and ships; its
    ``platforms`` say which zips are written); ``jobs``: the grader processes its gradings use (0: one per core)."""
    from .course import load_course

    course = course or load_course()
    from .catalogue_grading import DEFAULT_CACHE
    from .selfcheck import self_check

    name = assignment.name
    started = time.monotonic()
    table = ""
    target = out / name
    staged = staging_folder(out, name)  # everything the self-check reads of this build is here
    try:
        staged.chmod(0o755)  # as dist/<a>/ was made before (mkdtemp makes it 0700)
        for file_name, data in zips.items():
            (staged / file_name).parent.mkdir(parents=True, exist_ok=True)  # prairielearn/... is a folder
            (staged / file_name).write_bytes(data)
        if check:
            report = self_check(assignment, staged, cache or DEFAULT_CACHE, course.entry(assignment.name), jobs)
            with _PRINT:
                print(report.text(), flush=True)
            if not report.ok:
                print(f"[{name}] self-check FAILED: {kept(out, name)}", file=sys.stderr, flush=True)
                return name, None, list(report.problems)
            (staged / "selfcheck.txt").write_text(report.text() + "\n")
            table = report.markdown_table()
        if "gradescope" not in course.platforms:  # always self-checked, shipped if chosen
            (staged / "autograder.zip").unlink(missing_ok=True)
        swap_in(staged, target)
    finally:
        discard(staged)  # a refused build (a proven one is dist/<name>/ now)
    written = ", ".join(sorted(p.name for p in target.iterdir() if p.name != "selfcheck.txt"))
    print(f"[{name}] wrote {target}/: {written} ({time.monotonic() - started:.0f} s)", flush=True)
    return name, table, []


_PRINT = threading.Lock()


def _prairielearn_files(assignment: Assignment, student_zip: bytes, topic: str) -> dict[str, bytes]:
    """dist/<a>/prairielearn/'s files, keyed ``prairielearn/<path>``; the editor's stub is student.zip's."""
    from .prairielearn_question import prairielearn_files

    stub = student_files_from_zip(student_zip)[assignment.submit_file].decode()
    return {f"prairielearn/{rel}": data for rel, data in prairielearn_files(assignment, stub, topic).items()}


# The documentation pages that only the measuring commands write (docs/measurements/, docs/reference/refusals.md):
# each holds a block `<!-- name:start -->...<!-- name:end -->` that the command replaces; nothing else writes them.
CATALOGUE_PAGE = "docs/measurements/catalogue.md"  # the release's mutation table: every mistake, its points and tests
BENCH_PAGE = "docs/measurements/bench.md"  # `make bench`'s table
REFUSAL_PAGES = ("docs/reference/refusals.md",)  # the pages that list what the release refuses


def write_generated_block(name: str, text: str, page: Path, by: str = "make release") -> None:
    """Replace the generated block ``<!-- name:start -->...<!-- name:end -->`` in ``page`` (``by``: the command that writes it)."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    content = page.read_text() if page.is_file() else ""
    if start not in content:
        return
    head, rest = content.split(start, 1)
    tail = rest.split(end, 1)[1]
    updated = f"{head}{start}\n<!-- generated by `{by}`; do not edit -->\n{text}\n{end}{tail}"
    if updated != content:  # an unchanged page is not touched
        page.write_text(updated)


def write_refusal_lists(kit_root: Path = KIT_ROOT) -> None:
    """The ``refusals`` block of each page in ``REFUSAL_PAGES``: one line per registered proof."""
    from .selfcheck import refusals_markdown

    for page in REFUSAL_PAGES:
        write_generated_block("refusals", refusals_markdown(), kit_root / page)
