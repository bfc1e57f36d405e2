"""A student's set-up, from the handout's lines alone: a fresh venv, the public tests, the notebook.

Slow (it installs torch into a new venv, then jupyter and otter: minutes), so it runs only with
KIT_STUDENT_SETUP=1 (`make student-setup`). The generated README.md's **Linux** block runs as
written, then its lab line in the same environment. The one variable is `TORCH_INDEX_URL`, which
the Linux lines read with PyTorch's CPU index as the default: `make student-setup` passes the
Makefile's (set it to a reachable CPU mirror where download.pytorch.org is out of reach; on this
kit's machine pip's configured find-links then supply the same CPU wheel). Prints each step's time
and the venv's size, the numbers the handout quotes.
"""

import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from autograder.config import KIT_ROOT, load_assignment
from autograder.release.student_folder import student_files

pytestmark = pytest.mark.skipif(
    os.environ.get("KIT_STUDENT_SETUP") != "1", reason="slow (a fresh venv with torch): set KIT_STUDENT_SETUP=1"
)


def block(readme: str, title: str) -> str:
    """The first code block after the bold ``title`` (e.g. ``**Linux**``) in the README's set-up section."""
    match = re.search(re.escape(title) + r"[^\n]*\n(?:[^`\n][^\n]*\n|\n)*?```\n(.*?)```", readme, re.DOTALL)
    assert match, f"the README has no code block under {title}"
    return match.group(1)


def run(lines: str, folder, env) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    proc = subprocess.run(["bash", "-e", "-c", lines], cwd=folder, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, f"{lines}\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}"
    return proc, time.monotonic() - started


def size(folder) -> str:
    return subprocess.run(["du", "-sh", folder], capture_output=True, text=True).stdout.split()[0]


def test_a_fresh_venv_from_the_handout_runs_the_public_tests_and_the_notebook(tmp_path):
    assignment = load_assignment("attention", KIT_ROOT)
    folder = tmp_path / "attention"
    for rel, data in student_files(assignment).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    readme = (folder / "README.md").read_text()
    linux, lab = block(readme, "**Linux**"), block(readme, "**The lab notebook and `otter check`**")
    assert "${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}" in linux, "the Linux lines name the CPU index"
    options = [line for line in (folder / "requirements.txt").read_text().splitlines() if line.startswith("-")]
    assert not options, f"requirements.txt names no index (where one is unreachable, pip retries it for every package): {options}"
    assert (folder / "requirements-lab.txt").is_file(), "the handout installs requirements-lab.txt: ship it"

    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHONPATH", "TORCH_INDEX_URL"))}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if ".venv" not in p)
    if os.environ.get("TORCH_INDEX_URL"):
        env["TORCH_INDEX_URL"] = os.environ["TORCH_INDEX_URL"]  # the one variable the lines read
    _, minimal_s = run(linux, folder, env)
    minimal_size = size(folder / ".venv")
    python = folder / ".venv" / "bin" / "python"
    version = subprocess.run(
        [python, "-c", "import torch; print(torch.__version__, torch.version.cuda)"], capture_output=True, text=True
    )
    assert version.stdout.split()[0].startswith("2.13.0"), version.stdout + version.stderr
    assert version.stdout.split()[1] == "None", f"the CUDA build was installed: {version.stdout}"

    shutil.copyfile(assignment.solution, folder / assignment.submit_file)
    tests = subprocess.run([python, "-m", "pytest"], cwd=folder, env=env, capture_output=True, text=True)
    assert tests.returncode == 0 and "passed" in tests.stdout, tests.stdout[-3000:]
    example = re.search(r"`pytest -m (\w+)`", readme).group(1)  # the handout's one-function example
    one = subprocess.run([python, "-m", "pytest", "-m", example], cwd=folder, env=env, capture_output=True, text=True)
    assert one.returncode == 0 and "deselected" in one.stdout, one.stdout[-3000:]

    _, lab_s = run(". .venv/bin/activate\n" + lab, folder, env)  # "in the same environment"
    lab_size = size(folder / ".venv")
    notebook = subprocess.run(
        [folder / ".venv" / "bin" / "jupyter", "nbconvert", "--to", "notebook", "--execute", "--output", "ran.ipynb",
         f"{assignment.name}_lab.ipynb"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert notebook.returncode == 0, notebook.stderr[-3000:]
    assert '"output_type": "error"' not in (folder / "ran.ipynb").read_text()
    check = subprocess.run(
        [folder / ".venv" / "bin" / "otter", "check", assignment.submit_file], cwd=folder, env=env,
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert "All tests passed!" in check.stdout, check.stdout[-3000:] + check.stderr[-2000:]  # its exit code is 0 either way
    print(
        f"\nthe handout's Linux lines: {minimal_s:.0f} s, venv {minimal_size}; "
        f"then requirements-lab.txt: {lab_s:.0f} s more, venv {lab_size} "
        f"(TORCH_INDEX_URL={env.get('TORCH_INDEX_URL', 'unset: the lines default to the CPU index')})"
    )


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q", "-s"]))
