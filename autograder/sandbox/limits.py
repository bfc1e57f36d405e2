"""The limits a worker runs under, and the ways a worker can be stopped.

One job: :class:`Limits` (address space, memory of all the student's processes with the
shared memory they hold, processes, file size, private tmpfs, disk and entries on it, kept output, CPU
priority; the defaults fit Gradescope's 768 MB, half-CPU box) and the exceptions a request
to the worker ends with when it does not answer normally: it died, ran out of time, went
over a limit, or broke the channel's protocol.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Resource limits for one worker. Defaults fit Gradescope's 768 MB, half-CPU box."""

    address_space_mb: int = 1400  # importing torch alone maps about 650 MB of address space
    rss_mb: int = 420  # all worker processes together, with the shared memory they hold; the grader takes about 250 MB
    max_processes: int = 8  # watched by the grader; RLIMIT_NPROC (per user) is only a backstop; nothing in a
    # contract starts a process (torch's own threads are threads, and one thread is set)
    nproc_backstop: int = 256
    file_size_mb: int = 32
    tmp_mb: int = 64  # the private /tmp (and 16 MB each for /var/tmp and /dev/shm), where available
    disk_mb: int = 256  # without a private /tmp: disk the worker may fill before it is stopped
    disk_entries: int = 100_000  # without a private /tmp: files and folders of its own it may create there
    output_bytes: int = 64 * 1024  # kept from what the student prints, per worker
    nice: int = 10  # the worker yields the CPU to the grader


class WorkerDied(Exception):
    """The worker exited or was killed while answering."""


class WorkerTimeout(Exception):
    """The worker did not answer before the deadline (and has been killed)."""


class WorkerMemory(Exception):
    """The worker used more memory, processes or disk than allowed (and has been killed)."""


class WorkerProtocol(Exception):
    """The worker sent what no honest worker sends (and has been killed)."""
