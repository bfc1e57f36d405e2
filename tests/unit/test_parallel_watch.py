"""grade-all's watch over its grader processes (autograder/pool/parallel.py): a grading stuck where no timer
of its own can reach it (one C call, as the notebook reader's quadratic pattern was: 90 s for one line of 300,000
spaces, the red team's) is stopped, and the classmates after it in the same process are graded by a new one."""

from __future__ import annotations

import argparse
import json
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
    document = json.loads((tmp_path / "b-stuck.json").read_text())  # the reason, where the placeholder was
    assert document["score"] == 0 and document["extra_data"]["kind"] == "stopped"
    assert "Grading was stopped" in document["output"] and "course staff" in document["output"]
    assert not (tmp_path / "a.json").exists()  # only the stuck job's results are written by the watch
    full = {"score": 7, "tests": [], "extra_data": {"kind": "graded"}}
    (tmp_path / "done.json").write_text(json.dumps(full))
    parallel._mark_stopped(tmp_path / "done.json", 9)  # results written in full before a process stuck are kept
    assert json.loads((tmp_path / "done.json").read_text()) == full


def test_grade_all_keeps_a_stopped_grading_and_flags_it(tmp_path, monkeypatch, capsys):
    """A grading the watch stopped is not waited for again by the next grade-all (it would wait the watch's
    time again, every run); it is a timeout on the dashboard, and --force regrades it."""
    from autograder.cohort import batch, flags
    from autograder.grading.results import failure_document, write_results

    results = tmp_path / "results"
    write_results(results / "s1.json", failure_document(parallel.STOPPED.format(seconds=9), kind="stopped"))
    graded = []
    monkeypatch.setattr(batch, "parallel_grade", lambda assignment, jobs, *a, **k: graded.extend(j[0] for j in jobs))
    subs = [types.SimpleNamespace(sid="s1", path=tmp_path / "s1")]
    documents = batch._grade(types.SimpleNamespace(name="attention"), subs, tmp_path, argparse.Namespace(force=False, jobs=1))
    assert graded == [] and documents["s1"]["extra_data"]["kind"] == "stopped"
    assert "stopped stuck by an earlier run (s1)" in capsys.readouterr().out
    assert dict(flags.submission_flags(documents["s1"]))["timeout"].startswith("Grading was stopped")
    batch._grade(types.SimpleNamespace(name="attention"), subs, tmp_path, argparse.Namespace(force=True, jobs=1))
    assert graded == [tmp_path / "s1"]
