"""Shared helpers for the kit's own tests: run the CLI the way users do."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from filelock import FileLock  # noqa: E402

from autograder.config import list_assignments, load_assignment  # noqa: E402
from autograder.release import gradescope_sim  # noqa: E402
from autograder.release.grading_env import grading_python_for_children  # noqa: E402
from autograder.release.markers import make_stub  # noqa: E402
from autograder.release.zips import autograder_files, make_zip  # noqa: E402

ASSIGNMENTS = list_assignments(KIT)
# Student code in these tests runs as on the platform: with the packages requirements.txt installs, nothing else.
grading_python_for_children(KIT)
SCHEMA = json.loads((Path(__file__).parent / "gradescope_results.schema.json").read_text())


def user_files(uid: int) -> tuple[dict[int, int], bool]:
    """What ``uid`` has written where any user may write, in one pass (sandbox/proctree.py's FileCount):
    {filesystem: bytes}, and whether it kept to 100,000 entries."""
    from autograder.sandbox import proctree

    count = proctree.FileCount(uid, [], proctree.world_writable_folders())
    try:
        count.step([], 10.0)
    finally:
        count.close()
    return count.used(), count.entries() <= 100_000


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


def once_per_run(tmp_path_factory, worker_id: str, name: str, make) -> Path:
    """The folder ``name``, filled by ``make(folder)`` once per test run and shared by the xdist
    workers: the first to get here makes it, the others wait on a lock and reuse it (the
    once-per-run pattern of the xdist docs). A ``make`` that failed is tried again from scratch."""
    base = tmp_path_factory.getbasetemp()
    shared = base if worker_id == "master" else base.parent  # this run's folder, common to its workers
    folder = shared / name
    with FileLock(str(shared / f"{name}.lock")):
        if not (shared / f"{name}.done").is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            (shared / f"{name}.done").touch()
    return folder


@pytest.fixture(scope="session")
def installed_tree(tmp_path_factory, worker_id) -> Path:
    """An /autograder tree (attention) after setup.sh, copied for each grading in a simulated tree:
    setup.sh runs once per test run (it only creates the student user and checks the imports, the
    same for every submission)."""

    def install(folder: Path) -> None:
        path = folder / "autograder.zip"
        path.write_bytes(make_zip(autograder_files(load_assignment("attention", KIT))))
        root = folder / "autograder"
        gradescope_sim.lay_out(path, {}, root)
        env = gradescope_sim.environment(root)
        setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], cwd=root / "source", env=env, capture_output=True)
        assert setup.returncode == 0, setup.stderr[-2000:]

    return once_per_run(tmp_path_factory, worker_id, "installed-attention", install) / "autograder"


def install_copy(installed_tree: Path, root: Path, submission: dict[str, bytes]) -> Path:
    """A fresh /autograder tree at ``root``: a copy of the installed one, with ``submission`` uploaded."""
    shutil.copytree(installed_tree, root, symlinks=True)
    root.chmod(0o755)
    for rel, data in submission.items():
        (root / "submission" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / rel).write_bytes(data)
    return root


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
