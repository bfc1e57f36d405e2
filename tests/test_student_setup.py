"""A student's set-up, from the handout's lines alone: a fresh venv, the public tests, the notebook.

Slow (it installs torch, jupyter and otter into a new venv: minutes), so it runs only with
KIT_STUDENT_SETUP=1 (`make student-setup`). The Linux lines are taken from the generated
README.md and run as written; the one substitution is PyTorch's CPU index, which this
machine cannot reach (as in tests/gradescope_image.py): pip's configured index and
find-links then provide the same pinned CPU wheel.
"""

import os
import re
import shutil
import subprocess
import sys

import pytest

from autograder.config import KIT_ROOT, load_assignment
from autograder.release import student_files

CPU_INDEX = "https://download.pytorch.org/whl/cpu"
REACHABLE_INDEX = os.environ.get("KIT_TORCH_INDEX_URL", "https://pypi.org/simple")

pytestmark = pytest.mark.skipif(
    os.environ.get("KIT_STUDENT_SETUP") != "1", reason="slow (a fresh venv with torch): set KIT_STUDENT_SETUP=1"
)


def linux_lines(readme: str) -> str:
    """The code block under **Linux** in the README's set-up section."""
    match = re.search(r"\*\*Linux\*\*\s*\n\s*```\n(.*?)```", readme, re.DOTALL)
    assert match, "the README has no Linux set-up block"
    return match.group(1)


def test_a_fresh_venv_from_the_handout_runs_the_public_tests_and_the_notebook(tmp_path):
    assignment = load_assignment("attention", KIT_ROOT)
    folder = tmp_path / "attention"
    for rel, data in student_files(assignment).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    requirements = folder / "requirements.txt"
    assert CPU_INDEX in requirements.read_text()
    requirements.write_text(requirements.read_text().replace(CPU_INDEX, REACHABLE_INDEX))
    lines = linux_lines((folder / "README.md").read_text())
    assert "python -m pip install -r requirements.txt" in lines
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH"))}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if ".venv" not in p)
    setup = subprocess.run(["bash", "-e", "-c", lines], cwd=folder, env=env, capture_output=True, text=True)
    assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-3000:]
    python = folder / ".venv" / "bin" / "python"
    version = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True)
    assert version.stdout.strip().startswith("2.13.0"), version.stdout + version.stderr

    shutil.copyfile(assignment.solution, folder / assignment.submit_file)
    tests = subprocess.run([python, "-m", "pytest"], cwd=folder, env=env, capture_output=True, text=True)
    assert tests.returncode == 0 and "passed" in tests.stdout, tests.stdout[-3000:]

    notebook = subprocess.run(
        [folder / ".venv" / "bin" / "jupyter", "nbconvert", "--to", "notebook", "--execute", "--output", "ran.ipynb",
         f"{assignment.name}_lab.ipynb"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert notebook.returncode == 0, notebook.stderr[-3000:]
    assert '"output_type": "error"' not in (folder / "ran.ipynb").read_text()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
