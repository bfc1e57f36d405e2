"""Grade a whole class: ``python -m autograder grade-all <assignment> <folder> --out <dir>``.

Accepts Gradescope's "Export Submissions" folder (``submission_metadata.yml``
plus one ``submission_<id>/`` folder each) or a plain folder of files, zips or
folders (one per student, named by the student). Each submission is graded by
the normal isolated grader in its own process, several at once; results
already on disk are kept unless ``--force`` (so an interrupted run resumes).
Writes ``results/<id>.json``, the dashboard ``report.html`` (report.py), and
the gradebooks: ``gradebook.csv`` (one row per student, a group submission
expanded to its members, points per function and the total),
``gradebook_tests.csv`` (points per test), ``gradebook_legend.csv`` (what each
short column holds) and ``canvas.csv`` (Canvas's grade-import layout), all
UTF-8 with a BOM (Excel reads them right) and every number with two decimals.
``--compare <earlier out>`` adds ``regrade_diff.csv``: every submission whose
score changed, by how much and in which tests. After grading, on the files: ``moodle.csv``
beside ``canvas.csv``, the term's late policy applied to every total (course.toml's ``[late]``
and ``[extensions]``), one feedback page per submission (``students/``), and the cohort's
similar pairs (``similarity.csv``, ``similarity/``), evidence that changes no grade.

A grading killed before its end leaves its 2 MB ``.reserve-*`` file (and a placeholder result
whose kind is ``unfinished``) in ``results/``: grade-all removes such stale files at its start and
after grading, and regrades unfinished placeholders instead of keeping them.

One job: the ``grade-all`` command, start to end. Reading the export is :mod:`.export`,
grading in parallel :mod:`..pool.parallel`, whose submission counts and the class mean
:mod:`.class_stats`, the late policy :mod:`.late_policy` (its ledger :mod:`.late_days`), the CSV
files :mod:`.gradebook`, the similar pairs :mod:`.similarity` (:mod:`.similarity_pages`), the
students' pages :mod:`.student_pages`, and the dashboard :mod:`.report`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..config import KIT_ROOT, Assignment, ConfigError, load_assignment
from ..pool.parallel import parallel_grade
from .class_stats import annotate_regrade, class_mean, gradebook_entries, mark_superseded
from .cohort import regrade_diff
from .export import (
    BatchError,
    _contains_file,
    _parse_time,
    check_duplicates,
    class_folder,
    find_submissions,
    make_private,
    one_nameless,
    unlisted,
)
from .gradebook import write_gradebooks, write_regrade_diff
from .similarity import SOURCES


def resolve_deadline(assignment: Assignment, due: str | None, course_file: Path | None = None) -> tuple[datetime | None, str]:
    """(deadline, which one is in force and where it comes from): ``--due`` overrides course.toml's
    (or ``course_file``'s) ``due`` for this assignment; ``--due none`` sets none. Raises BatchError on a bad ``--due``."""
    from ..release.course import format_deadline, load_course

    entry = load_course(KIT_ROOT, course_file).entry(assignment.name)
    course_text = f"course.toml's {entry.deadline_text()}" if entry.deadline else "course.toml gives none"
    if due is not None and due.strip().lower() in ("none", "no", "off"):
        return None, f"no deadline (--due none; {course_text})"
    if due:
        moment = _parse_time(due)
        if moment is None:
            raise BatchError(f"--due {due!r} is not a date and time (e.g. 2026-11-01T23:59-08:00).")
        return moment, f"deadline {format_deadline(moment, entry.timezone)} (--due, overriding {course_text})"
    if entry.deadline:
        return entry.deadline, f"deadline {entry.deadline_text()} (course.toml; --due overrides it)"
    return None, f"no deadline ({course_text} for {assignment.name}; --due sets one)"


def read_results_folder(out: Path) -> dict[str, dict]:
    """The results documents of an earlier ``grade-all --out`` folder (or its results/ folder)."""
    folder = out / "results" if (out / "results").is_dir() else out
    if not folder.is_dir():
        raise BatchError(f"{out} holds no results/ folder: pass the --out folder of an earlier grade-all run.")
    documents = {}
    for path in sorted(folder.glob("*.json")):
        try:
            documents[path.stem] = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
    if not documents:
        raise BatchError(f"{folder} holds no results files to compare with.")
    return documents


STALE = re.compile(r"^\.(reserve-|results-.*\.json$)")  # what a killed grading leaves beside results/<id>.json


def _grader_alive(pid: str) -> bool:
    """Is process ``pid`` a running grader (``python -m autograder ...``), not a stranger that reused its id?"""
    try:
        return b"autograder" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def clean_stale(results: Path) -> list[str]:
    """Remove what killed gradings left in ``results/``: their 2 MB ``.reserve-*`` files and half-written
    ``.results-*.json``; a reserve named after a running grader (``.reserve-<pid>-``) is kept. Returns the names removed."""
    removed = []
    for path in sorted(results.glob(".*")) if results.is_dir() else []:
        owner = re.match(r"^\.reserve-(\d+)-", path.name)
        if not STALE.match(path.name) or (owner and _grader_alive(owner.group(1))):
            continue
        try:
            path.unlink()
            removed.append(path.name)
        except OSError:
            continue
    return removed


def _unfinished(document: dict) -> bool:
    """A placeholder the grader writes before grading starts, still there: that grading was killed."""
    return (document.get("extra_data") or {}).get("kind") == "unfinished"


@dataclass
class Run:
    """What one grade-all run works from, read before any grading."""

    due: datetime | None
    due_note: str
    subs: list
    earlier: dict | None
    policy: object  # late_policy.LatePolicy
    extensions: dict = field(default_factory=dict)  # {student id or email: their deadline}
    zone: str = "UTC"
    order: list = field(default_factory=list)  # the course's assignments, in order (late days are spent in it)
    similarity: object = None  # similarity.SimilaritySettings


def _prepare(args: argparse.Namespace, assignment: Assignment) -> Run:
    """The deadline, the submissions, the earlier results to compare with and the term's rules (the
    kit's course.toml, or ``--course``'s). Raises BatchError (or ConfigError for the course file) with the reason."""
    from ..release.course import load_course
    from .late_policy import load_extensions, load_policy
    from .similarity import load_settings

    compare = getattr(args, "compare", None)
    course_file = Path(args.course) if getattr(args, "course", None) else None
    if course_file is not None and not course_file.is_file():
        raise BatchError(f"--course {course_file}: no such file (pass a course.toml)")
    due, due_note = resolve_deadline(assignment, getattr(args, "due", None), course_file)
    folder, notes = class_folder(Path(args.folder))
    args.folder = str(folder)  # the export itself: unlisted() and make_private() read it too
    subs = find_submissions(folder)
    for line in notes + one_nameless(subs, folder):
        print(line, file=sys.stderr)
    if not subs:
        raise BatchError(f"{args.folder} holds no submissions (it is empty).")
    if not any(_contains_file(s.path, assignment.submit_file) for s in subs if s.path.exists()):
        raise BatchError(
            f"none of the {len(subs)} submissions contains {assignment.submit_file} (or a .py or .zip file): "
            f"is {args.folder} the export of another assignment?"
        )
    # Read before grading: `--force --compare <the same --out>` compares with what was there.
    earlier = read_results_folder(Path(compare)) if compare else None
    course = load_course(KIT_ROOT, course_file)
    zone = course.entry(assignment.name).timezone
    policy, extensions = load_policy(KIT_ROOT, course_file), load_extensions(assignment.name, zone, KIT_ROOT, course_file)
    return Run(due, due_note, subs, earlier, policy, extensions, zone, course.order, load_settings(KIT_ROOT, course_file))


def _grade(assignment: Assignment, subs: list, out: Path, args: argparse.Namespace) -> dict[str, dict]:
    """Grade what has no finished result (everything with ``--force``), in parallel; the documents of all."""
    documents: dict[str, dict] = {}
    todo = []
    for s in subs:
        path = out / "results" / f"{s.sid}.json"
        document = json.loads(path.read_text()) if path.is_file() and not args.force else None
        if document is not None and not _unfinished(document):
            documents[s.sid] = document
        else:
            todo.append(s)
    unfinished = sum((out / "results" / f"{s.sid}.json").is_file() for s in todo) if not args.force else 0
    if len(subs) - len(todo):
        print(f"{len(subs) - len(todo)} submission(s) already graded (kept; --force regrades them)")
    stopped = sorted(sid for sid, d in documents.items() if (d.get("extra_data") or {}).get("kind") == "stopped")
    if stopped:
        print(f"{len(stopped)} of them stopped stuck by an earlier run ({', '.join(stopped[:5])}): score 0, flagged")
    if unfinished:
        print(f"{unfinished} grading(s) a killed run left unfinished: graded again")
    progress = None
    if todo:
        try:
            from tqdm import tqdm

            progress = tqdm(total=len(todo), unit="submission", desc=f"grading {assignment.name}")
        except ImportError:  # pragma: no cover - tqdm is in requirements-dev
            progress = None
        try:
            jobs = [(s.path, out / "results" / f"{s.sid}.json", {"source": str(out / SOURCES / f"{s.sid}.py")}) for s in todo]
            parallel_grade(
                assignment, jobs, args.jobs or os.cpu_count() or 2, (lambda _e: progress.update(1)) if progress else None
            )
        finally:  # a grader process killed on its way leaves its reserve: never in the results folder
            clean_stale(out / "results")
            if progress:
                progress.close()
    for s in todo:
        path = out / "results" / f"{s.sid}.json"
        documents[s.sid] = json.loads(path.read_text()) if path.is_file() else {}
        if not documents[s.sid]:  # the grader process itself died: say so rather than guess a score
            print(f"error: no results for {s.sid}; regrade it with `grade`", file=sys.stderr)
            documents[s.sid] = {"score": 0, "tests": [], "output": "not graded (grader error)", "missing": True}
    return documents


def _late_outcomes(assignment: Assignment, run: Run, documents: dict[str, dict], out: Path) -> dict:
    """{student: late_policy.LateOutcome}; records this assignment's late days in the term's ledger."""
    from .late_days import ledger_path, read_ledger, record, spent_before
    from .late_policy import cohort_outcomes, unmatched_extensions

    for key in unmatched_extensions(run.extensions, run.subs):
        print(f"warning: course.toml's extension for {key!r} matches no student id or email in this export", file=sys.stderr)
    entries = gradebook_entries(run.subs)
    ledger = ledger_path(run.policy.ledger, out) if run.policy.late_days else None
    spent = spent_before(read_ledger(ledger), assignment.name, run.order) if ledger else {}
    late = cohort_outcomes(entries, documents, run.due, run.policy, run.extensions, spent, assignment.total_points, run.zone)
    if ledger is not None:
        used = {e.key: (late[e.key].late_days_used, e.sub.sid) for e in entries}
        for warning in record(ledger, assignment.name, used, run.policy.late_days):
            print(f"warning: {warning}", file=sys.stderr)
        print(f"late days: {sum(d for d, _ in used.values())} used on {assignment.name}, recorded in {ledger}")
    return late


def _similarity(assignment: Assignment, run: Run, out: Path, written: list[Path]):
    """Measure the cohort's similar pairs on the graded files and write similarity.csv and the pages."""
    from .similarity import Similarity, measure
    from .similarity_pages import write_similarity

    subs = run.subs
    try:  # each file is read on its own (similarity.measure); whatever else it meets, report.html is written
        result = measure(assignment, subs, run.similarity, out / SOURCES)
    except Exception as exc:  # noqa: BLE001
        result = Similarity(run.similarity, unavailable=f"the measure stopped ({type(exc).__name__}: {str(exc)[:200]})")
    for sid, why in result.unread.items():
        print(f"warning: similarity: {sid} not compared: {why}", file=sys.stderr)
    if result.unavailable:
        print(f"note: similarity not measured: {result.unavailable}", file=sys.stderr)
        return result
    written += write_similarity(out, assignment, subs, result)
    shown = min(len(result.pairs), result.settings.top)
    print(
        f"similarity: {len(result.pairs)} pair(s) at or above {result.settings.threshold:.2f} among {len(result.sources)} "
        f"submissions ({shown} with a side-by-side page), {result.seconds:.1f} s; evidence only, no grade changed"
    )
    return result


def _staff_facts(run: Run) -> dict[str, list[str]]:
    """{submission id: the lines its feedback page gives the instructor (who, when); the grades are the page's own}."""
    from .cohort import people

    facts = {}
    for s in run.subs:
        lines = [f"submission {s.sid}" + (f", submitted {s.created_at}" if s.created_at else "")]
        lines += [f"{p.get('name') or key} ({p.get('sid') or '–'}, {p.get('email') or '–'})" for key, p in people(s)]
        if s.superseded_by:
            lines.append(f"superseded by {s.superseded_by}: this submission sets no grade")
        facts[s.sid] = lines
    return facts


def main(args: argparse.Namespace) -> int:
    from .late_policy import mark_late
    from .report import Extras, write_report
    from .student_pages import write_student_pages

    assignment = load_assignment(args.assignment)
    out = Path(args.out)
    compare = getattr(args, "compare", None)
    try:
        run = _prepare(args, assignment)
    except (BatchError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    subs = run.subs
    print(run.due_note)
    print(run.policy.describe())
    mark_late(subs, run.due, run.extensions, run.policy.grace_minutes)
    for warning in unlisted(Path(args.folder), subs) + check_duplicates(subs):
        print(f"warning: {warning}", file=sys.stderr)
    mark_superseded(subs)
    for change in make_private(Path(args.folder), out, Path(compare) if compare else None):
        print(f"note: {change}", file=sys.stderr)
    (out / "results").mkdir(parents=True, exist_ok=True)
    stale = clean_stale(out / "results")
    if stale:
        print(
            f"note: removed {len(stale)} file(s) a killed grading left in {out / 'results'}: {', '.join(stale)}", file=sys.stderr
        )
    documents = _grade(assignment, subs, out, args)
    late = _late_outcomes(assignment, run, documents, out)
    written = write_gradebooks(out, assignment, subs, documents, getattr(args, "canvas_column", "") or "", late)
    diff = None
    if run.earlier is not None:
        diff = regrade_diff(run.earlier, documents)
        changed = annotate_regrade(diff, subs)
        write_regrade_diff(out / "regrade_diff.csv", subs, diff)
        written.append(out / "regrade_diff.csv")
        print(f"regrade diff against {compare}: {changed}")
    pages = write_student_pages(out, assignment, subs, documents, _staff_facts(run), late)
    similarity = _similarity(assignment, run, out, written)
    extras = Extras(late, run.policy.describe() if run.policy.configured else "", similarity, pages)
    write_report(out / "report.html", assignment, subs, documents, diff, str(compare or ""), run.due_note, extras)
    late_count = sum(bool(o.late) for o in late.values())
    print(
        f"graded {len(subs)} submissions; {class_mean(subs, documents, late)}"
        + (f"; {late_count} student(s) late" if run.due is not None else "")
        + f"; wrote {out}/report.html, students/ ({len(pages)} pages), "
        + ", ".join(p.name for p in written)
    )
    missing = sorted(sid for sid, d in documents.items() if d.get("missing"))
    if missing:  # a run that graded nobody must not look like a class that scored 0
        print(
            f"error: {len(missing)} submission(s) have no results ({', '.join(missing[:5])}): see the errors above",
            file=sys.stderr,
        )
    return 1 if missing else 0


def add_command(sub: Any) -> None:
    """``grade-all``'s options (the CLI adds the command in the kit's checkout)."""
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
    p.set_defaults(func=main)
