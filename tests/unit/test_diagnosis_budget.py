"""Diagnosis has a budget of its own: a failure cannot make the grader replay for longer than it allows.

The case from the issue: a seq2seq ``train_copy`` that raises at once fails the 1,000-step training
test, and the diagnoser replays that whole test on every mistake declared to fail it (100 s of the
grader's CPU, against 26 s for grading the reference). Here the same test, with a small budget injected:
the replay is stopped at its limit, the failure is not diagnosed, and once the budget is spent (or the
run's deadline is near) nothing more is replayed. No name is given and nothing crashes.
"""

from __future__ import annotations

import math
import signal
import sys
import time
import types
from pathlib import Path

import pytest
import torch

from autograder.checks import Feedback, Outcome
from autograder.config import load_assignment
from autograder.diagnosis.diagnoser import DIAGNOSIS_SECONDS, WALL_ALLOWANCE, Budget, Diagnoser, OutOfBudget, OutOfTime
from autograder.grading.seam import load_module

KIT = Path(__file__).resolve().parents[2]
TRAINING = "hidden/test_train.py::test_train_copy_learns_to_copy"
RAISED_AT = 4  # AttnSeq2Seq(), .double(), .load_state_dict(sd), then train_copy: the 4th step of the test


def _spin() -> None:
    """Busy forever, swallowing every Exception (as a test's own code might)."""
    while True:
        try:
            sum(range(10_000))
        except Exception:  # noqa: BLE001, S110 - the point: OutOfTime is not one
            pass


def _timers_left_alone() -> bool:
    return all(signal.getsignal(s) == signal.SIG_DFL for s in (signal.SIGPROF, signal.SIGALRM)) and all(
        signal.getitimer(t) == (0.0, 0.0) for t in (signal.ITIMER_PROF, signal.ITIMER_REAL)
    )


def test_a_replay_past_its_limit_is_stopped_inside_and_counted():
    budget = Budget(cpu=1.0, wall=10.0, per_replay=0.3)
    started = time.monotonic()
    with pytest.raises(OutOfTime):
        budget.run(_spin)
    assert time.monotonic() - started < 0.3 * WALL_ALLOWANCE + 0.5
    assert budget.spent_cpu < 0.6, budget.spent_cpu
    # The stop's timer counts the whole process's CPU (every thread's), the budget the replay's own: they differ by
    # up to a fifth here (a fresh-clone CI run stopped at 0.24 s counted, 0.30 s on the timer). Stopped before its
    # limit, a replay would count next to nothing.
    assert budget.spent_cpu > 0.2 or budget.spent_wall > 0.3 * WALL_ALLOWANCE - 0.05, "stopped by a clock, not before"
    with pytest.raises(OutOfTime):  # asleep: stopped by the wall clock
        budget.run(lambda: time.sleep(30))
    assert budget.spent_wall >= 0.3 * WALL_ALLOWANCE
    assert _timers_left_alone(), "the timers and handlers are put back as they were"
    assert budget.run(lambda: 42) == 42
    time.sleep(0.2)  # a replay that ended in time leaves no timer behind to fire later
    unbounded = Budget(cpu=math.inf, wall=math.inf, per_replay=math.inf)
    assert unbounded.run(lambda: signal.getitimer(signal.ITIMER_PROF)) == (0.0, 0.0), "no limit: no timer"


def test_a_stop_waits_for_a_with_block_to_be_left():
    """An interrupted __exit__ would leave its state changed (grad mode, the random state): the stop waits."""
    left = []

    class Slow:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            end = time.process_time() + 0.4
            while time.process_time() < end:
                pass
            left.append(True)

    def replay():
        with Slow():
            pass
        _spin()

    with pytest.raises(OutOfTime):
        Budget(cpu=5.0, wall=15.0, per_replay=0.1).run(replay)
    assert left == [True] and _timers_left_alone()


def test_no_replay_starts_once_the_budget_is_spent_or_the_run_ends_soon():
    budget = Budget(cpu=0.2, wall=10.0, per_replay=0.5)
    with pytest.raises(OutOfTime):
        budget.run(_spin)  # the grading's 0.2 s is less than a replay's 0.5 s: it decides
    with pytest.raises(OutOfBudget):
        budget.run(lambda: 42)
    near = Budget(cpu=30.0, wall=90.0, per_replay=10.0, run_deadline=time.monotonic() + 20, reserve=42.0)
    with pytest.raises(OutOfBudget):
        near.run(lambda: 42)
    assert _timers_left_alone()


def test_the_budget_follows_the_assignments_run_limit():
    assignment = load_assignment("seq2seq", KIT)
    budget = Budget.of(assignment, run_deadline=123.0)
    assert budget.cpu == min(DIAGNOSIS_SECONDS, assignment.run_timeout / 7) and budget.wall == budget.cpu * WALL_ALLOWANCE
    assert budget.per_replay <= budget.cpu and budget.run_deadline == 123.0
    assert budget.reserve == pytest.approx(0.1 * assignment.run_timeout)


@pytest.fixture
def training_failure(monkeypatch):
    """The seq2seq training test, failed at its train_copy call by a raise (as a pytest item would carry it)."""
    assignment = load_assignment("seq2seq", KIT)
    monkeypatch.syspath_prepend(str(assignment.tests_dir))
    module = load_module("_kit_budget_test_train", assignment.tests_dir / "hidden" / "test_train.py")
    reference = load_module("_kit_budget_reference", assignment.solution)
    # torch.optim's lazy imports (some 800 modules, a second or two) happen here, as in a grading, where the
    # reference trained before any diagnosis: a replay is stopped only once an import in it has finished.
    torch.optim.Adam(torch.nn.Linear(1, 1).parameters())
    seed = 7
    item = types.SimpleNamespace(
        obj=module.test_train_copy_learns_to_copy,
        funcargs={"student": None, "reference": reference, "seed": seed, "gen": torch.Generator().manual_seed(seed)},
    )
    exc = Feedback("train_copy(...) raised RuntimeError: not yet", got=Outcome.raised("RuntimeError", "not yet"), kind="raised")
    exc.check = RAISED_AT
    yield assignment, exc, item
    sys.modules.pop("support_seq2seq", None)


def test_a_raising_train_copy_costs_no_more_replay_than_the_budget(training_failure):
    """Each replay of the training test would train for 1,000 steps (about 11 s on a free core); the
    budget stops the first one at its limit, and the failure is simply not diagnosed."""
    assignment, exc, item = training_failure
    budget = Budget(cpu=1.5, wall=1.5 * WALL_ALLOWANCE, per_replay=1.0)
    diagnoser = Diagnoser(assignment, budget=budget)
    assert sum(TRAINING in e.caught_by for e in diagnoser.entries) >= 2, "mistakes to replay this test on"
    cpu, wall = time.process_time(), time.monotonic()
    assert diagnoser(exc, TRAINING, item) == ([], False)
    assert time.process_time() - cpu < 1.0 + 0.5 and time.monotonic() - wall < 1.0 * WALL_ALLOWANCE + 1.0
    # As above: the stop's timer and the count read the CPU differently (up to a fifth apart seen); a replay
    # stopped early would count next to nothing.
    assert budget.spent_cpu > 0.7 or budget.spent_wall > WALL_ALLOWANCE - 0.1, "the replay ran until its limit"
    for _ in range(6):  # the same failure again and again (a parametrized test): what is left, then nothing
        assert diagnoser(exc, TRAINING, item) == ([], False)
    assert budget.spent_cpu <= budget.cpu + 0.2 and budget.spent_wall <= budget.wall + 0.5, budget
    cpu, spent = time.process_time(), budget.spent_cpu
    assert diagnoser(exc, TRAINING, item) == ([], False) and budget.spent_cpu == spent, "spent: no replay starts"
    assert time.process_time() - cpu < 0.2
    assert _timers_left_alone() and torch.is_grad_enabled(), "a stopped replay leaves the grader as it was"


def test_no_replay_runs_when_the_runs_deadline_is_near(training_failure):
    assignment, exc, item = training_failure
    diagnoser = Diagnoser(assignment, run_deadline=time.monotonic() + 5)  # the reserve is 42 s of a 420 s run
    started = time.monotonic()
    assert diagnoser(exc, TRAINING, item) == ([], False)
    assert time.monotonic() - started < 1.0 and diagnoser.budget.spent_cpu == 0.0
