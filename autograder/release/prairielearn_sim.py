"""A simulated PrairieLearn grading job of a ``dist/<a>/prairielearn/`` folder (no Docker needed).

Lays out a grade root as PrairieLearn's grader host assembles ``/grade`` (``tests/`` from the
question, the ``serverFilesCourse`` entries info.json names, ``student/`` with the upload,
``data/data.json``; no ``results/``, which the entrypoint must create), runs info.json's
entrypoint as PrairieLearn does (made executable, run directly) with ``PL_GRADE_ROOT`` pointing
at it and the grading environment's ``python3`` first on ``PATH``, and returns the parsed
``results.json``. Used by the release self-check and the kit's tests.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .grading_env import GRADING_PYTHON

GRADE = "/grade/"  # where PrairieLearn mounts the job; info.json's entrypoint is under it


def lay_out(tree: Path, name: str, submission: dict[str, bytes], root: Path) -> Path:
    """The grade root of one job of question ``name`` at ``root``; returns the entrypoint's path in it."""
    question = Path(tree) / "questions" / name
    options = json.loads((question / "info.json").read_text())["externalGradingOptions"]
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)
    if (question / "tests").is_dir():
        shutil.copytree(question / "tests", root / "tests")
    for entry in options.get("serverFilesCourse", []):
        source = Path(tree) / "serverFilesCourse" / entry.rstrip("/")
        shutil.copytree(source, root / "serverFilesCourse" / entry.rstrip("/"))
    (root / "student").mkdir()
    files = []
    for rel, data in submission.items():
        (root / "student" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "student" / rel).write_bytes(data)
        files.append({"name": rel, "contents": base64.b64encode(data).decode()})
    (root / "data").mkdir()
    data = {"params": {}, "correct_answers": {}, "submitted_answers": {"_files": files}, "format_errors": {}}
    (root / "data" / "data.json").write_text(json.dumps(data))
    entrypoint = options["entrypoint"]
    if not entrypoint.startswith(GRADE):
        raise ValueError(f"the entrypoint {entrypoint!r} is not under {GRADE}")
    return root / entrypoint[len(GRADE) :]


def environment(root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", GRADING_PYTHON)}
    env["PL_GRADE_ROOT"] = str(root)
    # the grading environment's python3 first: the packages requirements.txt installs, as on the platform
    env["PATH"] = str(Path(os.environ.get(GRADING_PYTHON) or sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(extra or {})
    return env


def run(
    root: Path, entrypoint: Path, timeout: float = 900, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run the entrypoint as PrairieLearn does: ``chmod +x`` it, then run it from the grade root."""
    entrypoint.chmod(0o755)
    return subprocess.run(
        [str(entrypoint)], cwd=root, env=environment(root, extra_env), capture_output=True, text=True, timeout=timeout
    )


def simulate(tree: Path, name: str, submission: dict[str, bytes], extra_env: dict[str, str] | None = None) -> dict:
    """Grade ``submission`` ({file name: bytes}) with the question ``name`` of ``tree``; the parsed results.

    Raises if the entrypoint exits with a status other than 0 (PrairieLearn would then read no
    results) or leaves no results file."""
    root = Path(tempfile.mkdtemp(prefix="kit-prairielearn-"))
    try:
        proc = run(root, lay_out(Path(tree), name, submission, root), extra_env=extra_env)
        path = root / "results" / "results.json"
        if proc.returncode != 0 or not path.is_file():
            raise RuntimeError(f"the entrypoint exited {proc.returncode} (results: {path.is_file()}):\n{proc.stderr[-2000:]}")
        if path.stat().st_size > 1024 * 1024:
            raise RuntimeError(f"results.json is {path.stat().st_size} bytes, over PrairieLearn's 1 MB")
        return json.loads(path.read_text())
    finally:
        shutil.rmtree(root, ignore_errors=True)


__all__ = ["environment", "lay_out", "run", "simulate"]
