"""The notebook track outside the notebook: `otter check` on the student's file.

Each assignment's lab notebook is executed headless in the unzipped student folder, with the
reference (every check passes, plots drawn) and with the untouched stub (no crash; the checks say
what is unfinished), by the release self-check (`autograder/zip_proofs.py: lab_notebook`):
`make release`, which CI runs; test_release.py runs one assignment's release here."""

import io
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import KIT

from autograder.config import load_assignment
from autograder.release import build_zips


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
