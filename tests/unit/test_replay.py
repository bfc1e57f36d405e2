"""A failed test replayed on another implementation: what the diagnoser sees at the student's failing check."""

import types

import torch

from autograder.checks import Feedback, Outcome, expect_close, expect_true
from autograder.context import checkpoint, per_test
from autograder.diagnosis.replay import EARLIER, PASSED, UNKNOWN, ModuleStudent, TestReplay


def _module(**functions):
    module = types.ModuleType("toy")
    module.__dict__.update(functions)
    return module


def toy_test(student, seed, gen):
    """Two checks on one student call, then a third on another call."""
    x = torch.randn(4, generator=gen, dtype=torch.float64)
    y = student.double(x)
    expect_true(tuple(torch.as_tensor(y).shape) == (4,), "shape", got=tuple(torch.as_tensor(y).shape))
    expect_close(y, 2 * x, "double(x)", atol=0)
    expect_close(student.halve(x), x / 2, "halve(x)", atol=0)


def _student_failure(student_module):
    """Run toy_test as the grader does (one context per test) and return the Feedback it raised."""
    with per_test():
        try:
            toy_test(ModuleStudent(student_module), 3, torch.Generator().manual_seed(3))
        except Feedback as exc:
            return exc
    raise AssertionError("the toy test passed")


RIGHT = {"double": lambda x: 2 * x, "halve": lambda x: x / 2}


def test_the_same_check_gives_the_mistakes_value_and_other_checks_say_where():
    student = _module(double=lambda x: 3 * x, halve=RIGHT["halve"])
    exc = _student_failure(student)
    replay = TestReplay(toy_test, {"student": None, "seed": 3, "gen": None}, exc.check, "toy", passed=exc.passed)
    same = replay.observe(_module(double=lambda x: 3 * x, halve=RIGHT["halve"]))
    assert torch.equal(same, exc.got), "the same mistake gives the student's value at the same check"
    assert replay.observe(_module(**RIGHT)) is PASSED
    assert replay.observe(_module(double=lambda x: x[:2], halve=RIGHT["halve"])) is EARLIER, "the shape check came first"
    later = _module(double=RIGHT["double"], halve=lambda x: x)
    assert replay.observe(later) is PASSED, "failing a later check: like the reference where the student failed"


def test_a_fresh_generator_from_the_same_seed_and_copies_in_and_out():
    """The replay draws the same inputs (the student's run used the generator up) and a mistake that writes
    into its argument changes nothing the test holds (the seam copies arguments, so the worker's did not)."""
    seen = []

    def double_in_place(x):
        seen.append(x.clone())
        return x.mul_(2)

    student = _module(double=lambda x: 2 * x + 1, halve=RIGHT["halve"])
    exc = _student_failure(student)
    replay = TestReplay(toy_test, {"student": None, "seed": 3, "gen": torch.Generator()}, exc.check, "toy", passed=exc.passed)
    assert replay.observe(_module(double=double_in_place, halve=RIGHT["halve"])) is PASSED
    assert torch.equal(seen[0], torch.randn(4, generator=torch.Generator().manual_seed(3), dtype=torch.float64))


def test_a_raise_in_the_implementation_is_an_outcome_at_its_step():
    def raising(x):
        raise ValueError("no")

    student = _module(double=raising, halve=RIGHT["halve"])
    exc = _student_failure(student)
    assert exc.got == Outcome.raised("ValueError", "no")
    replay = TestReplay(toy_test, {"student": None, "seed": 3, "gen": None}, exc.check, "toy", passed=exc.passed)
    assert replay.observe(_module(double=raising, halve=RIGHT["halve"])) == Outcome.raised("ValueError", "no")
    assert replay.observe(_module(**RIGHT)) is PASSED


def test_checks_and_calls_are_named_by_their_call_site_per_test():
    with per_test() as context:
        checkpoint()
        for _ in range(2):
            expect_true(True, "fine")
        try:
            expect_true(False, "no", got=1)
        except Feedback as exc:
            assert exc.check == context.steps[-1] and len(context.steps) == 4
            assert exc.check[0] == __file__ and exc.check[2] == 1, "this line's first step"
            assert context.steps[2][1] == context.steps[1][1] and context.steps[2][2] == 2, "the same line, once more"
            assert exc.passed == frozenset(context.steps[:3])
    assert Feedback("outside a test").check is None


def test_a_replay_that_takes_more_steps_before_the_same_check_is_compared_at_that_check():
    """A check is found by its call site, not by counting steps: a mistake that calls the student's code once
    more before the failing check (a conversion, a retry) is still compared with the student there."""

    def looping(student, seed, gen):
        x = torch.ones(3, dtype=torch.float64)
        for _ in range(int(student.rounds())):
            student.double(x)
        expect_close(student.double(x), 2 * x, "double(x)", atol=0)

    wrong = dict(double=lambda x: 3 * x, halve=RIGHT["halve"])
    with per_test():
        try:
            looping(ModuleStudent(_module(rounds=lambda: 1, **wrong)), 0, None)
        except Feedback as exc:
            failure = exc
    replay = TestReplay(looping, {"student": None, "seed": 0, "gen": None}, failure.check, "toy", passed=failure.passed)
    assert torch.equal(replay.observe(_module(rounds=lambda: 3, **wrong)), failure.got), "two more calls, the same check"
    assert replay.observe(_module(rounds=lambda: 3, double=RIGHT["double"], halve=RIGHT["halve"])) is PASSED


def test_nothing_to_compare_proves_nothing():
    def no_value(student, seed, gen):
        student.double(torch.ones(2))
        raise Feedback("no value here")

    with per_test():
        try:
            no_value(ModuleStudent(_module(**RIGHT)), 0, None)
        except Feedback as exc:
            failure = exc
    replay = TestReplay(no_value, {"student": None, "seed": 0, "gen": None}, failure.check, "toy", passed=failure.passed)
    assert replay.observe(_module(**RIGHT)) is UNKNOWN


def test_a_test_that_takes_gen_alone_is_replayed_from_the_fixtures_seed():
    """`gen` depends on the `seed` fixture: a test asking only for `gen` is replayed with a generator from that seed."""

    def gen_only(student, gen):
        toy_test(student, None, gen)

    student = _module(double=lambda x: 3 * x, halve=RIGHT["halve"])
    with per_test():
        try:
            gen_only(ModuleStudent(student), torch.Generator().manual_seed(5))
        except Feedback as exc:
            failure = exc
    item = types.SimpleNamespace(obj=gen_only, funcargs={"student": None, "seed": 5, "gen": torch.Generator()})
    replay = TestReplay.of(item, failure, "toy")
    assert torch.equal(replay.observe(_module(double=lambda x: 3 * x, halve=RIGHT["halve"])), failure.got)
    item.funcargs.pop("seed")
    assert TestReplay.of(item, failure, "toy") is None, "no seed, no generator to draw again: not replayed"
