"""The watchdog: the worker's processes, memory and disk, counted while the grader waits for an answer.

One job: :class:`Watchdog`, the part of :class:`.worker.Worker` the channel calls between
reads (``_watch``, at most every 0.1 s). It stops the worker over its time limit (the student's
time, :mod:`.clock`: CPU time while runnable, wall time while asleep), over its process cap, over its
memory (the RSS of all its processes plus the shared memory they hold outside it: memfds,
System V segments, files in memory-backed folders) or over its disk budget (the student
user's own files, counted once a watched filesystem's free space shrinks), and finds every
process of the student (the slot user's, or the re-parented orphans without root).
"""

from __future__ import annotations

import logging
import os
import shutil
import time

import psutil

from . import proctree
from .limits import WorkerMemory, WorkerTimeout

log = logging.getLogger("autograder.sandbox")


class Watchdog:
    """Mixed into :class:`.worker.Worker`, whose ``__init__`` sets the counters read here."""

    def _watch(self) -> None:
        now = time.monotonic()
        if now - self._last_watch < 0.1:
            return
        self._last_watch = now
        procs = self._processes()
        if len(procs) > self.limits.max_processes:
            self.failure = WorkerMemory(f"started more than {self.limits.max_processes} processes")
            raise _Stop()
        rss = 0  # resident memory, mapped shared memory included (RssShmem is part of RSS)
        cpu = 0.0  # CPU seconds of every process, with those of the children each has reaped
        running = False  # the worker's main process is runnable (see clock.StudentClock)
        for p in procs:
            try:
                with p.oneshot():
                    rss += p.memory_info().rss
                    t = p.cpu_times()
                    cpu += t.user + t.system + t.children_user + t.children_system
                    if p.pid == self.pid:
                        running = p.status() == psutil.STATUS_RUNNING
            except psutil.Error:
                pass
        if self.clock is not None:
            self.clock.tick(now, cpu, running)
            if self.clock.expired():
                self.failure = WorkerTimeout()
                raise _Stop()
        if now - self._last_held >= 0.25:  # a few more reads: what is held outside every process's RSS
            self._last_held = now
            self._count_files([p.pid for p in procs])
            self._held = self._held_memory([p.pid for p in procs])
        if rss + self._held > self.limits.rss_mb * 1024 * 1024:
            self.failure = WorkerMemory(f"used more than {self.limits.rss_mb} MB of memory")
            log.info("memory limit: %s; %d MB held in shared memory", _describe_processes(procs), self._held >> 20)
            raise _Stop()
        on_disk = sum(n for dev, n in self._files.items() if dev not in self._memory_devices)
        if on_disk > self.limits.disk_mb * 1024 * 1024 or not self._files_complete:
            self.failure = WorkerMemory(f"wrote more than {self.limits.disk_mb} MB to disk")
            raise _Stop()

    def _count_files(self, pids: list[int]) -> None:
        """The student's own files where writes are not refused, counted once the free space of a
        watched filesystem has shrunk by 16 MB (by whoever: the count itself is the student's only)."""
        trigger = 16 * 1024 * 1024
        if not any(baseline - _free_bytes(path) > trigger for path, baseline in self._disk_baseline.items()):
            self._files, self._files_complete = {}, True
            return
        if self.user is None:  # the grader's own user: no way to tell the student's files apart
            self._files = {0: max(baseline - _free_bytes(path) for path, baseline in self._disk_baseline.items())}
            return
        scratch = [str(self._staging / "scratch")] if self._staging is not None else []
        self._files, self._files_complete = proctree.user_files(self.user.pw_uid, scratch, pids)

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

    def _processes(self) -> list[psutil.Process]:
        procs: dict[int, psutil.Process] = {}
        if self.pid is not None:
            try:
                root = psutil.Process(self.pid)
                procs[root.pid] = root
                for child in root.children(recursive=True):
                    procs[child.pid] = child
            except psutil.Error:
                pass
        if self.user is not None:  # as root, the slot's user is this worker's alone
            for p in proctree.user_processes(self.user.pw_uid):
                procs.setdefault(p.pid, p)
        else:  # orphans re-parented to us (the child subreaper)
            for child in psutil.Process().children(recursive=True):
                if child.pid not in self._foreign and (self.zygote is None or child.pid != self.zygote.proc.pid):
                    procs.setdefault(child.pid, child)
        return list(procs.values())


def _describe_processes(procs: list[psutil.Process]) -> str:
    parts = []
    for p in procs:
        try:
            parts.append(f"{p.pid} ({p.username()}, {p.memory_info().rss >> 20} MB, {' '.join(p.cmdline()[:3])[:80]})")
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
