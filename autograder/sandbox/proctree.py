"""Finding, measuring and killing every process student code started, and what it left behind.

Processes are seen thread by thread: a thread group counts while any of its tasks runs, so a
leader that ended with the bare ``exit`` system call (a zombie while its other threads run on) is
still found, counted against the process cap, its memory read from a live thread and its CPU time
from the whole group. This scan of /proc is how the kit counts processes, memory and CPU time
(``isolation.accounting_mechanism()`` says "process scan"): it uses no cgroup.

As root each worker has its own user, so "the student's processes" are simply that user's: they are
killed from a short-lived helper that takes the student's uid and sends SIGKILL to every process it
may signal (``kill(-1)``), first whatever /proc shows, then again until the kernel finds nothing
left to signal or no task of the user runs, which also stops a process that keeps forking to change
its pid. Without root (same uid as the grader) the grader is the child subreaper: the worker's tree
and its re-parented orphans are frozen (SIGSTOP, so they cannot fork on) and then killed, again
until none is left.

What the student's user wrote where any user may write is counted per user (:class:`FileCount`:
only its own entries, walked a slice of time at a time) and removed afterwards
(:func:`remove_user_files`: a budget per folder); its System V IPC objects likewise.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import stat
import time

import psutil

log = logging.getLogger("autograder.sandbox")

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


# -- processes, seen thread by thread -----------------------------------------------------------

_ENDED = ("Z", "X", "x")  # zombie, dead: a task that runs no more
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


def _stat_fields(path: str) -> list[str] | None:
    """The fields of a /proc stat file after the command name (which may hold spaces and parentheses):
    [0] is the state, [11] to [14] utime, stime, cutime, cstime."""
    text = _read(path)
    return text.rpartition(")")[2].split() if text else None


def live_tasks(pid: int) -> list[str]:
    """The /proc folders (``/proc/<pid>/task/<tid>``) of the tasks of the thread group ``pid`` that still run."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found = []
    for tid in tids:
        fields = _stat_fields(f"/proc/{pid}/task/{tid}/stat")
        if fields and fields[0] not in _ENDED:
            found.append(f"/proc/{pid}/task/{tid}")
    return found


def live_task(pid: int) -> str | None:
    """The /proc folder of a task of the thread group ``pid`` that still runs, None when none does.

    Usually the group's own folder. A leader that ended with the bare ``exit`` system call while its
    other threads run on is shown as a zombie, with no memory and no open files of its own: then a
    live thread's folder, which shows the memory they share."""
    fields = _stat_fields(f"/proc/{pid}/stat")
    if not fields:
        return None
    if fields[0] not in _ENDED:
        return f"/proc/{pid}"
    tasks = live_tasks(pid)
    return tasks[0] if tasks else None


def alive(pid: int) -> bool:
    """Does any task of the thread group ``pid`` still run? (A zombie leader with live threads does.)"""
    return live_task(pid) is not None


def running(p: psutil.Process) -> bool:
    try:
        return p.is_running() and alive(p.pid)
    except psutil.Error:
        return False


def _uids(status: str) -> tuple[int, ...]:
    for line in status.splitlines():
        if line.startswith("Uid:"):
            return tuple(int(x) for x in line.split()[1:4])  # real, effective, saved
    return ()


def user_pids(uid: int) -> list[int]:
    """Every thread group of ``uid`` (real, effective or saved uid) with a task that still runs,
    zombie leaders with live threads included (a whole zombie holds nothing and waits to be reaped)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        status = _read(f"/proc/{name}/status")
        if status and uid in _uids(status) and alive(int(name)):
            found.append(int(name))
    return found


def usage(pid: int) -> tuple[int, float]:
    """(resident bytes, CPU seconds) of the thread group ``pid``: the memory read from a task that
    still runs (a zombie leader shows none), the CPU of all its tasks, those that ended included,
    and of the children it has reaped. (0, 0.0) when the group has ended."""
    task = live_task(pid)
    fields = _stat_fields(f"/proc/{pid}/stat") if task else None  # the group's own line sums all its tasks
    statm = _read(f"{task}/statm") if task else None
    if not fields or not statm:
        return 0, 0.0
    try:
        cpu = sum(int(x) for x in fields[11:15]) / _TICK
        return int(statm.split()[1]) * _PAGE, cpu
    except (ValueError, IndexError):
        return 0, 0.0


def runnable(pid: int) -> bool:
    """Is any task of the thread group ``pid`` runnable right now?"""
    return any((_stat_fields(f"{task}/stat") or ["?"])[0] == "R" for task in live_tasks(pid))


def open_files(pids: list[int]):
    """(descriptor path, what it names) for every descriptor of every live task of ``pids``: threads
    may hold tables of their own (``unshare(CLONE_FILES)``), and a zombie leader holds none."""
    for pid in pids:
        for task in live_tasks(pid):
            try:
                names = os.listdir(f"{task}/fd")
            except OSError:
                continue
            for name in names:
                try:
                    yield f"{task}/fd/{name}", os.readlink(f"{task}/fd/{name}")
                except OSError:
                    continue


def _kill_all_as(uid: int) -> bool | None:
    """``kill(-1, SIGKILL)`` from a short-lived child that has become ``uid``: every process the
    student may signal, whatever /proc shows. True when the kernel found one, False when it found
    none (ESRCH), None when the helper failed."""
    pid = os.fork()
    if pid == 0:  # the killer: become the student, then signal everything the student may signal
        code = 2
        try:
            os.setgroups([])
            os.setresuid(uid, uid, uid)
            try:
                os.kill(-1, signal.SIGKILL)
                code = 0
            except ProcessLookupError:
                code = 1
        finally:
            os._exit(code)
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return None
    return {0: True, 1: False}.get(os.waitstatus_to_exitcode(status))


def kill_user(uid: int, timeout: float = 10.0) -> bool:
    """Kill every process of ``uid`` (root only; never uid 0). True when none is left.

    Signals first, whatever /proc shows (a process may hide there), and again until the kernel finds
    nothing to signal or no task of the user still runs."""
    if uid == 0:
        raise ValueError("refusing to kill every process of root")
    deadline = time.monotonic() + timeout
    while True:
        found = _kill_all_as(uid)
        reap_children()
        if found is False:
            return True
        time.sleep(0.01)
        if not user_pids(uid):
            return True
        if time.monotonic() > deadline:
            return False


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
                    p.send_signal(sig)  # a zombie leader's pid still signals its live threads
                except psutil.Error:
                    pass
        psutil.wait_procs(procs, timeout=0.2)
        reap_children()
    return False


# -- files the student left where any user may write --------------------------------------------


class _Budget:
    """So many entries and so many seconds, whichever runs out first; taken one entry at a time."""

    def __init__(self, entries: int, seconds: float) -> None:
        self.entries, self.until = entries, time.monotonic() + seconds

    def take(self) -> bool:
        self.entries -= 1
        return self.entries >= 0 and time.monotonic() < self.until


def _listing(folder: str | int):
    """(entry, its lstat) for each entry of ``folder`` (a path, or an open folder's descriptor), read lazily (a
    huge folder is never held whole)."""
    try:
        listing = os.scandir(folder)
    except OSError:
        return
    with listing:
        try:
            for entry in listing:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                yield entry, info
        except OSError:
            return


def _world_writable_dir(info: os.stat_result) -> bool:
    return stat.S_ISDIR(info.st_mode) and bool(info.st_mode & 0o002)


# The clean-up reaches every entry through the descriptor of the folder that holds it, and opens a folder only
# as that folder (O_NOFOLLOW, and the same inode as listed): a path is never resolved again. Run as root beside
# other students' live workers, a clean-up that walked by path was led by a link, swapped in for a folder it
# had listed (a folder of the student's that another student may write in), into a folder of root's, and
# emptied it (the red team's race, tests/test_attacks_processes.py).
_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Folders open at once along one path (each holds two descriptors while it is listed: ~260 at most, sweep and tree).
# A student's tree deeper than this is moved up to its top and removed from there; other users' world-writable
# folders deeper than this are not looked into (logged).
MAX_OPEN_FOLDERS = 64


def _open_folder(name: str, info: os.stat_result | None, dir_fd: int) -> int | None:
    """A descriptor of the folder ``name`` in ``dir_fd``, never through a link, and the one listed as ``info``
    (when given); None if it is not."""
    try:
        fd = os.open(name, _FOLDER, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        found = os.fstat(fd)
    except OSError:
        found = None
    if found is None or (info is not None and (found.st_dev, found.st_ino) != (info.st_dev, info.st_ino)):
        os.close(fd)
        return None
    return fd


def remove_user_files(uid: int, max_entries: int = 250_000, seconds: float = 10.0) -> int:
    """Delete what ``uid`` left in the world-writable folders (root only). Returns the entries removed
    at the top of a folder (a folder of the student's counts once, with what is inside).

    The sticky bit on those folders means a student can only create entries at their top level, inside
    folders of their own, or inside another world-writable folder beneath (``/tmp/.X11-unix``): entries
    of ``uid`` are removed whole, and world-writable folders of other owners are looked into (never
    through a link). Each world-writable folder has a budget of its own, ``max_entries`` entries looked
    at or removed and ``seconds``, checked at every entry (inside the student's folders too), so a
    folder filled with entries cannot leave the others uncleaned; what a budget leaves is logged and
    removed by the next clean-up (the next worker's, or the next grader's start-up)."""
    removed = 0
    for top in world_writable_folders():
        budget = _Budget(max_entries, seconds)
        try:  # a fixed folder of the system's (it may be a link, as /var/lock is), beneath it no link is followed
            fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            removed += _sweep(fd, uid, budget, depth=1)
        finally:
            os.close(fd)
        if budget.entries < 0 or time.monotonic() >= budget.until:
            log.warning("clean-up of %s stopped at its budget: some files of uid %d are left for the next one", top, uid)
    return removed


def _sweep(fd: int, uid: int, budget: _Budget, depth: int) -> int:
    """Remove the entries of ``uid`` in the open folder ``fd``; look into the world-writable folders of others."""
    removed = 0
    for entry, info in _listing(fd):
        if not budget.take():
            break
        if info.st_uid == uid:
            removed += _remove_entry(fd, entry.name, info, budget)
        elif _world_writable_dir(info) and depth >= MAX_OPEN_FOLDERS:
            log.warning("clean-up: world-writable folders nested over %d deep: files of uid %d in them are left", depth, uid)
        elif _world_writable_dir(info):
            inner = _open_folder(entry.name, info, fd)
            if inner is not None:
                try:
                    removed += _sweep(inner, uid, budget, depth + 1)
                finally:
                    os.close(inner)
    return removed


def _remove_entry(dir_fd: int, name: str, info: os.stat_result, budget: _Budget) -> int:
    if stat.S_ISDIR(info.st_mode):
        return int(_remove_tree(dir_fd, name, budget, info))
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        return 0
    return 1


def _remove_tree(dir_fd: int, name: str, budget: _Budget, info: os.stat_result | None = None) -> bool:
    """Remove the folder ``name`` of the open folder ``dir_fd`` with everything inside, one entry at a time
    against ``budget``; True when it is gone. At most ``MAX_OPEN_FOLDERS`` folders are open, however deep the
    tree (a deeper folder is moved up to the tree's top, and emptied from there); what cannot be removed is
    skipped, never tried forever."""
    top = _open_folder(name, info, dir_fd)
    if top is None:
        return False
    try:
        while budget.take():  # again while a pass removes something: the folders it moved up
            left, removed = _empty(top, top, budget, depth=1)
            if not left or not removed:
                break
    finally:
        os.close(top)
    try:
        os.rmdir(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def _empty(fd: int, top: int, budget: _Budget, depth: int) -> tuple[bool, int]:
    """Empty the open folder ``fd`` of the tree ``top``: (whether something is left, how many entries went)."""
    left, removed = False, 0
    for entry, info in _listing(fd):
        if not budget.take():
            return True, removed
        try:
            if not stat.S_ISDIR(info.st_mode):
                os.unlink(entry.name, dir_fd=fd)
            elif depth >= MAX_OPEN_FOLDERS:  # moved up, by names in open folders only
                os.rename(entry.name, f".kit-up-{info.st_ino}", src_dir_fd=fd, dst_dir_fd=top)
                left = True
            else:
                inner = _open_folder(entry.name, info, fd)
                if inner is None:
                    left = True
                    continue
                try:
                    inner_left, inner_removed = _empty(inner, top, budget, depth + 1)
                finally:
                    os.close(inner)
                removed += inner_removed
                if inner_left:
                    left = True
                    continue
                os.rmdir(entry.name, dir_fd=fd)
            removed += 1
        except FileNotFoundError:
            pass
        except OSError:
            left = True
    return left, removed


def _xattr_bytes(path: str) -> int:
    """Bytes in the extended attributes of ``path`` (names and values): memory on tmpfs that no file
    size or free-space figure shows."""
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:
        return 0
    total = 0
    for name in names:
        try:
            total += len(name) + len(os.getxattr(path, name, follow_symlinks=False))
        except OSError:
            continue
    return total


class _Tally:
    """One pass of a :class:`FileCount`: bytes per filesystem (each file once) and the entries counted."""

    def __init__(self) -> None:
        self.used: dict[int, int] = {}
        self.entries = 0
        self._seen: set[tuple[int, int]] = set()

    def add(self, path: str, info: os.stat_result) -> None:
        self.entries += 1
        if (info.st_dev, info.st_ino) not in self._seen:
            self._seen.add((info.st_dev, info.st_ino))
            self.used[info.st_dev] = self.used.get(info.st_dev, 0) + info.st_blocks * 512 + _xattr_bytes(path)

    def add_open_deleted(self, pids: list[int]) -> None:
        """Files the processes ``pids`` wrote, keep open and deleted: on no folder's listing any more."""
        for path, target in open_files(pids):
            if not target.endswith(" (deleted)") or target.startswith("/memfd:"):  # memfds: held memory
                continue
            try:
                info = os.stat(path)
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in self._seen:
                self._seen.add((info.st_dev, info.st_ino))
                self.used[info.st_dev] = self.used.get(info.st_dev, 0) + info.st_blocks * 512


class FileCount:
    """What one user has written where any user may write, counted a slice of time at a time.

    A pass lists the world-writable ``folders``, walks the user's own entries there whole and looks
    into world-writable folders of other owners, then walks the ``roots`` (the worker's scratch
    folder). Only entries the user owns count: their bytes on each filesystem (extended attributes
    included) and their number. A pass resumes where the last slice stopped, so a machine whose shared
    folders hold many entries of other owners makes the count later, never larger, and never the
    student's fault; what other users write or delete changes nothing. :meth:`used` and
    :meth:`entries` are the larger of the last complete pass and the one under way."""

    def __init__(self, uid: int, roots: list[str], folders: list[str]) -> None:
        self.uid, self.roots, self.folders = uid, list(roots), list(folders)
        self._done = _Tally()
        self._tally = _Tally()
        self._walk = None
        self._before = _Tally()  # what the user owned before the count began (:meth:`settle`)

    def settle(self, seconds: float) -> None:
        """Count what the user already owns, before its worker runs, and count only what is added to it from
        now on. A slot user is shared by the students one grader grades in turn: what a student's clean-up
        could not remove in its budget (a folder of 700,000 files) was counted as the next student's, who was
        stopped for "more than 100000 files and folders". A pass cut short by ``seconds`` settles on what it saw."""
        until = time.monotonic() + seconds
        while not self.step([], max(0.0, until - time.monotonic())) and time.monotonic() < until:
            pass
        self.close()
        before = self._done if self._done.entries >= self._tally.entries else self._tally
        self._before = _Tally()
        self._before.used, self._before.entries = before.used, before.entries  # not the files' identities
        self._done, self._tally = _Tally(), _Tally()

    def step(self, pids: list[int], seconds: float) -> bool:
        """Walk on for at most ``seconds``; True when a pass ended (then the next step starts another)."""
        if self._walk is None:
            self._tally = _Tally()
            self._walk = self._pass(self._tally)
        until = time.monotonic() + seconds
        for _ in self._walk:
            if time.monotonic() >= until:
                return False
        self._tally.add_open_deleted(pids)
        self._done, self._walk = self._tally, None
        return True

    def used(self) -> dict[int, int]:
        merged = dict(self._done.used)
        for dev, n in self._tally.used.items():
            merged[dev] = max(merged.get(dev, 0), n)
        return {dev: max(0, n - self._before.used.get(dev, 0)) for dev, n in merged.items()}

    def entries(self) -> int:
        return max(0, max(self._done.entries, self._tally.entries) - self._before.entries)

    def close(self) -> None:
        if self._walk is not None:
            self._walk.close()  # closes the folders it holds open
            self._walk = None

    def _pass(self, tally: _Tally):
        pending = list(self.folders)
        while pending:
            for entry, info in _listing(pending.pop()):
                yield
                if info.st_uid == self.uid:
                    tally.add(entry.path, info)
                    if stat.S_ISDIR(info.st_mode):
                        yield from self._tree(entry.path, tally)
                elif _world_writable_dir(info):
                    pending.append(entry.path)
        for root in self.roots:
            yield from self._tree(root, tally)

    def _tree(self, top: str, tally: _Tally):
        """The user's entries under ``top`` (not ``top`` itself), in its folders and in world-writable ones."""
        pending = [top]
        while pending:
            for entry, info in _listing(pending.pop()):
                yield
                if info.st_uid == self.uid:
                    tally.add(entry.path, info)
                if stat.S_ISDIR(info.st_mode) and (info.st_uid == self.uid or info.st_mode & 0o002):
                    pending.append(entry.path)


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
    for path, target in open_files(pids):
        if not target.startswith("/memfd:"):
            continue
        try:
            info = os.stat(path)
        except OSError:
            continue
        if (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            total += info.st_blocks * 512
    return total


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
