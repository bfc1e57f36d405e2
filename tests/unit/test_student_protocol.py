"""The remote and the replaying student are one interface and make the same steps on the same test body.

A replay of a failed test on a catalogued mistake (``autograder/diagnosis/replay.py``) finds the student's failing
check by its call site. That holds only if a test body makes the same steps, named the same, whether its
``student`` is the isolated worker (:class:`RemoteStudent`, grading) or a module in this process
(:class:`ModuleStudent`, the diagnoser's replays). Here the public tests of two assignments (functions,
and a class whose instances live in the worker) run through both on the reference, and their steps are
compared one by one.
"""

import inspect
import sys
import time

import pytest
import torch

from autograder.config import KIT_ROOT, load_assignment
from autograder.context import per_test
from autograder.grading.grade import forget_test_modules
from autograder.grading.local import ModuleStudent
from autograder.grading.seam import Deadlines, RemoteStudent, load_module
from autograder.grading.student import Student


def _steps(test, student, seed=11):
    arguments = {"student": student, "seed": seed, "gen": torch.Generator().manual_seed(seed)}
    names = list(inspect.signature(test).parameters)
    with per_test() as context:
        test(**{name: arguments[name] for name in names})
    return [(line, n) for _file, line, n in context.steps]


@pytest.mark.proof  # two workers and two assignments: make proofs (CI runs it)
@pytest.mark.parametrize("name", ["attention", "multihead"])
def test_a_test_body_makes_the_same_steps_through_the_remote_and_the_local_student(name):
    assignment = load_assignment(name, KIT_ROOT)
    sys.path.insert(0, str(assignment.tests_dir))
    remote = RemoteStudent(
        assignment.module,
        assignment.solution,
        assignment.helpers,
        list(assignment.banned),
        deadlines=Deadlines(run=time.monotonic() + 300),
    )
    try:
        assert remote.load() is None
        local = ModuleStudent(load_module(f"_kit_protocol_{name}", assignment.solution))
        assert isinstance(remote, Student) and isinstance(local, Student)
        compared = 0
        for path in sorted((assignment.tests_dir / "public").glob("test_*.py")):
            forget_test_modules(assignment)
            module = load_module(f"_kit_protocol_tests_{name}_{path.stem}", path)
            for test_name, test in vars(module).items():
                if not test_name.startswith("test_") or not callable(test):
                    continue
                if set(inspect.signature(test).parameters) - {"student", "seed", "gen"}:
                    continue  # parametrized: its cases need pytest
                with remote.deadlines(Deadlines(run=time.monotonic() + 300, request=60)):
                    through_worker = _steps(test, remote)
                    used_remote = remote.names_used()
                with local.deadlines(None):
                    in_process = _steps(test, local)
                    used_local = local.names_used()
                assert through_worker == in_process, f"{name}: {test_name} steps differently"
                assert used_remote == used_local and used_remote, f"{name}: {test_name} ran other names"
                assert not remote.names_used() and not local.names_used()  # one test's, forgotten after it
                assert through_worker, f"{name}: {test_name} made no step"
                compared += 1
        assert compared >= 3
    finally:
        remote.close()
        sys.path.remove(str(assignment.tests_dir))
