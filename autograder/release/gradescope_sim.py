"""A simulated Gradescope run of an autograder.zip (no Docker needed).

Lays out ``AUTOGRADER_ROOT`` as Gradescope does (``source/``, ``submission/``,
``results/``, ``run_autograder`` at the root), runs
``AUTOGRADER_SKIP_INSTALL=1 bash setup.sh`` and then ``run_autograder`` with
the grading environment's ``python3`` first on ``PATH``, and returns the parsed
``results.json``. Used by the release self-check and the kit's tests.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from .grading_env import GRADING_PYTHON


def lay_out(zip_path: Path, submission: dict[str, bytes], root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)
    source = root / "source"
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            target = source / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))
            mode = (info.external_attr >> 16) & 0o777
            target.chmod(mode or 0o644)
    shutil.copy2(source / "run_autograder", root / "run_autograder")
    (root / "run_autograder").chmod(0o755)
    sub = root / "submission"
    sub.mkdir()
    for rel, data in submission.items():
        (sub / rel).parent.mkdir(parents=True, exist_ok=True)
        (sub / rel).write_bytes(data)
    (root / "results").mkdir()


def environment(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", GRADING_PYTHON)}
    env["AUTOGRADER_ROOT"] = str(root)
    env["AUTOGRADER_SKIP_INSTALL"] = "1"
    # the grading environment's python3 first: the packages requirements.txt installs, as on the platform
    env["PATH"] = str(Path(os.environ.get(GRADING_PYTHON) or sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def run(root: Path, timeout: float = 900) -> tuple[subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """setup.sh, then run_autograder (as Gradescope: the image is built, then each submission graded)."""
    env = environment(root)
    setup = subprocess.run(
        ["bash", str(root / "source" / "setup.sh")], cwd=root / "source", env=env, capture_output=True, text=True, timeout=600
    )
    if setup.returncode != 0:
        raise RuntimeError(f"setup.sh failed:\n{setup.stdout[-2000:]}\n{setup.stderr[-2000:]}")
    return setup, run_autograder(root, timeout)


def run_autograder(root: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    """Grade the tree's submission with run_autograder (setup.sh already ran for this tree or its original)."""
    env = environment(root)
    return subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True, timeout=timeout)


def simulate(zip_path: Path, submission: dict[str, bytes]) -> dict:
    root = Path(tempfile.mkdtemp(prefix="kit-gradescope-"))
    try:
        lay_out(Path(zip_path), submission, root)
        run(root)
        return json.loads((root / "results" / "results.json").read_text())
    finally:
        shutil.rmtree(root, ignore_errors=True)


__all__ = ["lay_out", "run", "run_autograder", "simulate"]
