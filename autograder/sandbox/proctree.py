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
import stat
import time
from pathlib import Path

import psutil

# Where any user may create files (the usual ones of a Linux machine or container); those that
# exist here and are world-writable are what :func:`world_writable_folders` returns.
WORLD_WRITABLE = (
    "/tmp",
    "/var/tmp",
    "/dev/shm",
    "/run/lock",
    "/var/lock",
    "/run/shm",
    "/dev/mqueue",
    "/var/crash",
    "/var/metrics",
)


def world_writable_folders() -> list[str]:
    """The folders of :data:`WORLD_WRITABLE` that exist and any user may write (real paths, once each)."""
    found: list[str] = []
    for folder in WORLD_WRITABLE:
        real = os.path.realpath(folder)
        try:
            info = os.stat(real)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002 and real not in found:
            found.append(real)
    return found


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


def remove_user_files(uid: int, max_entries: int = 100_000) -> int:
    """Delete what ``uid`` left in the world-writable folders (root only). Returns entries removed.

    The sticky bit on those folders means a student can only create entries at their top
    level, inside folders of their own, or inside another world-writable folder beneath
    (``/tmp/.X11-unix``): entries of ``uid`` are removed whole, and world-writable folders of
    other owners are looked into (never through a link).
    """
    removed = 0
    pending = list(world_writable_folders())
    seen = 0
    while pending and seen < max_entries:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                info = entry.stat(follow_symlinks=False)
                if info.st_uid != uid:
                    if stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002:
                        pending.append(entry.path)
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


# -- System V IPC and shared memory held by a user ---------------------------------------------

_IPC_RMID = 0


def _sysvipc(kind: str) -> list[dict[str, str]]:
    """The rows of /proc/sysvipc/<kind> (shm, sem, msg) of this IPC namespace."""
    try:
        with open(f"/proc/sysvipc/{kind}") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    if not lines:
        return []
    header = lines[0].split()
    return [dict(zip(header, line.split())) for line in lines[1:]]


def _owned_by(row: dict[str, str], uid: int) -> bool:
    return str(uid) in (row.get("uid"), row.get("cuid"))


def user_sysv_shm_bytes(uid: int) -> int:
    """Memory held by the System V shared-memory segments ``uid`` created or owns (resident and swapped)."""
    total = 0
    for row in _sysvipc("shm"):
        if _owned_by(row, uid):
            try:
                total += int(row.get("rss", row.get("size", 0))) + int(row.get("swap", 0))
            except ValueError:
                continue
    return total


def remove_user_ipc(uid: int) -> int:
    """Remove the System V segments, semaphore sets and message queues of ``uid`` (root only)."""
    if uid == 0:
        raise ValueError("refusing to remove root's IPC objects")
    libc = ctypes.CDLL(None, use_errno=True)
    removed = 0
    for kind, remove in (
        ("shm", lambda i: libc.shmctl(i, _IPC_RMID, None)),
        ("sem", lambda i: libc.semctl(i, 0, _IPC_RMID)),
        ("msg", lambda i: libc.msgctl(i, _IPC_RMID, None)),
    ):
        key = {"shm": "shmid", "sem": "semid", "msg": "msqid"}[kind]
        for row in _sysvipc(kind):
            if _owned_by(row, uid):
                try:
                    removed += remove(int(row[key])) == 0
                except (KeyError, ValueError):
                    continue
    return removed


def held_shared_memory(pids: list[int]) -> int:
    """Bytes in the memfds the processes hold open, each counted once. What a process maps is in
    its RSS already (``RssShmem``); a memfd that is only written to, not mapped, is in no RSS.
    (Files in /dev/shm and other memory-backed folders are counted by the space they take there.)"""
    seen: set[tuple[int, int]] = set()
    total = 0
    for pid in pids:
        base = f"/proc/{pid}/fd"
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            try:
                if not os.readlink(f"{base}/{name}").startswith("/memfd:"):
                    continue
                info = os.stat(f"{base}/{name}")
            except OSError:
                continue
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total


def user_files(uid: int, roots: list[str], pids: list[int], max_entries: int = 50_000) -> tuple[dict[int, int], bool]:
    """What ``uid`` has written where any user may write: {filesystem (st_dev): bytes}, and whether
    the count is complete (False past ``max_entries`` entries, which no honest submission creates).

    Counts the entries of ``uid`` in the world-writable folders (whole, with what is inside),
    looking into world-writable folders of other owners as :func:`remove_user_files` does, every
    file under ``roots`` (the worker's own scratch folder), and files the processes ``pids`` keep
    open after deleting them. Only the student's own files count, whatever else the machine
    writes meanwhile (a free-space difference would charge the student for other processes)."""
    used: dict[int, int] = {}
    seen: set[tuple[int, int]] = set()
    entries = 0

    def add(info: os.stat_result) -> None:
        if (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            used[info.st_dev] = used.get(info.st_dev, 0) + info.st_blocks * 512

    def whole(top: str) -> bool:
        nonlocal entries
        for folder, dirs, files in os.walk(top, followlinks=False):
            for name in dirs + files:
                entries += 1
                if entries > max_entries:
                    return False
                try:
                    add(os.lstat(os.path.join(folder, name)))
                except OSError:
                    continue
        return True

    pending = list(world_writable_folders())
    while pending:
        folder = pending.pop()
        try:
            listing = list(os.scandir(folder))
        except OSError:
            continue
        for entry in listing:
            entries += 1
            if entries > max_entries:
                return used, False
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_uid != uid:
                if stat.S_ISDIR(info.st_mode) and info.st_mode & 0o002:
                    pending.append(entry.path)
                continue
            add(info)
            if stat.S_ISDIR(info.st_mode) and not whole(entry.path):
                return used, False
    for root in roots:
        if not whole(root):
            return used, False
    for pid in pids:  # written, kept open, deleted: on no folder's listing any more
        base = f"/proc/{pid}/fd"
        try:
            names = os.listdir(base)
        except OSError:
            continue
        for name in names:
            try:
                target = os.readlink(f"{base}/{name}")
                if not target.endswith(" (deleted)") or target.startswith("/memfd:"):  # memfds: held memory
                    continue
                info = os.stat(f"{base}/{name}")
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                add(info)
    return used, True


def memory_filesystems(folders: list[str]) -> list[str]:
    """Those of ``folders`` whose files live in memory (tmpfs): what is written there is memory held."""
    mounts: list[tuple[str, str]] = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                mounts.append((left.split()[4], right.split()[0]))
    except (OSError, IndexError):
        return []
    found = []
    for folder in folders:
        under = [(point, kind) for point, kind in mounts if folder == point or folder.startswith(point.rstrip("/") + "/")]
        if under and sorted(under, key=lambda m: len(m[0]))[-1][1] in ("tmpfs", "ramfs"):  # the last mounted wins
            found.append(folder)
    return found
