"""Two unzipped student folders side by side: `pytest` run above them collects both cleanly (issue 48).

The students' copy of the checks' bookkeeping was `autograder/per_test.py`, a name pytest's default pattern
`*_test.py` collects: with two assignments unzipped in one folder, both packages' `autograder.per_test` clashed
and `pytest` stopped at collection with errors; and the `grades` marker, registered in the folder's pytest.ini
(which pytest does not read from above), warned once per test. No file of a student's folder but its tests is
named like one, and its conftest.py registers the marker."""

import fnmatch
import subprocess
import sys

from autograder.config import KIT_ROOT, list_assignments, load_assignment
from autograder.release.student_folder import student_files


def _write(folder, files):
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)


def test_no_file_but_the_public_tests_is_named_like_a_test_file():
    for name in list_assignments():
        for rel in student_files(load_assignment(name, KIT_ROOT)):
            base = rel.rsplit("/", 1)[-1]
            if fnmatch.fnmatch(base, "test_*.py") or fnmatch.fnmatch(base, "*_test.py"):
                assert rel.startswith("public_tests/"), f"{name}: {rel} is collected by pytest run above the folder"


def test_two_student_folders_side_by_side_collect_cleanly(tmp_path):
    for name in ("attention", "multihead"):
        _write(tmp_path / name, student_files(load_assignment(name, KIT_ROOT)))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "error" not in proc.stdout.lower() and "warning" not in proc.stdout.lower(), proc.stdout[-3000:]
    collected = [line for line in proc.stdout.splitlines() if "::" in line]
    assert {line.split("/")[0] for line in collected} == {"attention", "multihead"}, collected[:5]
    assert all("/public_tests/" in line for line in collected), "only the public tests are collected"
