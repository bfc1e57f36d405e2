"""A crash costs the tests it crashed in (seam.CRASH_RETRIES): the crashed function runs again, in a fresh
worker, from the next test on; past the grading's budget of forgiven crashes, it is not run again. Timeouts,
memory and a broken channel are never retried. The seam's side only, with a worker that dies on one input."""

from __future__ import annotations

import pytest

from autograder.grading import seam
from autograder.sandbox import WorkerDied, WorkerMemory
from autograder.worker import wire


class _DyingWorker:
    """A worker whose ``f(n)`` answers ``n``, and dies on 0 (os._exit) or runs out of memory on -1."""

    started = 0

    def __init__(self, *args, **kwargs) -> None:
        self.output = None
        self.live = True
        type(self).started += 1

    def start(self) -> None:
        pass

    def alive(self) -> bool:
        return self.live

    def kill(self) -> None:
        self.live = False

    def request(self, message: dict, limit) -> dict:
        if message["op"] == "load":
            return {"ok": wire.encode({"names": ["f", "g"]}), "banned": []}
        if message["op"] == "getattr":
            return {"ok": {"__ref__": 1 if message["name"] == "f" else 2, "type": "function"}, "banned": []}
        (n,) = wire.decode(message["args"])
        if n == 0:
            self.live = False
            raise WorkerDied("the process exited with status 1 (sys.exit or os._exit in your code?)")
        if n == -1:
            self.live = False
            raise WorkerMemory("used more than 600 MB of memory")
        return {"ok": wire.encode(n), "banned": []}


@pytest.fixture
def student(monkeypatch, tmp_path):
    monkeypatch.setattr(seam, "Worker", _DyingWorker)
    _DyingWorker.started = 0
    return seam.RemoteStudent("toy", tmp_path / "toy.py")


def _test(student):
    return student.deadlines(seam.Deadlines())


def test_a_crash_costs_only_the_test_it_crashed_in(student):
    with _test(student):
        assert student.f(1) == 1
        with pytest.raises(seam.StudentCodeError) as crash:
            student.f(0)
        assert crash.value.kind == "crash"
        with pytest.raises(seam.StudentCodeError, match="not run again in this test") as again:
            student.f(2)  # the same test: not run again (a test cannot spend the grading's restarts)
        assert again.value.kind == "not-run"
        assert student.g(3) == 3  # another function runs, in a fresh worker
    with _test(student):
        assert student.f(2) == 2, "the next test runs the crashed function again"
    assert "f" in student.stopped, "the crash is still reported (grade.py; the self-check never caches it)"
    assert _DyingWorker.started == 2


def test_crashes_past_the_budget_are_not_run_again(student):
    for _ in range(seam.CRASH_RETRIES):
        with _test(student), pytest.raises(seam.StudentCodeError):
            student.f(0)
        with _test(student):
            assert student.f(5) == 5
    with _test(student), pytest.raises(seam.StudentCodeError):
        student.f(0)  # one crash too many
    for n in (5, 0):
        with _test(student), pytest.raises(seam.StudentCodeError, match="was not run again: it ran out of time") as refused:
            student.f(n)
        assert refused.value.kind == "not-run"
    assert student.g(4) == 4
    assert _DyingWorker.started == seam.CRASH_RETRIES + 2, "one start, then one per crash: never more"


def test_running_out_of_memory_is_not_retried(student):
    with _test(student), pytest.raises(seam.StudentCodeError) as memory:
        student.f(-1)
    assert memory.value.kind == "memory"
    with _test(student), pytest.raises(seam.StudentCodeError, match="was not run again"):
        student.f(1)
    assert student.crash_retries == seam.CRASH_RETRIES
