"""Finding and killing every process student code started, and what it left on disk.

As root each worker has its own user, so "the student's processes" are simply
that user's processes: they are killed from a short-lived helper that takes the
student's uid and sends SIGKILL to every process it may signal (``kill(-1)``),
repeated until none is left, which also stops a process that keeps forking to
change its pid. Without root (same uid as the grader) the grader is the child
subreaper: the worker's tree and its re-parented orphans are frozen (SIGSTOP,
so they cannot fork on) and then killed, again until none is left.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import time
from pathlib import Path

import psutil

WORLD_WRITABLE = ("/tmp", "/var/tmp", "/dev/shm")


def become_subreaper() -> None:
    """Orphaned grandchildren of the worker are re-parented to us, so we can find and kill them."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


def reap_children() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def running(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def user_processes(uid: int) -> list[psutil.Process]:
    """Every live process whose real or effective uid is ``uid``."""
    found = []
    for p in psutil.process_iter(["uids", "status"]):
        try:
            uids = p.info["uids"]
            if uids and uid in (uids.real, uids.effective) and p.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(p)
        except psutil.Error:
            continue
    return found


def kill_user(uid: int, timeout: float = 10.0) -> bool:
    """Kill every process of ``uid`` (root only; never uid 0). True when none is left."""
    if uid == 0:
        raise ValueError("refusing to kill every process of root")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not user_processes(uid):
            return True
        pid = os.fork()
        if pid == 0:  # the killer: become the student, then signal everything the student may signal
            try:
                os.setgroups([])
                os.setresuid(uid, uid, uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)
        reap_children()
        time.sleep(0.02)
    return not user_processes(uid)


def kill_tree(procs: list[psutil.Process], timeout: float = 10.0, find_more=None) -> bool:
    """Freeze, then kill, ``procs`` and whatever ``find_more()`` finds, until nothing is left."""
    deadline = time.monotonic() + timeout
    me = os.getpid()
    while time.monotonic() < deadline:
        if find_more is not None:
            seen = {p.pid for p in procs}
            procs = procs + [p for p in find_more() if p.pid not in seen]
        procs = [p for p in procs if p.pid != me and running(p)]
        if not procs:
            return True
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for p in procs:
                try:
                    p.send_signal(sig)
                except psutil.Error:
                    pass
        psutil.wait_procs(procs, timeout=0.2)
        reap_children()
    return False


def remove_user_files(uid: int) -> int:
    """Delete what ``uid`` left in the world-writable folders (root only). Returns entries removed.

    The sticky bit on those folders means a student can only create entries at their top
    level or inside folders of their own, so the top level is all that needs looking at.
    """
    removed = 0
    for folder in WORLD_WRITABLE:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                path = Path(entry.path)
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    path.unlink(missing_ok=True)
                removed += 1
            except OSError:
                continue
    return removed
