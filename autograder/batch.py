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
import zipfile
from concurrent.futures import ThreadPoolExecutor, as_completed
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


def grade_one(assignment: Assignment, sub: Submission, results: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", assignment.name, str(sub.path), "--results", str(results)],
        cwd=KIT_ROOT,
        capture_output=True,
        text=True,
        timeout=assignment.run_timeout + 120,
    )
    if not results.is_file():
        raise BatchError(f"the grader wrote no results for {sub.sid}: {proc.stderr[-500:]}")
    return json.loads(results.read_text())


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
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(grade_one, assignment, s, out / "results" / f"{s.sid}.json"): s for s in todo}
        for future in as_completed(futures):
            s = futures[future]
            try:
                documents[s.sid] = future.result()
            except (BatchError, subprocess.TimeoutExpired) as exc:
                print(f"error grading {s.sid}: {exc}", file=sys.stderr)
                documents[s.sid] = {"score": 0, "tests": [], "output": str(exc)}
            if progress:
                progress.update(1)
    if progress:
        progress.close()
    write_gradebook(out / "gradebook.csv", subs, documents)
    from .report import write_report

    write_report(out / "report.html", assignment, subs, documents)
    scores = [float(d.get("score", 0)) for d in documents.values()]
    print(
        f"graded {len(subs)} submissions; mean {sum(scores) / len(scores):.1f}; wrote {out}/gradebook.csv and {out}/report.html"
    )
    return 0
