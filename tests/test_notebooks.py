"""The notebook track outside the notebook: `otter check` on the student's file.

Each assignment's lab notebook is executed headless in the unzipped student folder, with the
reference (every check passes, plots drawn) and with the untouched stub (no crash; the checks say
what is unfinished), by the release self-check (`autograder/release/zip_proofs.py: lab_notebook`):
`make release`, which CI runs; test_release.py runs one assignment's release here."""

import io
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import KIT

from autograder.config import load_assignment
from autograder.release.zips import build_zips


def _student_folder(name: str, tmp_path: Path, solution: bool) -> Path:
    assignment = load_assignment(name, KIT)
    with zipfile.ZipFile(io.BytesIO(build_zips(assignment)["student.zip"])) as zf:
        zf.extractall(tmp_path)
    folder = tmp_path / name
    if solution:
        (folder / assignment.submit_file).write_bytes(assignment.solution.read_bytes())
    return folder


def test_otter_check_from_the_student_folder(tmp_path):
    folder = _student_folder("attention", tmp_path, solution=True)
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "otter"), "check", "attention.py"], cwd=folder, capture_output=True, text=True
    )
    assert proc.returncode == 0 and "passed" in proc.stdout.lower(), proc.stdout + proc.stderr


def test_notebooks_run_at_once_over_sockets_and_leave_no_kernel(tmp_path):
    """The release proves two assignments' notebooks at once: kernels over Unix sockets cannot take each
    other's ports (jupyter_client's port race killed one in a release), and each is shut down after its run."""
    import threading

    import psutil

    from autograder.release.notebooks import notebook_problem, run_notebook

    folder = _student_folder("attention", tmp_path, solution=False)
    problems: list[str] = []

    def run() -> None:
        problems.append(notebook_problem(run_notebook(folder, "attention"), solution=False))

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert problems == ["", "", ""], problems
    kernels = [p for p in psutil.Process().children(recursive=True) if "ipykernel" in " ".join(p.cmdline())]
    assert not kernels, f"kernels left running: {kernels}"


def test_runs_sharing_a_kernel_meet_the_students_file_as_it_now_is_and_a_fresh_namespace(tmp_path):
    """The release runs the lab notebook with the reference, then with the stub, in one kernel. Attack the
    sharing: a second run that kept the first run's module (the reference's, so the stub's checks would pass)
    or its variables (a cell that works only after an earlier run) would prove nothing about the stub."""
    import nbformat

    from autograder.release.notebooks import run_notebooks

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import mymod\nprint('value', mymod.VALUE)"),
        nbformat.v4.new_code_cell("try:\n    leftover\n    print('kept')\nexcept NameError:\n    print('fresh')\nleftover = 1"),
    ]
    nbformat.write(nb, tmp_path / "demo_lab.ipynb")

    def write(value):
        return lambda: (tmp_path / "mymod.py").write_text(f"VALUE = {value}\n")

    runs = run_notebooks(tmp_path, "demo", [write(1), write(2)], module="mymod")
    printed = [" ".join(out.get("text", "").strip() for cell in run.cells for out in cell.get("outputs", [])) for run in runs]
    assert printed == ["value 1 fresh", "value 2 fresh"], printed
