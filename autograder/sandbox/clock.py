"""The student's time: a time limit that means the same on an idle and on a loaded machine.

One job: :class:`StudentClock`, what a request to the worker is charged. A limit in wall-clock
seconds is not a fact about the student's code: the same correct training loop takes 20 s on an
idle core and 90 s beside three other gradings (the self-check grades in parallel; Gradescope gives
half a CPU; a CI machine runs other jobs), so it passed on one machine and timed out on another.
The clock therefore charges

* while the worker is runnable (any of its threads): the CPU time its processes got (all of them,
  its children and threads included, and processes whose leader has exited while their threads run
  on: load the student makes is the student's);
* while it sleeps (waits, blocks, a ``time.sleep`` hang): the wall time.

Time spent runnable but waiting for a CPU that someone else holds is not charged. Nothing here
trusts the worker: the counts come from ``/proc`` as the grader reads them. A wall-clock backstop,
:data:`WALL_ALLOWANCE` times the limit, ends a request whatever the accounting says (a process that
sleeps and spins in turn to look runnable is charged at least its CPU time, and at most gets that much
longer).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

WALL_ALLOWANCE = 6.0  # a request ends after this many times its limit in wall time, whatever the load


@dataclass(frozen=True)
class TimeLimit:
    """One request's limit: ``seconds`` of the student's time, and the wall-clock moment
    (``time.monotonic()``) no request runs past."""

    seconds: float
    wall: float

    @classmethod
    def starting_now(cls, seconds: float, wall_cap: float = math.inf) -> "TimeLimit":
        backstop = time.monotonic() + seconds * WALL_ALLOWANCE if math.isfinite(seconds) else math.inf
        return cls(max(0.0, seconds), min(backstop, wall_cap))


class StudentClock:
    """The student's time used by one request, updated by the watchdog's samples."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.used = 0.0
        self._wall = time.monotonic()
        self._cpu: float | None = None  # the processes' CPU seconds at the last sample

    def tick(self, now: float, cpu: float, running: bool) -> None:
        """A sample: the wall clock, the CPU seconds of all the student's processes, and whether a
        thread of the worker's main process is runnable right now."""
        wall = max(0.0, now - self._wall)
        if self._cpu is None:  # the first sample of the request: no CPU baseline yet, charge the wall
            self.used += wall
        else:
            spent = max(0.0, cpu - self._cpu)  # a process that exited takes its count with it: never negative
            self.used += spent if running else max(wall, spent)
        self._wall, self._cpu = now, cpu

    def expired(self) -> bool:
        return self.used >= self.limit
