"""Diagnosis as a phase of its own, in a process of its own.

One job: run the naming of catalogued mistakes after the suites have returned (every point is final by then)
in a forked child that shares the collected failures and the catalogue copy-on-write, under its own CPU, memory
and wall-clock limits, and bring back only the names per test, as data the grader checks. The replays' timer
signals, the grader state they set and undo and the patched torch all live and die in that child: whatever a
replay does, the grader's own process is untouched. If the child dies, runs out of time or memory, or sends
anything but the expected shape, the tests keep their points and their record says "diagnosis unavailable".
"""

from __future__ import annotations

import json
import logging
import os
import resource
import select
import signal
import sys
import time
import traceback
from typing import Callable

import psutil
import torch

from ..grading.record import DIAGNOSIS

log = logging.getLogger("autograder.diagnosis.phase")

# The child's own memory (what it does not share with the grader), far above a replay's needs (a grading's
# whole diagnosis, seq2seq's training replays included, stays under 150 MB), far below the container's 768 MB.
PRIVATE_MB = 400
ADDRESS_SPACE_MB = 2048  # new mappings on top of what the grader had mapped when the child was forked
MAX_ANSWER_BYTES = 4 * 2**20
POLL_SECONDS = 0.25


def run_phase(work: Callable[[], dict], cpu_seconds: float, wall_seconds: float) -> tuple[dict | None, str]:
    """``work()`` in a forked child; its JSON answer and "" or (None, why it has none)."""
    if wall_seconds <= 0.5:
        return None, "no time was left for it"
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        _child(work, read_end, write_end, cpu_seconds)
    os.close(write_end)
    try:
        raw, why = _collect(pid, read_end, wall_seconds)
    finally:
        os.close(read_end)
        _reap(pid)
    if raw is None:
        return None, why
    try:
        answer = json.loads(raw)
    except ValueError:
        return None, "its answer was not readable"
    return (answer, "") if isinstance(answer, dict) else (None, "its answer was not readable")


def _child(work: Callable[[], dict], read_end: int, write_end: int, cpu_seconds: float) -> None:
    status = 1
    try:
        os.close(read_end)
        # One thread: the grader's OpenMP pool did not survive the fork, and a parallel region of more than one
        # thread waits for it forever (the unpinned determinism run, 2 threads, hung every diagnosis)
        torch.set_num_threads(1)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the grader's own handler would run the grader's clean-up
        cpu = int(cpu_seconds) + 1
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        mapped = psutil.Process().memory_info().vms
        limit = mapped + ADDRESS_SPACE_MB * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        data = json.dumps(work()).encode()
        with os.fdopen(write_end, "wb") as out:
            out.write(data)
        status = 0
    except BaseException:  # noqa: BLE001 - the grader reads "unavailable"; the operator's log says why
        try:
            sys.stderr.write("[grader] diagnosis phase failed:\n" + traceback.format_exc())
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(status)  # no atexit, no pytest or worker clean-up: those are the grader's


def _collect(pid: int, read_end: int, wall_seconds: float) -> tuple[bytes | None, str]:
    deadline = time.monotonic() + wall_seconds
    chunks: list[bytes] = []
    size = 0
    child = _process(pid)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return None, f"it ran out of time ({wall_seconds:.0f} s)"
        ready, _, _ = select.select([read_end], [], [], min(POLL_SECONDS, left))
        if ready:
            chunk = os.read(read_end, 65536)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                return None, "its answer was too large"
            chunks.append(chunk)
        elif child is not None and _private_mb(child) > PRIVATE_MB:
            return None, f"it used more than {PRIVATE_MB} MB of memory"
    _, status = _wait(pid)
    if status != 0:
        return None, "it stopped with an error (the log says which)"
    return b"".join(chunks), ""


def _process(pid: int) -> psutil.Process | None:
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


def _private_mb(child: psutil.Process) -> float:
    """What the child holds that it does not share with the grader (copy-on-write pages it wrote are its own)."""
    try:
        return child.memory_full_info().uss / 2**20
    except psutil.Error:
        return 0.0


def _wait(pid: int) -> tuple[int, int]:
    try:
        waited, status = os.waitpid(pid, 0)
    except ChildProcessError:  # reaped elsewhere (the grader is a subreaper): its answer decides
        return pid, 0
    return waited, os.waitstatus_to_exitcode(status)


def _reap(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def valid_names(answer: dict, nodeids: set[str], known: set[str]) -> dict[str, tuple[str, list[str]]]:
    """The child's answer, kept only where it has the expected shape: {nodeid: (diagnosis, mistake ids)}, each
    nodeid one of this grading's tests, each diagnosis a known kind, each id a catalogued mistake."""
    kept = {}
    for nodeid, value in answer.items():
        if nodeid not in nodeids or not isinstance(value, list) or len(value) != 2:
            continue
        diagnosis, mistakes = value
        if diagnosis not in DIAGNOSIS or not isinstance(mistakes, list):
            continue
        if all(isinstance(m, str) and m in known for m in mistakes):
            kept[nodeid] = (diagnosis, list(mistakes))
    return kept


__all__ = ["run_phase", "valid_names"]
