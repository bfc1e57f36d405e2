"""Time limits count the student's time, not the machine's load (``sandbox/clock.py``).

The same correct code must not time out on a loaded machine (the release self-check grades in
parallel; a CI machine runs other jobs; Gradescope gives half a CPU) and pass on an idle one, and
no code may escape its limit: a sleeping hang is charged the wall time, a busy one its CPU time,
and busy children the CPU time they take.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from autograder.grading.seam import Deadlines, RemoteStudent, StudentCodeError
from autograder.sandbox.clock import WALL_ALLOWANCE, StudentClock, TimeLimit

# A proof of the sandbox (it loads both cores with busy processes for seconds): `make proofs` (CI).
pytestmark = pytest.mark.proof

MODULE = textwrap.dedent(
    """
    import os, time

    def work(n):
        total = 0
        for i in range(n):
            total += i * i
        return total

    def nap(seconds):
        time.sleep(seconds)

    def forever():
        while True:
            pass

    def busy_children(n):
        pids = []
        for _ in range(n):
            pid = os.fork()
            if pid == 0:  # a small busy process (a forked copy of torch would be stopped for its memory)
                os.execv("/bin/sh", ["sh", "-c", "while :; do :; done"])
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)

    def flicker():
        # runnable half the time, asleep the other half: charged at least its CPU time
        while True:
            end = time.monotonic() + 0.03
            while time.monotonic() < end:
                pass
            time.sleep(0.03)
    """
)

LIMIT = 2.0


def test_clock_charges_cpu_while_runnable_and_wall_while_asleep():
    clock = StudentClock(10.0)
    start = clock._wall
    clock.tick(start + 0.1, cpu=5.0, running=True)  # first sample: no CPU baseline, the wall is charged
    assert clock.used == pytest.approx(0.1)
    clock.tick(start + 1.1, cpu=5.25, running=True)  # runnable, a quarter of a core: 0.25 s
    assert clock.used == pytest.approx(0.35)
    clock.tick(start + 2.1, cpu=5.25, running=False)  # asleep: the wall
    assert clock.used == pytest.approx(1.35)
    clock.tick(start + 3.1, cpu=7.25, running=False)  # asleep, its children busy on two cores: their CPU
    assert clock.used == pytest.approx(3.35)
    clock.tick(start + 4.1, cpu=1.0, running=True)  # a process exited and took its count: nothing negative
    assert clock.used == pytest.approx(3.35)
    assert not clock.expired()
    limit = TimeLimit.starting_now(2.0, wall_cap=time.monotonic() + 1.0)
    assert limit.seconds == 2.0 and limit.wall <= time.monotonic() + 1.0
    assert TimeLimit.starting_now(-3.0).seconds == 0.0


@pytest.fixture
def student(tmp_path):
    (tmp_path / "timing.py").write_text(MODULE)
    s = RemoteStudent("timing", tmp_path / "timing.py", None, [], deadlines=Deadlines(request=120))
    assert s.load() is None
    yield s
    s.close()


def test_a_correct_call_on_a_loaded_machine_is_not_timed_out(student):
    """Work that takes 0.6-1.2 s on this machine when idle, under a limit of 1.5 times that, with the
    machine so loaded that the call takes longer than the limit in wall time: the student is charged
    the CPU time it got, and the call completes."""
    n = 200_000
    while True:  # calibrate: the same work, idle, under no limit
        started = time.monotonic()
        student.work(n)
        idle = time.monotonic() - started
        if idle >= 0.6:
            break
        n *= 2
    limit = 1.5 * idle
    # Each hog in a session of its own, like another grading's worker: where the kernel groups
    # processes by session (autogroup), busy processes in the test's own session would share one
    # group's share of the CPU and hardly slow the worker.
    hogs = [
        # each ends by itself after a minute, should this test be killed before its finally runs
        subprocess.Popen([sys.executable, "-c", HOG], start_new_session=True)
        for _ in range(2 * (os.cpu_count() or 2))
    ]
    try:
        time.sleep(0.3)
        started = time.monotonic()
        with student.deadlines(Deadlines(request=limit)):
            assert student.work(n) == sum(i * i for i in range(n))
        loaded = time.monotonic() - started
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert loaded > limit, f"the load did not slow the call ({loaded:.1f} s, idle {idle:.1f} s): this test proves nothing"


HOG = "import time\nend = time.monotonic() + 60\nwhile time.monotonic() < end:\n    pass"


@pytest.mark.parametrize(
    "call, most",
    [
        ("nap", LIMIT + 2.0),  # asleep: charged the wall time, whatever the load
        ("forever", LIMIT * WALL_ALLOWANCE + 1.0),  # busy: charged its CPU time (about the wall time on a free core)
        ("busy_children", LIMIT + 2.0),  # waiting for busy children: charged the wall time, or their CPU if more
        ("flicker", LIMIT * WALL_ALLOWANCE + 1.0),  # sleeps and spins in turn: charged at least its CPU
    ],
)
def test_no_code_escapes_its_time_limit(student, call, most):
    args = {"nap": (60,), "busy_children": (2,)}.get(call, ())
    started = time.monotonic()
    with pytest.raises(StudentCodeError) as failure, student.deadlines(Deadlines(request=LIMIT)):
        getattr(student, call)(*args)
    wall = time.monotonic() - started
    assert failure.value.kind == "timeout", str(failure.value)
    assert "time limit" in str(failure.value)
    assert wall < most, f"{call} ran {wall:.1f} s of wall time under a {LIMIT} s limit"
