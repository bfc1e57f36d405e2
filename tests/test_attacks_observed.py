"""Points only for what the grader observes (issue 49): a validation test pays only when the valid call beside the
invalid ones returns the right values; the raise alone earns nothing. Attack and honest baseline side by side."""

from __future__ import annotations

from conftest import KIT, reference_source, write_submission

from autograder.config import load_assignment
from autograder.grading.grade import grade_submission

VALUE_ERROR = "hidden/test_heads.py::test_split_heads_value_error"

# raises where it must, and answers the valid call with anything at all: an all-True bool tensor of the right shape
ANSWERS_ANYTHING = '''

def split_heads(x, n_heads):
    B, T, d = x.shape
    if d % n_heads:
        raise ValueError("d must be divisible by n_heads")
    return torch.ones(B, n_heads, T, d // n_heads, dtype=torch.bool)
'''


def _score(source: str, folder) -> float:
    config = load_assignment("multihead", KIT)
    document = grade_submission(config, write_submission(folder, "multihead", source), only=[VALUE_ERROR]).document
    return sum(t["score"] for t in document["tests"])


def test_a_validation_test_pays_only_with_the_valid_calls_values(tmp_path):
    honest = _score(reference_source("multihead"), tmp_path / "honest")
    attack = _score(reference_source("multihead") + ANSWERS_ANYTHING, tmp_path / "attack")
    assert honest > 0 and attack == 0, (honest, attack)
