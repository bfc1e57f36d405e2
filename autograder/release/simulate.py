"""``attention-kit simulate gradescope|prairielearn <assignment> <upload>``: grade one upload as the platform would.

One job: the command. It takes the released package (``dist/<a>/autograder.zip`` or ``dist/<a>/prairielearn/``),
lays out the platform's tree in a temporary folder (:mod:`.gradescope_sim`, :mod:`.prairielearn_sim`), runs the
platform's own entry point there with the grading environment's Python first on ``PATH`` (the packages
``requirements.txt`` installs, nothing else: :mod:`.grading_env`), prints the score and each test, and copies the
platform's results file to ``--results``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ..config import KIT_ROOT, ConfigError, load_assignment
from . import gradescope_sim, prairielearn_sim
from .grading_env import grading_python_for_children

MAX_UPLOAD_FILES = 200


def upload_files(upload: Path) -> dict[str, bytes]:
    """{name: bytes} as the platform receives them: a file as itself (a zip stays a zip), a folder's files by
    their path inside it."""
    if upload.is_file():
        return {upload.name: upload.read_bytes()}
    files = {str(p.relative_to(upload)): p.read_bytes() for p in sorted(upload.rglob("*")) if p.is_file()}
    if not files:
        raise ConfigError(f"{upload} is an empty folder; pass the student's file, folder or zip.")
    if len(files) > MAX_UPLOAD_FILES:
        raise ConfigError(f"{upload} holds {len(files)} files; pass the student's upload, not a class's export.")
    return files


def _released(assignment: str, platform: str) -> Path:
    package = KIT_ROOT / "dist" / assignment / ("autograder.zip" if platform == "gradescope" else "prairielearn")
    if not package.exists():
        raise ConfigError(f"{package} does not exist: run `make release` (or `attention-kit release {assignment}`) first.")
    return package


def run_gradescope(assignment: str, files: dict[str, bytes], root: Path) -> tuple[dict, str]:
    gradescope_sim.lay_out(_released(assignment, "gradescope"), files, root)
    _, graded = gradescope_sim.run(root)
    results = root / "results" / "results.json"
    if not results.is_file():
        raise RuntimeError(f"run_autograder exited {graded.returncode} and wrote no results:\n{graded.stderr[-2000:]}")
    return json.loads(results.read_text()), graded.stderr


def run_prairielearn(assignment: str, files: dict[str, bytes], root: Path) -> tuple[dict, str]:
    entrypoint = prairielearn_sim.lay_out(_released(assignment, "prairielearn"), assignment, files, root)
    graded = prairielearn_sim.run(root, entrypoint)
    results = root / "results" / "results.json"
    if graded.returncode != 0 or not results.is_file():
        raise RuntimeError(
            f"the entrypoint exited {graded.returncode} (results written: {results.is_file()}):\n{graded.stderr[-2000:]}"
        )
    return json.loads(results.read_text()), graded.stderr


def summary(platform: str, document: dict) -> str:
    """The score and each test's points, as the platform's results file gives them."""
    if platform == "gradescope":
        rows = [(t.get("name", ""), t.get("score", 0), t.get("max_score", 0)) for t in document.get("tests", [])]
        total = f"score {document.get('score', 0):g}"
    else:
        rows = [(t.get("name", ""), t.get("points", 0), t.get("max_points", 0)) for t in document.get("tests", [])]
        total = f"score {100 * float(document.get('score', 0)):g} % (gradable: {document.get('gradable')})"
    width = min(max([len(r[0]) for r in rows] + [4]), 90)
    lines = [f"{name[:width]:<{width}}  {got:g}/{out_of:g}" for name, got, out_of in rows]
    message = str(document.get("output") or document.get("message") or "").strip()
    return "\n".join([*lines, "", total, *(["", message[:2000]] if message else [])])


def _cmd_simulate(args: argparse.Namespace) -> int:
    load_assignment(args.assignment)  # a misspelt assignment is told here, with the ones there are
    upload = Path(args.upload)
    if not upload.exists():
        raise ConfigError(f"{upload} does not exist; pass the student's file, folder or zip.")
    grading_python_for_children()
    root = Path(tempfile.mkdtemp(prefix=f"kit-{args.platform}-"))
    try:
        run = run_gradescope if args.platform == "gradescope" else run_prairielearn
        document, log = run(args.assignment, upload_files(upload), root)
        if args.verbose and log:
            print(log.rstrip())
        shutil.copyfile(root / "results" / "results.json", args.results)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(summary(args.platform, document))
    print(f"\n{args.platform}'s results file written to {args.results}")
    return 0


def add_command(sub: Any) -> None:
    p = sub.add_parser(
        "simulate",
        help="grade one upload as Gradescope or PrairieLearn would: the released package's tree and entry point, "
        "in the grading environment (the packages requirements.txt installs, nothing else)",
    )
    p.add_argument("platform", choices=["gradescope", "prairielearn"])
    p.add_argument("assignment")
    p.add_argument("upload", help="the student's file, folder or zip")
    p.add_argument("--results", default="results.json", help="where to copy the platform's results file (default ./results.json)")
    p.add_argument("--verbose", action="store_true", help="also print the grader's log (what the platform keeps for staff)")
    p.set_defaults(func=_cmd_simulate)
