"""The notebook track, executed headless as a student would run it (nbclient),
with the reference in place (no error, every check passes, plots produced) and with the
untouched stub (no crash; the checks say what is unfinished). Also `otter check` on the file."""

import io
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from conftest import KIT
from nbclient import NotebookClient

from autograder.config import load_assignment
from autograder.release import build_zips

WITH_NOTEBOOK = [p.parent.name for p in sorted((KIT / "assignments").glob("*/notebook.py"))]


def _student_folder(name: str, tmp_path: Path, solution: bool) -> Path:
    assignment = load_assignment(name, KIT)
    with zipfile.ZipFile(io.BytesIO(build_zips(assignment)["student.zip"])) as zf:
        zf.extractall(tmp_path)
    folder = tmp_path / name
    if solution:
        (folder / assignment.submit_file).write_bytes(assignment.solution.read_bytes())
    return folder


def _run(folder: Path, name: str) -> nbformat.NotebookNode:
    nb = nbformat.read(folder / f"{name}_lab.ipynb", as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    return nb


def _outputs(nb, cell_filter=lambda c: True) -> str:
    text = []
    for cell in nb.cells:
        if cell.cell_type == "code" and cell_filter(cell):
            for out in cell.get("outputs", []):
                text.append(out.get("text", "") + str(out.get("data", {}).get("text/plain", "")))
    return "\n".join(text)


@pytest.mark.parametrize("name", WITH_NOTEBOOK)
def test_notebook_runs_with_the_reference(name, tmp_path):
    nb = _run(_student_folder(name, tmp_path, solution=True), name)
    checks = _outputs(nb, lambda c: "grader.check(" in c.source)
    n_checks = sum("grader.check(" in c.source for c in nb.cells if c.cell_type == "code")
    assert n_checks >= 1, "the notebook should run Otter checks"
    assert checks.count("passed") >= n_checks and "failed" not in checks.lower(), checks[-2000:]
    images = sum("image/png" in out.get("data", {}) for c in nb.cells if c.cell_type == "code" for out in c.get("outputs", []))
    assert images >= 1, "the notebook's plots should be produced"


@pytest.mark.parametrize("name", WITH_NOTEBOOK)
def test_notebook_survives_the_untouched_stub(name, tmp_path):
    nb = _run(_student_folder(name, tmp_path, solution=False), name)  # raises if any cell errors
    checks = _outputs(nb, lambda c: "grader.check(" in c.source)
    assert "not implemented" in checks.lower() or "NotImplementedError" in checks, checks[-2000:]


def test_otter_check_from_the_student_folder(tmp_path):
    folder = _student_folder("attention", tmp_path, solution=True)
    proc = subprocess.run(
        [str(Path(sys.executable).parent / "otter"), "check", "attention.py"], cwd=folder, capture_output=True, text=True
    )
    assert proc.returncode == 0 and "passed" in proc.stdout.lower(), proc.stdout + proc.stderr
