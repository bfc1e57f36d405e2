"""A public test draws the same random inputs in the student's folder as in grading.

Grading seeds each test from its id in the grader's layout (autograder/grading/scoring.py: sha256 of
"0:public/<file>::<test>"); the student's conftest.py computes the same seed from the test's id in
the student's layout (`public_tests/`), so the numbers in the feedback are the ones `pytest` shows.
Both sides are run for real, without running the tests' bodies: the student's folder as release
writes it (with its conftest.py and pytest.ini), and the grader's pytest arguments with its
ScoringPlugin. One Python process per side.
"""

import json
import os
import subprocess
import sys

import pytest

from autograder.config import KIT_ROOT, list_assignments, load_assignment
from autograder.release.student_folder import student_files

NAMES = list_assignments(KIT_ROOT)

PROBE = '''
import json, os, sys
import pytest


class Probe:
    """Each test's `seed` and its generator's initial seed, where fixtures are set up; the body is not run."""

    def __init__(self):
        self.seeds = {}

    @pytest.hookimpl(tryfirst=True)
    def pytest_pyfunc_call(self, pyfuncitem):
        args = pyfuncitem.funcargs
        if "gen" in args or "seed" in args:
            key = os.path.basename(pyfuncitem.path) + "::" + pyfuncitem.name
            gen = args.get("gen")
            self.seeds[key] = [args.get("seed"), gen.initial_seed() if gen is not None else None]
        return True
'''

STUDENT = """
out = {}
for folder in sys.argv[1:-1]:
    os.chdir(folder)
    probe = Probe()
    pytest.main(["-q", "-p", "no:cacheprovider"], plugins=[probe])
    out[os.path.basename(folder)] = probe.seeds
with open(sys.argv[-1], "w") as f:
    json.dump(out, f)
"""

GRADING = """
from autograder.config import KIT_ROOT, load_assignment
from autograder.grading.local import ModuleStudent
from autograder.grading.grade import pytest_args
from autograder.grading.scoring import ScoringPlugin

out = {}
for name in sys.argv[1:-1]:
    assignment = load_assignment(name, KIT_ROOT)
    probe = Probe()
    sys.path.insert(0, str(assignment.tests_dir))  # as grade_submission does
    pytest.main(pytest_args(assignment, "public"), plugins=[ScoringPlugin(assignment, ModuleStudent(None), float("inf")), probe])
    sys.path.remove(str(assignment.tests_dir))
    out[name] = probe.seeds
with open(sys.argv[-1], "w") as f:
    json.dump(out, f)
"""


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("seeds")
    folders = []
    for name in NAMES:
        folder = root / "student" / name
        for rel, data in student_files(load_assignment(name, KIT_ROOT)).items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(data)
        folders.append(str(folder))
    (root / "student_side.py").write_text(PROBE + STUDENT)
    (root / "grading_side.py").write_text(PROBE + GRADING)
    found = {}
    for side, script, args, path in [
        ("student", root / "student_side.py", folders, ""),  # the student's folder alone
        ("grading", root / "grading_side.py", NAMES, str(KIT_ROOT)),  # the kit
    ]:
        out = root / f"{side}.json"
        env = {**os.environ, "PYTHONPATH": path}
        proc = subprocess.run([sys.executable, str(script), *args, str(out)], cwd=root, env=env, capture_output=True,
                              text=True, timeout=600)  # fmt: skip
        assert proc.returncode == 0 and out.is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
        found[side] = json.loads(out.read_text())
    return found


def test_some_public_tests_draw_random_inputs(seeds):
    assert sum(len(s) for s in seeds["grading"].values()) >= 8, seeds["grading"]


@pytest.mark.parametrize("name", NAMES)
def test_a_public_test_gets_the_same_seed_locally_and_in_grading(name, seeds):
    local, grading = seeds["student"][name], seeds["grading"][name]
    assert local.keys() == grading.keys(), (local, grading)
    for test, (seed, initial) in grading.items():
        assert local[test] == [seed, initial], (
            f"{name}: {test} draws from seed {local[test]} in the student's folder, {[seed, initial]} in grading"
        )
