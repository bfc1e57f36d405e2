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
score changed, by how much and in which tests.

One job: the ``grade-all`` command, start to end. Reading the export is :mod:`.export`,
grading in parallel :mod:`.parallel`, whose submission counts and the class mean
:mod:`.class_stats`, the CSV files :mod:`.gradebook`, and the dashboard :mod:`.report`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime
from pathlib import Path

from .class_stats import (  # noqa: F401 - MEAN_DEFINITION, student_scores: callers' names
    MEAN_DEFINITION,
    annotate_regrade,
    class_mean,
    gradebook_entries,
    mark_superseded,
    student_scores,
)
from .cohort import regrade_diff
from .config import KIT_ROOT, Assignment, load_assignment
from .export import (  # noqa: F401 - Submission: the callers' name
    BatchError,
    Submission,
    _contains_file,
    _parse_time,
    check_duplicates,
    find_submissions,
    make_private,
)
from .gradebook import safe_cell, short_column, write_gradebooks, write_regrade_diff  # noqa: F401 - safe_cell, short_column
from .parallel import EVENT_PREFIX, parallel_grade, parse_event, progress_event  # noqa: F401 - grade-many's events


def resolve_deadline(assignment: Assignment, due: str | None) -> tuple[datetime | None, str]:
    """(deadline, which one is in force and where it comes from): ``--due`` overrides course.toml's
    ``due`` for this assignment; ``--due none`` sets none. Raises BatchError on a bad ``--due``."""
    from .course import format_deadline, load_course

    entry = load_course(KIT_ROOT).entry(assignment.name)
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


def main(args: argparse.Namespace) -> int:
    assignment = load_assignment(args.assignment)
    out = Path(args.out)
    compare = getattr(args, "compare", None)
    try:
        due, due_note = resolve_deadline(assignment, getattr(args, "due", None))
        subs = find_submissions(Path(args.folder))
        if not subs:
            raise BatchError(f"{args.folder} holds no submissions (it is empty).")
        if not any(_contains_file(s.path, assignment.submit_file) for s in subs if s.path.exists()):
            raise BatchError(
                f"none of the {len(subs)} submissions contains {assignment.submit_file} (or a .py or .zip file): "
                f"is {args.folder} the export of another assignment?"
            )
        # Read before grading: `--force --compare <the same --out>` compares with what was there.
        earlier = read_results_folder(Path(compare)) if compare else None
    except BatchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(due_note)
    for s in subs:
        submitted = _parse_time(s.created_at)
        s.late = (submitted > due) if (due is not None and submitted is not None) else None
    for warning in check_duplicates(subs):
        print(f"warning: {warning}", file=sys.stderr)
    mark_superseded(subs)
    for change in make_private(Path(args.folder), out, Path(compare) if compare else None):
        print(f"note: {change}", file=sys.stderr)
    (out / "results").mkdir(parents=True, exist_ok=True)
    documents: dict[str, dict] = {}
    todo = []
    for s in subs:
        path = out / "results" / f"{s.sid}.json"
        if path.is_file() and not args.force:
            documents[s.sid] = json.loads(path.read_text())
        else:
            todo.append(s)
    skipped = len(subs) - len(todo)
    if skipped:
        print(f"{skipped} submission(s) already graded (kept; --force regrades them)")
    jobs = args.jobs or os.cpu_count() or 2
    progress = None
    if todo:
        try:
            from tqdm import tqdm

            progress = tqdm(total=len(todo), unit="submission", desc=f"grading {assignment.name}")
        except ImportError:  # pragma: no cover - tqdm is in requirements-dev
            progress = None
        parallel_grade(
            assignment,
            [(s.path, out / "results" / f"{s.sid}.json") for s in todo],
            jobs,
            on_done=(lambda _event: progress.update(1)) if progress else None,
        )
    if progress:
        progress.close()
    for s in todo:
        path = out / "results" / f"{s.sid}.json"
        if path.is_file():
            documents[s.sid] = json.loads(path.read_text())
        else:  # the grader process itself died: say so rather than guess a score
            print(f"error: no results for {s.sid}; regrade it with `grade`", file=sys.stderr)
            documents[s.sid] = {"score": 0, "tests": [], "output": "not graded (grader error)"}
    written = write_gradebooks(out, assignment, subs, documents, getattr(args, "canvas_column", "") or "")
    diff = None
    if earlier is not None:
        diff = regrade_diff(earlier, documents)
        changed = annotate_regrade(diff, subs)
        write_regrade_diff(out / "regrade_diff.csv", subs, diff)
        written.append(out / "regrade_diff.csv")
        print(f"regrade diff against {compare}: {changed}")
    from .report import write_report

    write_report(out / "report.html", assignment, subs, documents, diff, str(compare or ""), deadline=due_note)
    late = sum(bool(e.sub.late) for e in gradebook_entries(subs))
    print(
        f"graded {len(subs)} submissions; {class_mean(subs, documents)}"
        + (f"; {late} student(s) late" if due is not None else "")
        + f"; wrote {out}/report.html, "
        + ", ".join(p.name for p in written)
    )
    return 0
