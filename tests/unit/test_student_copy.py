"""The students' copy of the checks: the same messages as grading, without the grader's bookkeeping for replays.

The issue "One record per grading" asked that the checks shipped in student.zip carry no grader-only machinery:
the per-test call sites and the provenance of returned values serve only the diagnosis's replays."""

import subprocess
import sys

from autograder.config import KIT_ROOT, load_assignment
from autograder.release.student_folder import student_files


def test_the_students_context_module_keeps_nothing():
    files = student_files(load_assignment("attention", KIT_ROOT))
    shipped = files["autograder/context.py"].decode()
    assert "Provenance" not in shipped and "ContextVar" not in shipped and "weakref" not in shipped
    assert len(shipped.splitlines()) < 40


def test_a_failed_check_in_the_students_copy_says_the_same(tmp_path):
    """checks.py runs on the stub module: a failing expect_close raises the message grading gives."""
    for name, data in student_files(load_assignment("attention", KIT_ROOT)).items():
        if name.startswith("autograder/"):
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_bytes(data)
    script = (
        "import torch\n"
        "from autograder.checks import Feedback, expect_close\n"
        "try:\n"
        "    expect_close(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5]), 'the output', atol=1e-6)\n"
        "except Feedback as exc:\n"
        "    print(exc.check, exc.call, str(exc).splitlines()[0])\n"
    )
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("None None the output"), run.stdout
