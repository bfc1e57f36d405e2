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
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pwd
import re
import subprocess
import sys
import tempfile
import threading
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .config import KIT_ROOT, Assignment, load_assignment
from .submission import SubmissionProblem, UnpackBudget, check_central_directory


@dataclass
class Submission:
    sid: str  # the key of this submission (Gradescope id or file stem)
    path: Path
    name: str = ""
    student_id: str = ""
    email: str = ""
    created_at: str = ""
    notes: list[str] = field(default_factory=list)
    superseded_by: str = ""  # the same student(s)' later submission, which is the one that counts
    submitters: list[dict] = field(default_factory=list)  # [{"name", "sid", "email"}], several for a group
    late: bool | None = None  # None: no due date given, or no submission time


class BatchError(Exception):
    """The folder cannot be graded as asked; the message says why."""


def _read_export_metadata(folder: Path) -> dict:
    import yaml

    path = folder / "submission_metadata.yml"
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except (yaml.YAMLError, OSError) as exc:
        raise BatchError(f"{path} is not readable YAML ({exc}); re-download the Gradescope export.") from None
    if not isinstance(data, dict):
        raise BatchError(f"{path} does not look like a Gradescope export's metadata")
    return data


def _field(d: dict, key: str) -> str:
    value = d.get(f":{key}", d.get(key, ""))
    return "" if value is None else str(value)


def find_submissions(folder: Path) -> list[Submission]:
    """The submissions in an export or a plain folder, in a stable order."""
    if not folder.is_dir():
        raise BatchError(f"{folder} is not a folder; pass the unzipped export or a folder of submissions.")
    entries = sorted(p for p in folder.iterdir() if not p.name.startswith(".") and p.name != "__MACOSX")
    if (folder / "submission_metadata.yml").is_file():
        meta = _read_export_metadata(folder)
        subs = []
        for key, info in sorted(meta.items()):
            info = info if isinstance(info, dict) else {}
            submitters = info.get(":submitters") or info.get("submitters") or [{}]
            names = ", ".join(_field(s, "name") for s in submitters if _field(s, "name"))
            subs.append(
                Submission(
                    sid=str(key),
                    path=folder / str(key),
                    name=names,
                    student_id=";".join(_field(s, "sid") for s in submitters if _field(s, "sid")),
                    email=";".join(_field(s, "email") for s in submitters if _field(s, "email")),
                    created_at=_field(info, "created_at"),
                    submitters=[{k: _field(p, k) for k in ("name", "sid", "email")} for p in submitters if isinstance(p, dict)],
                    notes=[] if (folder / str(key)).exists() else ["listed in submission_metadata.yml but its folder is missing"],
                )
            )
        return subs
    subs = [Submission(sid=p.stem if p.is_file() else p.name, path=p) for p in entries if p.is_dir() or p.is_file()]
    return [s for s in subs if s.path.name != "submission_metadata.yml"]


def _reachable_by_others(path: Path) -> bool:
    """Could a user who is neither the owner nor in the group list or enter ``path``?"""
    path = path.resolve()
    for folder in path.parents:
        if not folder.stat().st_mode & 0o001:
            return False
    return bool(path.stat().st_mode & 0o005)


def make_private(export: Path, out: Path, earlier: Path | None = None) -> list[str]:
    """As root, before any student code runs: nothing of the class is readable to the worker accounts.

    ``--out`` (results, gradebooks, report) becomes ``0700`` and root's if a worker account owned
    it; the export, and an earlier ``--out`` given to ``--compare``, lose their permissions for
    other users (``o-rwx``) when other users could reach them. Each worker then reads only its
    own student's file, copied into its private staging. Returns what was changed, for the log."""
    from .sandbox import running_as_root
    from .sandbox.users import STUDENT_USER

    if not running_as_root():
        return []
    changed = []
    out.mkdir(parents=True, exist_ok=True)
    for folder in (out, out / "results"):
        folder.mkdir(exist_ok=True)
        info = folder.stat()
        try:
            owner = pwd.getpwuid(info.st_uid).pw_name
        except KeyError:
            owner = ""
        if info.st_uid != 0 and (owner == STUDENT_USER or owner.startswith(STUDENT_USER + "-") or not owner):
            os.chown(folder, 0, 0)
            changed.append(f"{folder} now belongs to root")
        if info.st_mode & 0o077:
            folder.chmod(0o700)
            changed.append(f"{folder} is now 0700")
    for folder in (export, earlier):
        if folder is None or not folder.exists():
            continue
        if _reachable_by_others(folder):
            try:
                folder.chmod(folder.stat().st_mode & ~0o007)
                changed.append(f"{folder} was readable by other users (the worker accounts among them): now o-rwx")
            except OSError as exc:  # a read-only copy: say so, the grading itself still isolates each worker
                changed.append(
                    f"WARNING: {folder} is readable by other users and could not be closed ({exc.strerror}); students' code could read it: copy it into a private folder (chmod 700) and grade that"
                )
    return changed


def check_duplicates(subs: list[Submission]) -> list[str]:
    """Students with more than one submission (same id or email); all are graded, and flagged."""
    seen: dict[str, list[str]] = {}
    for s in subs:
        for ident in filter(None, [s.student_id, s.email, s.sid if not s.student_id and not s.email else ""]):
            for part in ident.split(";"):
                seen.setdefault(part, []).append(s.sid)
    warnings = []
    for ident, sids in seen.items():
        if len(set(sids)) > 1:
            for s in subs:
                if s.sid in sids:
                    s.notes.append(f"{ident} also has submission(s) {', '.join(x for x in sids if x != s.sid)}")
            warnings.append(f"{ident} appears in {len(set(sids))} submissions: {', '.join(sorted(set(sids)))}")
    return warnings


def _contains_file(path: Path, filename: str) -> bool:
    if path.is_file():
        if path.suffix == ".zip":
            try:
                check_central_directory(path, UnpackBudget())  # before zipfile builds an object per entry
                with zipfile.ZipFile(path) as zf:
                    return any(Path(n).name.lower() == filename.lower() for n in zf.namelist())
            except (zipfile.BadZipFile, OSError, SubmissionProblem):
                return False
        return path.suffix == ".py"
    return any(p.name.lower() == filename.lower() or p.suffix == ".zip" for p in path.rglob("*"))


# Progress comes from structured events the grading child prints on its stdout (one JSON
# object per line, after this prefix), never from its human output: pytest's dots and
# tracebacks share that stream.
EVENT_PREFIX = "@@autograder-event "


def progress_event(upload: str, score: float) -> str:
    """The line ``grade-many`` prints when a submission's results are written."""
    return EVENT_PREFIX + json.dumps({"event": "graded", "upload": str(upload), "score": score})


def parse_event(line: str) -> dict | None:
    """The event on ``line``, or None (anything else the child printed is ignored)."""
    at = line.find(EVENT_PREFIX)
    if at < 0:
        return None
    try:
        event = json.loads(line[at + len(EVENT_PREFIX) :])
    except ValueError:
        return None
    return event if isinstance(event, dict) and event.get("event") == "graded" and "upload" in event else None


def parallel_grade(assignment: Assignment, jobs: list[tuple], processes: int = 0, on_done=None) -> None:
    """Grade (upload, results[, {"only": test keys}]) jobs with ``processes`` grader processes (``grade-many``) at once.

    Each grader process reserves its own worker user (``sandbox/users.py: reserve_slot``), so
    students graded at the same time cannot signal or read each other's workers.
    ``on_done(event)`` is called once per job graded (``{"upload", "score"}``).
    """
    processes = max(1, min(processes or os.cpu_count() or 2, len(jobs)))
    chunks = [jobs[i::processes] for i in range(processes)]
    reported: set[str] = set()
    lock = threading.Lock()

    def run(index: int, chunk: list[tuple]) -> None:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump([[str(u), str(r), *rest] for u, r, *rest in chunk], f)
        env = dict(os.environ)
        expected = {str(u) for u, *_ in chunk}
        proc = subprocess.Popen(
            [sys.executable, "-m", "autograder", "grade-many", assignment.name, f.name],
            cwd=KIT_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            errors="replace",
        )
        for line in proc.stdout:
            event = parse_event(line)
            if event is None or event["upload"] not in expected:
                continue
            with lock:  # each job counts once, whatever is printed twice
                fresh = event["upload"] not in reported
                reported.add(event["upload"])
            if fresh and on_done:
                on_done(event)
        proc.wait()
        os.unlink(f.name)

    with ThreadPoolExecutor(max_workers=processes) as pool:
        for future in [pool.submit(run, i, chunk) for i, chunk in enumerate(chunks) if chunk]:
            future.result()


# -- gradebooks --------------------------------------------------------------------------------


def _number(value: float) -> str:
    """The one number format of every gradebook: two decimals, a point, no thousands separator."""
    return f"{float(value):.2f}"


_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """A cell a spreadsheet shows as text, never runs (OWASP's rule against CSV injection): text
    that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading single
    quote. Plain numbers (``-3.00``, ``+1.50``) stay numbers."""
    if not isinstance(value, str):
        return value
    if value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def _write_csv(path: Path, header: list[str], rows: list[list]) -> None:
    """UTF-8 with a BOM (so Excel shows accented names right), CRLF line ends as RFC 4180 says;
    every cell, the header's too, through :func:`safe_cell`."""
    with open(path, "w", newline="", encoding="utf-8-sig") as f:
        writer = csv.writer(f)
        writer.writerow([safe_cell(c) for c in header])
        writer.writerows([safe_cell(c) for c in row] for row in rows)


def short_column(function: str, taken: set[str]) -> str:
    """A short ASCII column name for a function's points: ``softmax``, ``sdpa``, ``softmax_sdpa``.

    Identifiers longer than 20 characters become their initials (scaled_dot_product_attention
    -> sdpa, a CamelCase name -> its capitals); the legend file gives the full name.
    """
    parts = []
    for ident in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", function):
        if ident.lower() in ("and", "or", "with"):
            continue
        if len(ident) > 20:
            words = [w for w in ident.split("_") if w] if "_" in ident else re.findall(r"[A-Z][a-z0-9]*", ident)
            ident = "".join(w[0] for w in words).lower() if len(words) > 1 else ident[:20]
        parts.append(ident)
    name = "_".join(parts)[:40] or "other"
    base, n = name, 2
    while name in taken or name in ("total", "late", "flags", "notes", "name", "email", "student_id", "submission"):
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def _parse_time(text: str) -> datetime | None:
    """Gradescope's ``2026-11-01 10:00:00.000000000 -08:00`` (nanoseconds) or ISO 8601."""
    text = (text or "").strip()
    if not text:
        return None
    text = re.sub(r"(\.\d{6})\d+", r"\1", text)  # Python reads at most microseconds
    text = re.sub(r"\s+([+-]\d\d:?\d\d)$", r"\1", text).replace("Z", "+00:00")
    try:
        moment = datetime.fromisoformat(text.replace(" ", "T", 1))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


@dataclass
class GradebookEntry:
    """One student's row: the submission chosen for them and what else they submitted."""

    key: str
    person: dict
    sub: Submission
    others: list[Submission]


def gradebook_entries(subs: list[Submission]) -> list[GradebookEntry]:
    """One entry per student (a group submission gives one per member), sorted by name.

    A student with several submissions gets the latest (by submission time, then by
    submission id), as Gradescope's active submission is by default; the others are noted.
    """
    from .report import people

    by_student: dict[str, list[tuple[dict, Submission]]] = {}
    for s in subs:
        for key, person in people(s):
            by_student.setdefault(key, []).append((person, s))

    def recency(item: tuple[dict, Submission]) -> tuple:
        moment = _parse_time(item[1].created_at)
        digits = re.sub(r"\D", "", item[1].sid)
        return (moment is not None, moment or datetime.min.replace(tzinfo=timezone.utc), int(digits or 0), item[1].sid)

    entries = []
    for key, items in by_student.items():
        items.sort(key=recency)
        person, chosen = items[-1]
        entries.append(GradebookEntry(key, person, chosen, [s for _, s in items[:-1]]))
    entries.sort(key=lambda e: ((e.person.get("name") or e.sub.name or e.key).casefold(), e.key))
    return entries


def mark_superseded(subs: list[Submission]) -> None:
    """Set ``superseded_by`` on each submission that counts for none of its students."""
    from .report import student_keys

    counting = {e.key: e.sub.sid for e in gradebook_entries(subs)}
    for s in subs:
        later = {counting[k] for k in student_keys(s)} - {s.sid}
        s.superseded_by = ", ".join(sorted(later)) if len(later) == len(set(student_keys(s))) else ""


MEAN_DEFINITION = "latest submission each"  # said once, wherever a class mean is shown


@dataclass(frozen=True)
class ClassMean:
    """The class mean: per student, the latest submission (a group's score counts for each member),
    as ``gradebook.csv`` has one row per student; an ungraded submission counts 0 there and here."""

    mean: float
    students: int

    def __str__(self) -> str:
        return f"mean {self.mean:.1f} over {self.students} student{'s' if self.students != 1 else ''}, {MEAN_DEFINITION}"


def student_scores(subs: list[Submission], documents: dict[str, dict]) -> dict[str, float]:
    """{student: the score of the submission that counts for them} (the gradebook's rows)."""
    return {e.key: float(documents.get(e.sub.sid, {}).get("score", 0) or 0) for e in gradebook_entries(subs)}


def class_mean(subs: list[Submission], documents: dict[str, dict]) -> ClassMean:
    """The one class mean every output states (the CLI, the dashboard, the gradebook's rows)."""
    scores = list(student_scores(subs, documents).values())
    return ClassMean(sum(scores) / len(scores) if scores else 0.0, len(scores))


@dataclass(frozen=True)
class RegradeSummary:
    """What a regrade changed for grades: students whose counting submission changed (a group's
    members each), and, apart, superseded or vanished submissions that count for nobody."""

    up: int  # students whose grade went up
    down: int
    submissions: int  # counting submissions that changed
    not_counting: int  # changed submissions that count for no student (superseded, or gone from the export)

    @property
    def students(self) -> int:
        return self.up + self.down

    def __str__(self) -> str:
        who = "1 student's grade" if self.students == 1 else f"{self.students} students' grades"
        text = f"{who} changed ({self.up} up, {self.down} down) in {self.submissions} submission{'s' if self.submissions != 1 else ''}"
        if self.not_counting:
            text += f"; {self.not_counting} superseded or removed submission(s) changed too (no student's grade)"
        return text


def annotate_regrade(diff: list[dict], subs: list[Submission]) -> RegradeSummary:
    """Mark each changed submission with ``counts`` (does it set a student's grade?) and ``students``
    (whose), and count students, not submissions. Run after :func:`mark_superseded`."""
    from .report import student_keys

    by_sid = {s.sid: s for s in subs}
    counting = {e.key: e.sub.sid for e in gradebook_entries(subs)}
    up: set[str] = set()
    down: set[str] = set()
    submissions = not_counting = 0
    for d in diff:
        sub = by_sid.get(d["sid"])
        d["students"] = [k for k in student_keys(sub) if counting.get(k) == sub.sid] if sub is not None else []
        d["counts"] = bool(d["students"])
        d["why_not"] = "" if d["counts"] else (f"superseded by {sub.superseded_by}" if sub else "not in this export")
        if not d["counts"]:
            not_counting += 1
            continue
        submissions += 1
        (up if d["change"] > 0 else down).update(d["students"])
    return RegradeSummary(len(up), len(down), submissions, not_counting)


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


def write_gradebooks(
    out: Path, assignment: Assignment, subs: list[Submission], documents: dict[str, dict], canvas_column: str = ""
) -> list[Path]:
    """Write gradebook.csv, gradebook_tests.csv, gradebook_legend.csv and canvas.csv into ``out``."""
    from .report import cohort_tests, function_of, submission_flags

    tests = cohort_tests(documents)
    taken: set[str] = set()
    functions: dict[str, str] = {}  # function -> column
    for t in tests:
        if t.function not in functions:
            functions[t.function] = short_column(t.function, taken)
    test_columns = {t.name: f"t{i:02d}" for i, t in enumerate(tests, start=1)}
    entries = gradebook_entries(subs)

    legend = [["total", _number(assignment.total_points), "", "the whole assignment"]]
    for function, column in functions.items():
        members = [t for t in tests if t.function == function]
        legend.append([column, _number(sum(t.max_score for t in members)), "", f"{function}: all its tests"])
    legend += [[test_columns[t.name], _number(t.max_score), t.key, t.name] for t in tests]
    _write_csv(out / "gradebook_legend.csv", ["column", "max_points", "test_key", "full_name"], legend)

    header = ["student_id", "name", "email", "submission", "submitted_at", "late", "total", *functions.values(), "flags", "notes"]
    rows, test_rows, canvas_rows = [], [], []
    for e in entries:
        doc = documents.get(e.sub.sid, {})
        per_function = dict.fromkeys(functions, 0.0)
        per_test = {}
        for t in doc.get("tests") or []:
            per_function[function_of(t["name"])] = per_function.get(function_of(t["name"]), 0.0) + float(t["score"])
            per_test[t["name"]] = float(t["score"])
        total = float(doc.get("score", 0) or 0)
        flags = [f for f, _ in submission_flags(doc)] if doc else ["grader-error"]
        notes = [n for n in e.sub.notes if "also has submission" not in n]  # said below, once
        if e.others:
            notes.append(
                "latest of several submissions; also "
                + ", ".join(f"{o.sid} ({_number(documents.get(o.sid, {}).get('score', 0) or 0)})" for o in e.others)
            )
        late = "" if e.sub.late is None else ("yes" if e.sub.late else "no")
        student_id, name, email = e.person.get("sid", ""), e.person.get("name", ""), e.person.get("email", "")
        rows.append(
            [
                student_id,
                name,
                email,
                e.sub.sid,
                e.sub.created_at,
                late,
                _number(total),
                *[_number(per_function[f]) for f in functions],
                " ".join(flags),
                "; ".join(n.replace("\n", " ") for n in notes),
            ]
        )
        test_rows.append(
            [student_id, name, email, e.sub.sid, _number(total), *[_number(per_test.get(t.name, 0.0)) for t in tests]]
        )
        canvas_rows.append([name, "", student_id, email, "", _number(total)])
    _write_csv(out / "gradebook.csv", header, rows)
    _write_csv(
        out / "gradebook_tests.csv",
        ["student_id", "name", "email", "submission", "total", *test_columns.values()],
        test_rows,
    )
    # Canvas's gradebook import matches a row by ID (Canvas's own user id, which Gradescope's
    # export does not hold), else SIS User ID, else SIS Login ID; a column it does not know
    # becomes a new assignment. See the README for what this relies on.
    _write_csv(
        out / "canvas.csv",
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", canvas_column or assignment.title],
        canvas_rows,
    )
    return [out / n for n in ("gradebook.csv", "gradebook_tests.csv", "gradebook_legend.csv", "canvas.csv")]


def write_regrade_diff(path: Path, subs: list[Submission], diff: list[dict]) -> None:
    """regrade_diff.csv: one row per submission whose score changed, the tests that changed in one cell,
    and whether it sets a student's grade (``counts``: "yes", or "no: superseded by ...")."""
    by_sid = {s.sid: s for s in subs}
    rows = []
    for d in diff:
        s = by_sid.get(d["sid"])

        def points(value: float | None) -> str:
            return "" if value is None else _number(value)

        tests = "; ".join(f"{name}: {points(a) or '-'} -> {points(b) or '-'}" for name, a, b in d["tests"])
        counts = "yes" if d.get("counts", True) else f"no: {d.get('why_not', '')}"
        rows.append(
            [
                d["sid"],
                s.student_id if s else "",
                s.name if s else "",
                points(d["old"]),
                points(d["new"]),
                f"{d['change']:+.2f}",
                len(d["tests"]),
                tests,
                counts,
            ]
        )
    _write_csv(
        path,
        ["submission", "student_id", "name", "old_total", "new_total", "change", "tests_changed", "tests", "counts"],
        rows,
    )


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
        from .report import regrade_diff

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
