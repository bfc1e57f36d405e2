"""Issue 50: each function pays for its own mistakes, and the contract is graded whole.

Each case is a student's file graded through the grader (in this process, on the tests that case is about):

* train's best epoch is judged on the loop's own validation losses: correct checkpointing with another
  trajectory (SGD as in a tutorial, Adam) keeps its 8 points; its trajectory is charged once, by
  test_full_batch_history; a loop that keeps the last weights still loses them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import KIT, reference_source, write_submission

from autograder.config import load_assignment
from autograder.grading.grade import grade_submission


def _replace(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


def _points(assignment: str, source: str, tests: list[str], folder: Path) -> dict[str, tuple[float, float]]:
    """Grade ``source`` on ``tests`` (keys of assignment.toml's [points]): test key -> (score, max), cases summed."""
    config = load_assignment(assignment, KIT)
    path = write_submission(folder, assignment, source)
    document = grade_submission(config, path, only=tests).document
    out: dict[str, tuple[float, float]] = {}
    for test in document["tests"]:
        key = test["extra_data"]["test"]
        score, most = out.get(key, (0.0, 0.0))
        out[key] = (score + test["score"], most + test["max_score"])
    return out


TRANSFORMER_OPTIMISER = "optimizer = torch.optim.AdamW(model.parameters(), lr=lr)"
BEST = "hidden/test_train.py::test_best_epoch_and_weights"
HISTORY = "hidden/test_train.py::test_full_batch_history"


@pytest.mark.parametrize("optimiser", ["SGD", "Adam"])
def test_train_best_epoch_is_judged_on_the_loops_own_history(optimiser, tmp_path):
    source = _replace(
        reference_source("transformer"), TRANSFORMER_OPTIMISER, f"optimizer = torch.optim.{optimiser}(model.parameters(), lr=lr)"
    )
    points = _points("transformer", source, [BEST, HISTORY], tmp_path / "own")
    assert points[BEST] == (8, 8), points  # the right checkpoint of its own trajectory
    assert points[HISTORY][0] == 0, points  # the trajectory pays once, where it is judged
    forgot = _replace(source, "model.load_state_dict(best_state)", "pass")  # never restores the best weights
    points = _points("transformer", forgot, [BEST], tmp_path / "forgot")
    assert points[BEST] == (0, 8), points
