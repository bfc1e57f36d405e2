"""``python -m autograder rename-test``: a test renamed everywhere it is named, or refused with nothing written."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.catalogue import read_catalogue
from autograder.config import KIT_ROOT, load_assignment
from autograder.release.rename import RenameError, rename_test

A = "attention"
OLD = "hidden/test_sdpa.py::test_matches_reference"
NEW = "hidden/test_sdpa.py::test_values"
SOFTMAX = "hidden/test_softmax.py::test_matches_reference"  # same function name, another file: untouched


def _kit(tmp_path: Path) -> Path:
    """A kit root holding a copy of one assignment, its reference, course.toml and a kit test naming the id."""
    root = tmp_path / "kit"
    shutil.copytree(KIT_ROOT / "assignments" / A, root / "assignments" / A, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(KIT_ROOT / "solutions" / A, root / "solutions" / A, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(KIT_ROOT / "course.toml", root / "course.toml")
    (root / "tests").mkdir()
    (root / "tests" / "test_kit.py").write_text(f'ASSIGNMENT = "{A}"\nKEYS = ["{OLD}", "{OLD}[float64-0]", "{SOFTMAX}"]\n')
    return root


def _all_text(root: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(root.rglob("*")) if p.is_file() and p.suffix in (".py", ".toml", ".md"))


def test_every_reference_is_renamed_and_the_config_still_loads(tmp_path):
    root = _kit(tmp_path)
    before = load_assignment(A, root)
    caught_before = {e.name: e.caught_by for e in read_catalogue(before, "mistake")}
    assert OLD in before.points and any(OLD in c for c in caught_before.values())

    lines = rename_test(A, OLD, "test_values", root)

    after = load_assignment(A, root)
    assert NEW in after.points and OLD not in after.points
    assert after.points[NEW] == before.points[OLD]
    assert sum(after.points.values()) == pytest.approx(100)
    caught_after = {e.name: e.caught_by for e in read_catalogue(after, "mistake")}
    assert caught_after == {name: [NEW if c == OLD else c for c in caught] for name, caught in caught_before.items()}
    test_file = (root / "assignments" / A / "tests" / "hidden" / "test_sdpa.py").read_text()
    assert "def test_values(" in test_file and "def test_matches_reference(" not in test_file
    text = _all_text(root)
    assert "test_sdpa.py::test_matches_reference" not in text
    assert SOFTMAX in text and SOFTMAX in after.points  # the softmax test of the same name is another test
    kit_test = (root / "tests" / "test_kit.py").read_text()
    assert f'"{NEW}"' in kit_test and f'"{NEW}[float64-0]"' in kit_test and f'"{SOFTMAX}"' in kit_test
    assert lines[0].startswith(f"renamed {OLD} -> {NEW}")
    assert any("assignment.toml" in line for line in lines)


def test_a_missing_test_or_a_taken_name_is_refused_and_nothing_is_written(tmp_path):
    root = _kit(tmp_path)
    snapshot = _all_text(root)
    with pytest.raises(RenameError, match="defines no test 'test_nope'"):
        rename_test(A, "hidden/test_sdpa.py::test_nope", "test_values", root)
    with pytest.raises(RenameError, match="no test file"):
        rename_test(A, "hidden/test_nope.py::test_matches_reference", "test_values", root)
    taken = next(n for n in load_assignment(A, root).points if n.startswith("hidden/test_sdpa.py::") and n != OLD)
    with pytest.raises(RenameError, match="already defines"):
        rename_test(A, OLD, taken.partition("::")[2], root)
    with pytest.raises(RenameError, match="starting with test_"):
        rename_test(A, OLD, "values", root)
    assert _all_text(root) == snapshot


def test_the_command_line(tmp_path):
    root = _kit(tmp_path)
    run = [sys.executable, "-m", "autograder", "rename-test", A]
    refused = subprocess.run(
        run + ["hidden/test_sdpa.py::test_nope", "test_values", "--root", str(root)], capture_output=True, text=True, cwd=KIT_ROOT
    )
    assert refused.returncode == 2 and "defines no test" in refused.stderr
    done = subprocess.run(run + [OLD, "test_values", "--root", str(root)], capture_output=True, text=True, cwd=KIT_ROOT)
    assert done.returncode == 0, done.stderr
    assert NEW in done.stdout and NEW in load_assignment(A, root).points
