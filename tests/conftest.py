"""Shared helpers for the kit's own tests: run the CLI the way users do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from autograder.config import list_assignments, load_assignment  # noqa: E402
from autograder.markers import make_stub  # noqa: E402

ASSIGNMENTS = list_assignments(KIT)
SCHEMA = json.loads((Path(__file__).parent / "gradescope_results.schema.json").read_text())


def run_cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", *args], cwd=KIT, capture_output=True, text=True, timeout=timeout)


def grade(assignment: str, upload: Path, tmp_path: Path) -> dict:
    """Grade through the CLI; assert the grader itself ran and the results are valid Gradescope JSON."""
    results = tmp_path / f"results-{upload.name}.json"
    proc = run_cli("grade", assignment, str(upload), "--results", str(results))
    assert proc.returncode == 0, f"grader failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    document = json.loads(results.read_text())
    validate_results(document)
    return document


def validate_results(document: dict) -> None:
    jsonschema.validate(document, SCHEMA)
    for test in document["tests"]:
        assert test["visibility"] in ("visible", "after_published", "hidden", "after_due_date")
    assert abs(sum(t["score"] for t in document["tests"]) - document["score"]) < 0.02


def write_submission(folder: Path, assignment: str, source: str, name: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"{load_assignment(assignment, KIT).module}.py")
    path.write_text(source)
    return path


def reference_source(assignment: str) -> str:
    return load_assignment(assignment, KIT).solution.read_text()


def stub_source(assignment: str) -> str:
    return make_stub(reference_source(assignment))


@pytest.fixture(params=ASSIGNMENTS)
def assignment_name(request: pytest.FixtureRequest) -> str:
    return request.param


# The longest tests first, so the two xdist workers finish together instead of one waiting for
# the other's last self-check (measured with --durations; the rest keep their order).
_SLOW_FIRST = (
    "test_release.py::test_release_cli",
    "test_attacks.py::test_attacks_through_grade_all",
    "test_isolation.py",
    "test_attacks.py",
)


def pytest_collection_modifyitems(items):
    def rank(item):
        return next((i for i, key in enumerate(_SLOW_FIRST) if key in item.nodeid), len(_SLOW_FIRST))

    items.sort(key=rank)
