"""The global generator's state at each test start (ops.TEST_SEED) is no seed a test gives the student.

Each test reseeds the worker's global torch generator, so that a replay of the test on a catalogued mistake draws
what the student's code drew. Were that seed one a test passes to the student (a per-test seed, or a literal
`seed=0`), code that ignores the seed or generator it is given and draws from the global generator instead would
draw exactly what the right code draws, and be paid for it."""

import re

import torch

from autograder.config import KIT_ROOT
from autograder.worker.ops import TEST_SEED, reseed


def test_the_test_seed_is_no_seed_a_test_writes_out():
    # torch's CPU generator keeps the low 32 bits of a seed (2**32 seeds the same as 0): compare those
    written = {
        int(n)
        for path in (KIT_ROOT / "assignments").glob("*/tests/**/*.py")
        for n in re.findall(r"(?:seed=|manual_seed\()(\d+)", path.read_text())
    }
    assert written and {TEST_SEED % 2**32, (TEST_SEED + 1) % 2**32}.isdisjoint(written)


def test_a_generator_ignored_for_the_global_one_draws_something_else():
    """The attack the rule stops: a student's copy_batch that ignores `generator` (seq2seq's public test gives
    train_copy seed=0) draws from the global generator, which each test starts from TEST_SEED."""
    reseed()
    from_global = torch.randint(0, 10, (4, 8))
    for seed in (0, 1, 7, 8, 2**32):
        assert not torch.equal(from_global, torch.randint(0, 10, (4, 8), generator=torch.Generator().manual_seed(seed)))
