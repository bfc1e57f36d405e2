"""`make venv` rebuilds by content, not by date (tools/venv_stamp.py): a fresh clone sharing a venv does not
reinstall it; a changed requirements file, or no venv at all, still builds it. Runs `make -n` (nothing is
installed) in throwaway checkouts with a throwaway venv folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest
from conftest import KIT

FILES = ("Makefile", "tools/venv_stamp.py", "requirements.txt", "requirements-dev.txt", "pyproject.toml")
INPUTS = ("requirements.txt", "requirements-dev.txt", "pyproject.toml")

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def checkout(folder, when: float):
    """A copy of the kit's build files, every one modified at ``when`` (a clone's files are all new)."""
    for name in FILES:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(KIT / name, folder / name)
        os.utime(folder / name, (when, when))
    return folder


def installed_venv(folder, inputs_from, stamp_text: str | None = None):
    """A venv folder as `make venv` leaves it (a bin/python and the stamp), made from ``inputs_from``'s files."""
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").write_text("")
    stamp = folder / ".installed"
    if stamp_text is None:
        script = [sys.executable, str(inputs_from / "tools/venv_stamp.py"), "write", str(stamp)]
        subprocess.run(script + [str(inputs_from / f) for f in INPUTS], check=True)
    else:
        stamp.write_text(stamp_text)
    return folder


def rebuilds(checkout_dir, venv) -> bool:
    """Whether `make venv` would run the install recipe (``make -n``: printed, not run)."""
    proc = subprocess.run(
        ["make", "-n", "venv", f"VENV={venv}", f"PYTHON={sys.executable}"], cwd=checkout_dir, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    return "-m venv" in proc.stdout


def test_a_fresh_clone_sharing_the_venv_does_not_reinstall(tmp_path):
    now = time.time()
    first = checkout((tmp_path / "first").resolve(), now - 3600)
    shared = installed_venv(tmp_path / "shared-venv", first)
    os.utime(shared / ".installed", (now - 1800, now - 1800))
    clone = checkout(tmp_path / "clone", now)  # every file newer than the stamp, the same content
    assert not rebuilds(clone, shared), "the same requirements: nothing to install"
    (clone / "requirements-dev.txt").write_text((clone / "requirements-dev.txt").read_text() + "\nrich==13.9.4\n")
    assert rebuilds(clone, shared), "a changed requirements file reinstalls"


def test_no_venv_is_built(tmp_path):
    clone = checkout(tmp_path / "clone", time.time())
    assert rebuilds(clone, tmp_path / "absent-venv")
    half = tmp_path / "half"
    (half).mkdir()
    (half / ".installed").write_text("")  # a stamp without an interpreter: not a venv
    assert rebuilds(clone, half)


def test_an_old_time_stamp_is_taken_over_when_it_is_newer_than_every_file(tmp_path):
    now = time.time()
    clone = checkout(tmp_path / "clone", now - 3600)
    old = installed_venv(tmp_path / "old", clone, stamp_text="")
    assert not rebuilds(clone, old), "the old rule said up to date: no reinstall on upgrading the Makefile"
    assert (old / ".installed").read_text().startswith("attention-kit venv stamp"), "and the stamp now holds the hash"
    older = installed_venv(tmp_path / "older", clone, stamp_text="")
    os.utime(older / ".installed", (now - 7200, now - 7200))
    assert rebuilds(clone, older), "a requirements file newer than an old stamp reinstalls, as before"
