"""Who student code runs as, and what that user may read.

On every path that runs student code (Gradescope, ``grade``, ``grade-all``, the
release self-check) the grader is usually root; the worker then runs as an
unprivileged user, one per concurrent grader (``kit-student``,
``kit-student-<slot>``), and :func:`protect_secrets` makes the reference, the
hidden tests, the catalogue, the built zips and the caches unreadable to it.
Without root there is no user switch; :func:`isolation_summary` says so.
"""

from __future__ import annotations

import fcntl
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..config import STUDENT_USER
from .proctree import user_pids

# Folders of a kit checkout that hold answers or grading secrets (relative to the kit root).
SECRET_FOLDERS = ("solutions", "assignments", "dist", "build", ".cache", ".bench", "tests")


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


MAX_SLOTS = 64
_held_slot: tuple[int, int] | None = None  # (slot, locked fd), held for this process's life


def reserve_slot() -> int:
    """A worker-user slot no other grader on this machine holds (a lock file per slot).

    Graders running at once (``grade`` twice, ``grade-all``'s processes, the self-check, the
    kit's tests under xdist) each get their own student user, so one grader's cleanup, which
    kills every process of its user, never touches another's worker.

    The locks live in one folder for the whole machine (``/run`` as root), not under ``TMPDIR``: two
    graders started with different ``TMPDIR`` used to take the same slot, and each killed or was
    charged with the other's worker. A slot whose user still runs processes is skipped as well (a
    grader that does not use these locks, or one in another mount namespace).
    """
    global _held_slot
    if _held_slot is not None:
        return _held_slot[0]
    folder = _slot_folder()
    for slot in range(MAX_SLOTS):
        fd = os.open(folder / f"{slot}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        if _user_busy(student_user_name(slot)):
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            continue
        _held_slot = (slot, fd)
        return slot
    raise RuntimeError(f"more than {MAX_SLOTS} graders are running on this machine at once")


def _slot_folder() -> Path:
    """The machine's one folder of slot locks: /run's as root (whatever TMPDIR says), else the temp folder's."""
    candidates = [Path("/run/kit-worker-slots")] if running_as_root() else []
    candidates.append(Path(tempfile.gettempdir()) / "kit-worker-slots")
    for folder in candidates:
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
            return folder
        except OSError:
            continue
    raise RuntimeError(f"cannot create the worker-slot lock folder {candidates[-1]}: make the temp folder writable")


def _user_busy(name: str) -> bool:
    """Does the slot's user (if it exists) run processes now? (As root only: without root no user is switched.)"""
    if not running_as_root():
        return False
    try:
        uid = pwd.getpwnam(name).pw_uid
    except KeyError:
        return False
    return bool(user_pids(uid))


def student_user_name(slot: int) -> str:
    """kit-student for the first grader, kit-student-<slot> for the others running at once."""
    return STUDENT_USER if slot == 0 else f"{STUDENT_USER}-{slot}"


def ensure_student_user() -> pwd.struct_passwd | None:
    """This grader's own unprivileged account for student code; None when we are not root."""
    if not running_as_root():
        return None
    return student_user(student_user_name(reserve_slot()))


def student_user(name: str) -> pwd.struct_passwd:
    """The system account ``name``, created (no home, no shell) when missing."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    for _ in range(10):  # useradd fails while another grader holds the passwd lock
        done = subprocess.run(
            [useradd, "--system", "--user-group", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
            check=False,
            capture_output=True,
        )
        if done.returncode in (0, 9):  # 9: already exists
            break
        time.sleep(0.3)
    return pwd.getpwnam(name)  # no fallback to a shared account such as nobody: slots must not share a user


def make_interpreter_reachable(python: str) -> list[str]:
    """Let the student user reach the interpreter: add traverse-only (o+x) bits where missing.

    Needed when Python lives under a private home (pyenv in /root): otherwise
    the unprivileged worker cannot even start. Only search permission is
    added, never read: folder listings stay private. Returns what was changed.
    """
    changed = []
    venv = Path(os.path.abspath(python)).parent.parent  # a venv's python links to its base: its site-packages too
    targets = {Path(os.path.realpath(python)), Path(os.path.realpath(sys.base_prefix)), Path(os.path.realpath(sys.prefix))}
    targets |= {Path(os.path.realpath(venv))} if (venv / "pyvenv.cfg").is_file() else set()
    for target in targets:
        for folder in [target, *target.parents] if target.is_dir() else list(target.parents):
            mode = folder.stat().st_mode
            if not mode & 0o001:
                folder.chmod(mode | 0o001)
                changed.append(str(folder))
    return changed


def protect_secrets(kit_root: Path, extra: tuple[Path, ...] = ()) -> list[str]:
    """Make the grader's secrets unreadable by any other user (root only; returns what changed).

    If the interpreter's environment lives outside the kit (Gradescope: /autograder/venv
    beside /autograder/source) the whole kit folder becomes 0700; otherwise (a checkout with
    .venv inside) each secret folder does, so the worker can still reach the interpreter.
    The worker never needs any of them: its runtime and the student's file are staged.
    """
    if not running_as_root():
        return []
    kit_root = Path(kit_root).resolve()
    # the workers' interpreter too (the grading environment in the checkout: release/grading_env.py)
    workers = Path(os.path.abspath(os.environ.get("KIT_GRADING_PYTHON") or sys.executable)).parent.parent
    prefixes = {Path(os.path.realpath(sys.prefix)), Path(os.path.realpath(workers))}
    inside = any(prefix == kit_root or kit_root in prefix.parents for prefix in prefixes)
    targets = [kit_root / name for name in SECRET_FOLDERS] if inside else [kit_root]
    changed = []
    for path in [*targets, *extra]:
        try:
            if path.is_dir() and not path.is_symlink() and path.stat().st_mode & 0o077:
                path.chmod(0o700)
                changed.append(str(path))
        except OSError:
            pass
    return changed
