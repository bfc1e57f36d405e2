"""No flakes: the reference scores 100 under many different input seeds (AG_SEED shifts every
test's seed), graded through the real grader."""

import json
import os

import pytest
from conftest import ASSIGNMENTS, KIT, write_submission

from autograder.batch import parallel_grade
from autograder.config import load_assignment

# Training-heavy suites take far longer per grading; they get fewer seeds in `make test`
# (KIT_FLAKE_SEEDS=20 runs 20 everywhere).
SEEDS = int(os.environ.get("KIT_FLAKE_SEEDS", "0")) or None
HEAVY = {"transformer": 4, "seq2seq": 4}


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_reference_scores_100_under_many_seeds(name, tmp_path):
    assignment = load_assignment(name, KIT)
    n = SEEDS or HEAVY.get(name, 20)
    upload = write_submission(tmp_path / "ref", name, assignment.solution.read_text())
    jobs = [(upload, tmp_path / f"seed{seed}.json", seed) for seed in range(1, n + 1)]
    parallel_grade(assignment, jobs)
    scores = {seed: json.loads(results.read_text())["score"] for _, results, seed in jobs}
    failing = {}
    for seed, score in scores.items():
        if score != 100:
            doc = json.loads((tmp_path / f"seed{seed}.json").read_text())
            failing[seed] = [(t["name"], t["output"][:200]) for t in doc["tests"] if t["status"] != "passed"]
    assert not failing, failing
