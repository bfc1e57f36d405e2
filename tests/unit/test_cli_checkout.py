"""`attention-kit` works on the checkout it runs in (autograder/release/checkout.py): from inside another kit checkout
sharing the venv, that checkout's engine and assignments are used, and one line says so; `--kit-root` and
`KIT_ROOT` choose one explicitly; the platforms' entry points never switch."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import KIT

from autograder.release import checkout

# The engine imported from this kit, as the installed console script does (its folder is not the cwd).
INSTALLED = f"import sys; sys.path.insert(0, {str(KIT)!r}); from autograder.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.fixture(scope="module")
def other(tmp_path_factory) -> Path:
    """Another checkout (a clone, a course's fork) with an assignment this kit does not have."""
    root = tmp_path_factory.mktemp("other") / "course-kit"
    shutil.copytree(KIT / "autograder", root / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(
        KIT / "assignments" / "attention", root / "assignments" / "only_here", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(KIT / "solutions" / "attention", root / "solutions" / "only_here")
    shutil.copyfile(KIT / "course.toml", root / "course.toml")
    shutil.copyfile(KIT / "requirements.txt", root / "requirements.txt")
    (root / "notes").mkdir()
    return root


def run(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("KIT_ROOT", "PYTHONPATH")} | env
    return subprocess.run(
        [sys.executable, "-c", INSTALLED, *args], cwd=cwd, env=environ, capture_output=True, text=True, timeout=120
    )


def test_the_checkout_it_runs_in_is_graded_and_said(other):
    proc = run(other / "notes", "points", "only_here")  # a folder inside the other checkout
    assert proc.returncode == 0, proc.stderr
    assert "softmax" in proc.stdout or "hidden/" in proc.stdout, proc.stdout
    said = [line for line in proc.stderr.splitlines() if line.startswith("attention-kit: using the checkout")]
    assert said == [
        f"attention-kit: using the checkout {other.resolve()} (the current folder's; installed from {KIT.resolve()})"
    ], proc.stderr


def test_kit_root_overrides_the_current_folder(other, tmp_path):
    proc = run(other / "notes", "points", "only_here", KIT_ROOT=str(KIT))
    assert proc.returncode == 2 and "unknown assignment 'only_here'" in proc.stderr, proc.stderr
    proc = run(tmp_path, "--kit-root", str(other), "points", "only_here")
    assert proc.returncode == 0 and f"using the checkout {other.resolve()} (--kit-root" in proc.stderr, proc.stderr
    proc = run(tmp_path, "points", "attention", KIT_ROOT=str(tmp_path))
    assert proc.returncode == 2 and "is not a kit checkout" in proc.stderr, proc.stderr


def test_no_switch_in_the_installed_checkout_nor_for_the_platforms(other):
    assert checkout.switch_checkout(["points", "attention"], {}, KIT) == (["points", "attention"], None)
    assert checkout.switch_checkout(["--kit-root", str(KIT), "points"], {}, other) == (["points"], None)
    assert checkout.switch_checkout(["gradescope"], {"KIT_ROOT": str(other)}, other) == (["gradescope"], None)
    assert checkout.enclosing_checkout(other / "notes") == other and checkout.enclosing_checkout(Path("/")) is None
