"""The parallel grader: many uploads graded by several ``grade-many`` processes at once.

One job: split (upload, results[, options]) jobs over grader processes, each reserving its own
worker user, and follow their progress through structured events on their stdout
(:func:`progress_event`, :func:`parse_event`), never through their human output; :func:`grade_many` is
such a process (the internal ``grade-many`` command), in the kit's checkout. A catalogue grading runs
through it, so it is part of what the release's cache key hashes (release/catalogue_grading.py). ``grade-all``
and the release self-check grade through :func:`parallel_grade`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..config import KIT_ROOT, Assignment, load_assignment
from ..grading.results import failure_document, write_results

log = logging.getLogger(__name__)

# Progress comes from structured events the grading child prints on its stdout (one JSON
# object per line, after this prefix), never from its human output: pytest's dots and
# tracebacks share that stream.
EVENT_PREFIX = "@@autograder-event "


def progress_event(upload: str, score: float) -> str:
    """The line ``grade-many`` prints when a submission's results are written."""
    return EVENT_PREFIX + json.dumps({"event": "graded", "upload": str(upload), "score": score})


def parse_event(line: str) -> dict | None:
    """The event on ``line``, or None (anything else the child printed is ignored)."""
    at = line.find(EVENT_PREFIX)
    if at < 0:
        return None
    try:
        event = json.loads(line[at + len(EVENT_PREFIX) :])
    except ValueError:
        return None
    return event if isinstance(event, dict) and event.get("event") == "graded" and "upload" in event else None


def parallel_grade(assignment: Assignment, jobs: list[tuple], processes: int = 0, on_done=None) -> None:
    """Grade (upload, results[, {"only": test keys}]) jobs with ``processes`` grader processes (``grade-many``) at once.

    Each grader process reserves its own worker user (``sandbox/users.py: reserve_slot``), so
    students graded at the same time cannot signal or read each other's workers.
    ``on_done(event)`` is called once per job graded (``{"upload", "score"}``).
    """
    processes = max(1, min(processes or os.cpu_count() or 2, len(jobs)))
    chunks = [jobs[i::processes] for i in range(processes)]
    reported: set[str] = set()
    lock = threading.Lock()

    def run(index: int, chunk: list[tuple]) -> None:
        while chunk:  # a grader process stopped by the watch is started again for the jobs it had not reached
            done = _run_grader(assignment, chunk, reported, lock, on_done)
            chunk = chunk[done + 1 :] if done < len(chunk) else []

    with ThreadPoolExecutor(max_workers=processes) as pool:
        for future in [pool.submit(run, i, chunk) for i, chunk in enumerate(chunks) if chunk]:
            future.result()


def _run_grader(assignment: Assignment, chunk: list[tuple], reported: set, lock: threading.Lock, on_done) -> int:
    """One ``grade-many`` process over ``chunk``; returns how many jobs it reported. A grading the process does
    not finish in ``JOB_WALL`` times its run limit (stuck in one C call that no timer of its own can interrupt,
    as a pathological regular expression once was) is stopped: that job's results say so (kind ``stopped``,
    which grade-all keeps rather than waiting for it again), and the caller starts another process for the rest,
    so no classmate waits behind it."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        # absolute: the process runs in the kit's checkout, not in the folder the paths were given from
        json.dump([[os.path.abspath(u), os.path.abspath(r), *map(_absolute_source, rest)] for u, r, *rest in chunk], f)
    expected = [os.path.abspath(u) for u, *_ in chunk]
    proc = subprocess.Popen(
        [sys.executable, "-m", "autograder", "grade-many", assignment.name, f.name],
        cwd=KIT_ROOT,
        env=dict(os.environ),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        errors="replace",
    )
    events: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [events.put(line) for line in proc.stdout] + [events.put(None)], daemon=True).start()
    count, limit = 0, assignment.run_timeout * BATCH_RUN_WALL * JOB_WALL + JOB_SLACK_S
    deadline = time.monotonic() + limit
    try:
        while True:
            try:
                line = events.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                stuck = expected[count] if count < len(expected) else "its last grading's end"
                log.warning("%s did not finish in %.0f s: its grader process is stopped", stuck, limit)
                _stop(proc)
                if count < len(chunk):
                    _mark_stopped(Path(chunk[count][1]), limit)
                return count
            if line is None:
                break
            event = parse_event(line)
            if event is None or event["upload"] not in expected:
                continue
            count = max(count, expected.index(event["upload"]) + 1)
            deadline = time.monotonic() + limit
            with lock:  # each job counts once, whatever is printed twice
                fresh = event["upload"] not in reported
                reported.add(event["upload"])
            if fresh and on_done:
                on_done(event)
        proc.wait()
        return len(chunk)
    except BaseException:  # Ctrl-C, or anything else: the grader (in a session of its own) must not outlive us
        _stop(proc)
        raise
    finally:
        os.unlink(f.name)


def _mark_stopped(results: Path, seconds: float) -> None:
    """The stuck grading's placeholder ("did not finish") becomes the reason, which grade-all keeps; results
    its grading wrote in full before the process stuck (nothing known does that) are left as they are."""
    try:
        finished = json.loads(results.read_text()).get("extra_data", {}).get("kind") != "unfinished"
    except (OSError, ValueError, AttributeError):
        finished = False
    if not finished:
        write_results(results, failure_document(STOPPED.format(seconds=seconds), kind="stopped"))


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM (the grader cleans up its workers), then SIGKILL after a grace (a grader stuck in one C call
    cannot run its handler; its workers are then killed by the next grader's start-up, which kills every
    process of its worker user). The grader stays in our process group: Ctrl-C reaches it as before."""
    try:
        proc.terminate()
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


STOPPED = (
    "Grading was stopped: it reported nothing for {seconds:.0f} s, far past its time limit (stuck in one long call "
    "that no timer reaches). This score of 0 stands until course staff regrade it (grade-all --force, or grade); "
    "contact them with your submission time."
)


def _absolute_source(option: object) -> object:
    """A job's options with grade-all's ``source`` (where the file graded is kept) made absolute, like its paths."""
    if isinstance(option, dict) and option.get("source"):
        return {**option, "source": os.path.abspath(option["source"])}
    return option


JOB_WALL = 1.5  # a grading's own run limit is run_timeout * BATCH_RUN_WALL; the watch waits half as long again
JOB_SLACK_S = 120.0  # plus start-up (torch's import) and the results' writing


# grade-all and the self-check grade several submissions at once on one machine, where a grading's
# wall time stretches with the others' load; no platform limit follows, so the whole-run limit
# (wall time) is this many times run_timeout there. Each request's limit is the student's time.
BATCH_RUN_WALL = 3.0


def grade_many(assignment: Assignment, jobs: list[tuple]) -> None:
    """Grade several submissions in this one process, forking each worker from a shared template.

    Saves the grader's and the worker's start-up (importing torch) for every
    submission after the first; each submission still gets a fresh worker.
    """
    from ..grading.grade import exit_on_terminate, grade_submission
    from ..sandbox import Zygote

    exit_on_terminate()
    zygote = Zygote(list(assignment.banned), trains=assignment.trains)
    try:
        for upload, results, *options in jobs:
            option = options[0] if options else {}
            only = option.get("only")  # the self-check's per-mistake selection
            exitfirst = bool(option.get("exitfirst"))  # make mutants: the first failure decides
            source = Path(option["source"]) if option.get("source") else None  # grade-all: where the file graded goes
            if source is not None:  # an earlier grading's copy is never taken for this one's
                source.unlink(missing_ok=True)
                source.parent.mkdir(parents=True, exist_ok=True)
            grade = grade_submission(
                assignment,
                upload,
                results,
                diagnose=not exitfirst,
                zygote=zygote,
                only=only,
                exitfirst=exitfirst,
                run_wall=BATCH_RUN_WALL,
                keep_source=source,
            )
            print(f"{upload}: {grade.score:g}", file=sys.stderr, flush=True)  # for a human reading the log
            print("\n" + progress_event(str(upload), grade.score), flush=True)
        log.info("%d of %d workers forked from the template", zygote.forks, len(jobs))
    finally:
        zygote.close()


def add_command(sub: Any) -> None:
    """``grade-many``: run by grade-all and the release only (a copy of the engine alone refuses it)."""
    p = sub.add_parser("grade-many", help="(internal) grade a JSON list of [upload, results] pairs in one process")
    p.add_argument("assignment")
    p.add_argument("jobs_file")
    p.set_defaults(func=_cmd_grade_many)


def _cmd_grade_many(args: argparse.Namespace) -> int:
    jobs = [(Path(job[0]), Path(job[1]), *job[2:]) for job in json.loads(Path(args.jobs_file).read_text())]
    grade_many(load_assignment(args.assignment), jobs)
    return 0
