"""Every release proves its tests: the self-check (reference 100, stub 0, variants 100,
each catalogued mistake caught by its declared tests and named, no hidden test that catches nothing)."""

import tempfile
from pathlib import Path

from conftest import KIT

from autograder.config import load_assignment
from autograder.release import build_zips
from autograder.selfcheck import self_check


def test_self_check_passes(assignment_name):
    assignment = load_assignment(assignment_name, KIT)
    with tempfile.TemporaryDirectory() as tmp:
        for name, data in build_zips(assignment).items():
            (Path(tmp) / name).write_bytes(data)
        report = self_check(assignment, Path(tmp))
    print(report.text())
    assert report.ok, report.text()
