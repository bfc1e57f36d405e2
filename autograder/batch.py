"""Grade a whole class: ``python -m autograder grade-all <assignment> <folder> --out <dir>``.

Accepts Gradescope's "Export Submissions" folder (``submission_metadata.yml``
plus one ``submission_<id>/`` folder each) or a plain folder of files, zips or
folders (one per student, named by the student). Each submission is graded by
the normal isolated grader in its own process, several at once; results
already on disk are kept unless ``--force`` (so an interrupted run resumes).
Writes ``results/<id>.json``, ``gradebook.csv`` and ``report.html``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import threading
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .config import KIT_ROOT, Assignment, load_assignment


@dataclass
class Submission:
    sid: str  # the key of this submission (Gradescope id or file stem)
    path: Path
    name: str = ""
    student_id: str = ""
    email: str = ""
    created_at: str = ""
    notes: list[str] = field(default_factory=list)


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
                    notes=[] if (folder / str(key)).exists() else ["listed in submission_metadata.yml but its folder is missing"],
                )
            )
        return subs
    subs = [Submission(sid=p.stem if p.is_file() else p.name, path=p) for p in entries if p.is_dir() or p.is_file()]
    return [s for s in subs if s.path.name != "submission_metadata.yml"]


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
                with zipfile.ZipFile(path) as zf:
                    return any(Path(n).name.lower() == filename.lower() for n in zf.namelist())
            except (zipfile.BadZipFile, OSError):
                return False
        return path.suffix == ".py"
    return any(p.name.lower() == filename.lower() or p.suffix == ".zip" for p in path.rglob("*"))


_next_slot = 0
_slots_lock = threading.Lock()


def _reserve_slots(n: int) -> int:
    """The first of ``n`` worker-user slots no other grading in this process is using."""
    global _next_slot
    with _slots_lock:  # the release grades two assignments at once
        first, _next_slot = _next_slot, _next_slot + n
    return first


def parallel_grade(assignment: Assignment, jobs: list[tuple], processes: int = 0, on_done=None) -> None:
    """Grade (upload, results[, {"only": test keys}]) jobs with ``processes`` grader processes (``grade-many``) at once.

    Each grader process has its own worker user slot (``KIT_WORKER_SLOT``), so
    students graded at the same time cannot signal each other's workers.
    """
    processes = max(1, min(processes or os.cpu_count() or 2, len(jobs)))
    chunks = [jobs[i::processes] for i in range(processes)]
    first = _reserve_slots(processes)

    def run(index: int, chunk: list[tuple]) -> None:
        slot = first + index
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump([[str(u), str(r), *rest] for u, r, *rest in chunk], f)
        env = dict(os.environ, KIT_WORKER_SLOT=str(slot))
        proc = subprocess.Popen(
            [sys.executable, "-m", "autograder", "grade-many", assignment.name, f.name],
            cwd=KIT_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        for line in proc.stdout:
            if on_done and ": " in line and not line.startswith((".", "F")):
                on_done(line.rsplit(": ", 1)[0])
        proc.wait()
        os.unlink(f.name)

    with ThreadPoolExecutor(max_workers=processes) as pool:
        for future in [pool.submit(run, i, chunk) for i, chunk in enumerate(chunks) if chunk]:
            future.result()


def write_gradebook(path: Path, subs: list[Submission], documents: dict[str, dict]) -> None:
    tests: list[str] = []
    for doc in documents.values():
        for t in doc.get("tests", []):
            if t["name"] not in tests:
                tests.append(t["name"])
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["submission", "name", "student_id", "email", "total", *tests, "notes"])
        for s in subs:
            doc = documents.get(s.sid, {})
            by_name = {t["name"]: t["score"] for t in doc.get("tests", [])}
            writer.writerow(
                [
                    s.sid,
                    s.name,
                    s.student_id,
                    s.email,
                    doc.get("score", ""),
                    *[by_name.get(t, "") for t in tests],
                    "; ".join(s.notes),
                ]
            )


def main(args: argparse.Namespace) -> int:
    assignment = load_assignment(args.assignment)
    out = Path(args.out)
    try:
        subs = find_submissions(Path(args.folder))
        if not subs:
            raise BatchError(f"{args.folder} holds no submissions (it is empty).")
        if not any(_contains_file(s.path, assignment.submit_file) for s in subs if s.path.exists()):
            raise BatchError(
                f"none of the {len(subs)} submissions contains {assignment.submit_file} (or a .py or .zip file): "
                f"is {args.folder} the export of another assignment?"
            )
    except BatchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for warning in check_duplicates(subs):
        print(f"warning: {warning}", file=sys.stderr)
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
    try:
        from tqdm import tqdm

        progress = tqdm(total=len(todo), unit="submission", desc=f"grading {assignment.name}")
    except ImportError:  # pragma: no cover - tqdm is in requirements-dev
        progress = None
    parallel_grade(
        assignment,
        [(s.path, out / "results" / f"{s.sid}.json") for s in todo],
        jobs,
        on_done=(lambda _upload: progress.update(1)) if progress else None,
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
    write_gradebook(out / "gradebook.csv", subs, documents)
    from .report import write_report

    write_report(out / "report.html", assignment, subs, documents)
    scores = [float(d.get("score", 0)) for d in documents.values()]
    print(
        f"graded {len(subs)} submissions; mean {sum(scores) / len(scores):.1f}; wrote {out}/gradebook.csv and {out}/report.html"
    )
    return 0
