"""The watchdog: the worker's processes, memory and disk, counted while the grader waits for an answer.

One job: :class:`Watchdog`, the part of :class:`.worker.Worker` the channel calls between
reads (``_watch``, at most every 0.1 s). It ends a request whose worker process has ended (its
children may keep its pipes open), and stops the worker over its time limit (the student's
time, :mod:`.clock`: CPU time while runnable, wall time while asleep), over its process cap, over its
memory (the RSS of all its processes plus the shared memory they hold outside it: memfds,
System V segments, files in memory-backed folders) or over its disk budget, and finds every
process of the student (the slot user's, or the re-parented orphans without root), thread by
thread (:mod:`.proctree`: a zombie leader whose threads run on is counted, with their memory and
CPU time). As root, disk is the student user's own entries where writes are not refused, counted a
slice of time at a time (:class:`.proctree.FileCount`): what other users write, delete or keep there
never counts, nor makes the count fail.
"""

from __future__ import annotations

import logging
import os
import shutil
import time

import psutil

from . import proctree
from .limits import WorkerDied, WorkerMemory, WorkerTimeout

log = logging.getLogger("autograder.sandbox")

SETTLE_S = 10.0  # at most this long, before a worker runs, counting what its user already owns (FileCount.settle)
FILE_SLICE_S = 0.03  # the longest the grader walks the shared folders per look (every 0.25 s at most)


class Watchdog:
    """Mixed into :class:`.worker.Worker`, whose ``__init__`` sets the counters read here."""

    def _watch(self) -> None:
        now = time.monotonic()
        if now - self._last_watch < 0.1:
            return
        self._last_watch = now
        if self.pid is not None and not proctree.alive(self.pid):  # however many of its children hold its pipes open
            self.failure = WorkerDied("the process stopped while answering (sys.exit, os._exit or a crash in your code?)")
            raise _Stop()
        pids = self._processes()
        if len(pids) > self.limits.max_processes:
            self.failure = WorkerMemory(f"started more than {self.limits.max_processes} processes")
            raise _Stop()
        rss = 0  # resident memory, mapped shared memory included (RssShmem is part of RSS)
        cpu = 0.0  # CPU seconds of every process (all its threads), with those of the children each has reaped
        for pid in pids:
            resident, seconds = proctree.usage(pid)
            rss += resident
            cpu += seconds
        if self.clock is not None:
            self.clock.tick(now, cpu, self.pid is not None and proctree.runnable(self.pid))
            if self.clock.expired():
                self.failure = WorkerTimeout()
                raise _Stop()
        if now - self._last_held >= 0.25:  # a few more reads: what is held outside every process's RSS
            self._last_held = now
            self._count_files(pids)
            self._held = self._held_memory(pids)
        self._check_memory_and_disk(pids, rss)

    def _check_memory_and_disk(self, pids: list[int], rss: int) -> None:
        if rss + self._held > self.limits.rss_mb * 1024 * 1024:
            self.failure = WorkerMemory(f"used more than {self.limits.rss_mb} MB of memory")
            log.info("memory limit: %s; %d MB held in shared memory", _describe_processes(pids), self._held >> 20)
            raise _Stop()
        on_disk = sum(n for dev, n in self._files.items() if dev not in self._memory_devices)
        if on_disk > self.limits.disk_mb * 1024 * 1024:
            self.failure = WorkerMemory(f"wrote more than {self.limits.disk_mb} MB to disk")
            raise _Stop()
        if self._file_entries > self.limits.disk_entries:
            self.failure = WorkerMemory(f"created more than {self.limits.disk_entries} files and folders")
            raise _Stop()

    def _start_watching_disk(self, namespaces: bool) -> None:
        """Called by ``Worker.start`` where the worker may write to the machine's disks (no read-only mounts)."""
        folders = proctree.world_writable_folders()
        scratch = [str(self._staging / "scratch")] if self._staging is not None else []
        if self.user is not None:  # with namespaces the world-writable folders are private tmpfs: the scratch is left
            self._file_count = proctree.FileCount(self.user.pw_uid, scratch, [] if namespaces else folders)
            if not namespaces:  # what an earlier student's clean-up left (past its budget) goes now, or is not this one's
                proctree.remove_user_files(self.user.pw_uid)
                self._file_count.settle(SETTLE_S)
        else:  # the grader's own user: its files cannot be told apart, only the free space tells
            watched = [str(self._staging)] if namespaces else _one_per_filesystem([str(self._staging), *folders])
            self._disk_baseline = {p: _free_bytes(p) for p in watched}
        if not namespaces:
            self._memory_devices = {os.stat(p).st_dev for p in proctree.memory_filesystems(folders)}

    def _count_files(self, pids: list[int]) -> None:
        """As root: the student user's own entries, walked on for a slice of time. Without root (no user
        of its own): the free space lost by a watched filesystem, once over 16 MB."""
        if self._file_count is not None:
            self._file_count.step(pids, FILE_SLICE_S)
            self._files, self._file_entries = self._file_count.used(), self._file_count.entries()
            return
        lost = max((baseline - _free_bytes(path) for path, baseline in self._disk_baseline.items()), default=0)
        self._files = {0: lost} if lost > 16 * 1024 * 1024 else {}

    def _held_memory(self, pids: list[int]) -> int:
        """Shared memory the student holds that no RSS shows: memfds kept open without being mapped,
        the student user's System V segments, and files in world-writable folders that live in
        memory (the worker's private tmpfs with namespaces, else the machine's /dev/shm...)."""
        held = proctree.held_shared_memory(pids)
        if self.user is not None:
            held += proctree.user_sysv_shm_bytes(self.user.pw_uid)
        for folder, size_mb in self._private_tmpfs.items():
            try:
                info = os.statvfs(f"/proc/{self.pid}/root{folder}")
            except OSError:
                continue
            # Only the worker's own size-limited tmpfs counts. Until the worker has mounted it (just after
            # the fork), or where mounting it failed, this path is the machine's folder: its use is not the
            # student's (counting it stopped honest code "holding tens of GB" on a loaded machine).
            if info.f_blocks * info.f_frsize <= (size_mb + 1) * 1024 * 1024:
                held += (info.f_blocks - info.f_bfree) * info.f_frsize
        held += sum(n for dev, n in self._files.items() if dev in self._memory_devices)
        return held

    def _processes(self) -> list[int]:
        """The pids of the student's live thread groups: the worker, and the slot user's (as root) or
        the worker's descendants and the orphans re-parented to us (without root)."""
        pids = [self.pid] if self.pid is not None and proctree.alive(self.pid) else []
        if self.user is not None:  # as root, the slot's user is this worker's alone
            return pids + [pid for pid in proctree.user_pids(self.user.pw_uid) if pid != self.pid]
        found: list[psutil.Process] = []
        try:
            found += psutil.Process(self.pid).children(recursive=True) if self.pid is not None else []
        except psutil.Error:
            pass
        for child in psutil.Process().children(recursive=True):  # orphans re-parented to us (the child subreaper)
            if child.pid not in self._foreign and (self.zygote is None or child.pid != self.zygote.proc.pid):
                found.append(child)
        for pid in dict.fromkeys(p.pid for p in found):
            if pid not in pids and proctree.alive(pid):
                pids.append(pid)
        return pids

    def _process_objects(self) -> list[psutil.Process]:
        found = []
        for pid in self._processes():
            try:
                found.append(psutil.Process(pid))
            except psutil.Error:
                continue
        return found


def _describe_processes(pids: list[int]) -> str:
    parts = []
    for pid in pids:
        try:
            p = psutil.Process(pid)
            parts.append(f"{pid} ({p.username()}, {proctree.usage(pid)[0] >> 20} MB, {' '.join(p.cmdline()[:3])[:80]})")
        except psutil.Error:
            continue
    return "; ".join(parts)


class _Stop(Exception):
    """Raised by the watchdog inside the channel's wait loop."""


def _one_per_filesystem(paths: list[str]) -> list[str]:
    chosen: dict[int, str] = {}
    for path in paths:
        try:
            chosen.setdefault(os.stat(path).st_dev, path)
        except OSError:
            continue
    return list(chosen.values())


def _free_bytes(path: str) -> int:
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return 0
