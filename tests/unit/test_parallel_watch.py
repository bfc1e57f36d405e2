"""grade-all's watch over its grader processes (autograder/pool/parallel.py): a grading stuck where no timer
of its own can reach it (one C call, as the notebook reader's quadratic pattern was: 90 s for one line of 300,000
spaces, the red team's) is stopped, and the classmates after it in the same process are graded by a new one."""

from __future__ import annotations

import subprocess
import sys
import time
import types

from autograder.pool import parallel

FAKE_GRADER = r"""
import json, sys, time
for upload, results, *rest in json.load(open(sys.argv[-1])):
    if upload.endswith("-stuck"):
        time.sleep(3600)
    print("\n" + PREFIX + json.dumps({"event": "graded", "upload": upload, "score": 1}), flush=True)
"""


def test_a_stuck_grading_is_stopped_and_the_rest_graded(monkeypatch, tmp_path):
    real = subprocess.Popen

    def fake(command, **kwargs):  # the same process handling, another program: grade-many's jobs file is last
        source = FAKE_GRADER.replace("PREFIX", repr(parallel.EVENT_PREFIX))
        return real([sys.executable, "-c", source, command[-1]], **kwargs)

    monkeypatch.setattr(parallel.subprocess, "Popen", fake)
    monkeypatch.setattr(parallel, "JOB_WALL", 0.0)
    monkeypatch.setattr(parallel, "JOB_SLACK_S", 2.0)
    assignment = types.SimpleNamespace(name="attention", run_timeout=420.0)
    jobs = [(tmp_path / name, tmp_path / f"{name}.json") for name in ("a", "b-stuck", "c", "d")]
    seen = []
    started = time.monotonic()
    parallel.parallel_grade(assignment, jobs, processes=1, on_done=lambda e: seen.append(e["upload"]))
    assert time.monotonic() - started < 30
    assert [p.rsplit("/", 1)[-1] for p in seen] == ["a", "c", "d"]
