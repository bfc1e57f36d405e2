"""Issue 50: train's shuffle is graded with batches smaller than the data.

A loop that never shuffles, and one that shuffles from the global RNG after torch.manual_seed(seed), both scored
100 (every probe used one full batch); each now loses the shuffle test's points, and only those, and is named.
Graded through the grader's CLI on the two tests about the order.
"""

from __future__ import annotations

import pytest
from conftest import reference_source
from test_each_function_pays import graded

# Gradings through the CLI (about 10 s each, cached beside the release's): `make proofs`, kept out of `make test`.
pytestmark = pytest.mark.proof


def _replace(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


SHUFFLE = "hidden/test_shuffle.py::test_shuffle_each_epoch_from_the_seeded_generator"
SAME_SEED = "hidden/test_train.py::test_same_seed_same_history"
SHUFFLED_BATCHES = "for rows in torch.randperm(n_rows, generator=generator).split(batch_size):"
# Two loops as students write them: batches sliced in the stored order; torch.manual_seed(seed) once, then the global
# RNG's torch.randperm (reproducible, but the caller's random state is reset).
UNSHUFFLED = {
    "no_shuffle": [
        (SHUFFLED_BATCHES, "for rows in [torch.arange(n_rows)[i : i + batch_size] for i in range(0, n_rows, batch_size)]:")
    ],
    "global_rng_reseeded": [
        ("generator = torch.Generator().manual_seed(seed)", "torch.manual_seed(seed)"),
        (SHUFFLED_BATCHES, "for rows in torch.randperm(n_rows).split(batch_size):"),
    ],
}


@pytest.mark.parametrize("case", list(UNSHUFFLED))
def test_train_that_does_not_shuffle_from_its_own_generator_loses_the_shuffle_points(case):
    source = reference_source("transformer")
    for old, new in UNSHUFFLED[case]:
        source = _replace(source, old, new)
    document = graded("transformer", source, [SHUFFLE, SAME_SEED])
    tests = {t["extra_data"]["test"]: t for t in document["tests"]}
    assert tests[SAME_SEED]["score"] == tests[SAME_SEED]["max_score"], tests[SAME_SEED]["output"]  # reproducible
    assert (tests[SHUFFLE]["score"], tests[SHUFFLE]["max_score"]) == (0, 3), tests[SHUFFLE]["output"]
    assert tests[SHUFFLE]["extra_data"]["mistakes"] == [case], tests[SHUFFLE]["output"]
