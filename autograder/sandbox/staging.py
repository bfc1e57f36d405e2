"""The folder a worker reads its code from: private to that worker's user.

It holds the worker runtime (``_kit_worker``), the student's file and the
assignment's worker helpers. As root it belongs to root with the student
user's private group (0750 / 0640), so exactly one worker user can read it and
none can write it; graders running at once (one user per slot) cannot read
each other's students. Without root it is the grader's own 0700 folder.
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import tempfile
from pathlib import Path

WORKER_PACKAGE = Path(__file__).resolve().parent.parent / "worker"


def _private_group(user: pwd.struct_passwd) -> bool:
    try:
        group = grp.getgrgid(user.pw_gid)
    except KeyError:
        return False
    others = [p.pw_name for p in pwd.getpwall() if p.pw_gid == user.pw_gid and p.pw_name != user.pw_name]
    return group.gr_name == user.pw_name and not others and not [m for m in group.gr_mem if m != user.pw_name]


def make_staging(user: pwd.struct_passwd | None, files: dict[str, Path], runtime: bool = False) -> Path:
    """A fresh folder with the given files (read only by ``user``), optionally the runtime, and
    ``scratch/`` (the worker's home and temporary folder when it has no private /tmp)."""
    staging = Path(tempfile.mkdtemp(prefix="kit-stage-"))
    if runtime:
        shutil.copytree(WORKER_PACKAGE, staging / "_kit_worker", ignore=shutil.ignore_patterns("__pycache__"))
    for name, source in files.items():
        shutil.copyfile(source, staging / name, follow_symlinks=False)
    scratch = staging / "scratch"
    scratch.mkdir()
    if user is None:
        for path in [staging, *staging.rglob("*")]:
            path.chmod(0o700 if path.is_dir() else 0o600)
        return staging
    if _private_group(user):
        for path in [staging, *staging.rglob("*")]:
            os.chown(path, 0, user.pw_gid)
            path.chmod(0o750 if path.is_dir() else 0o640)
    else:  # no private group: owned by the user itself, read-only
        for path in [staging, *staging.rglob("*")]:
            os.chown(path, user.pw_uid, user.pw_gid)
            path.chmod(0o500 if path.is_dir() else 0o400)
    os.chown(scratch, user.pw_uid, user.pw_gid)
    scratch.chmod(0o700)
    return staging


def remove_staging(staging: Path | None) -> None:
    if staging is None:
        return
    for path in [staging, *staging.rglob("*")] if staging.exists() else []:
        try:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o700)
        except OSError:
            pass
    shutil.rmtree(staging, ignore_errors=True)
