"""Hidden tests for copy_batch(batch_size, length, generator).

A torch.Generator cannot cross into the worker, so the worker helper
``copy_batches`` creates it there from a seed, calls the student's copy_batch
twice with it and returns both batches and the generator's final state; the
same recipe runs here on the reference. Equal second batches and equal final
states show that each call made exactly the one draw
``torch.randint(0, 10, (batch_size, length), generator=generator)``.
"""

import pytest
import torch
from support_seq2seq import HELPERS

from autograder.checks import expect_true

pytestmark = pytest.mark.grades("copy_batch")  # the function these tests grade (summary, dashboard, pytest -m)

CASES = [(5, 7), (64, 8), (3, 1)]  # (batch_size, length); length 1 gives tgt_in = [[BOS]]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "B{}xT{}".format(*c))
def test_copy_batch_matches_reference(student, reference, seed, case):
    """copy_batch: same batches as the reference from a seeded generator, one draw per call"""
    batch_size, length = case
    got = student.helper("copy_batches", seed, batch_size, length, calls=2)
    want = HELPERS.run_copy_batches(reference.copy_batch, seed, batch_size, length, calls=2)
    what = f"copy_batch({batch_size}, {length}, generator)"
    # The generator first: a copy_batch that ignores it (global random state) is named by the diagnoser,
    # which runs this test again on each catalogued mistake and compares where the generator ends.
    expect_true(
        torch.equal(torch.as_tensor(got["state"]), want["state"]),
        f"{what}: after two calls the generator is not where one draw of "
        "torch.randint(0, 10, (batch_size, length), generator=generator) per call leaves it: copy_batch must make "
        "exactly that one random draw, with the generator it is given, and nothing else.",
        got=torch.as_tensor(got["state"]),
    )
    for call_index, (got_pair, want_pair) in enumerate(zip(got["batches"], want["batches"])):
        nth = ["first", "second"][call_index]
        for name, g, w in zip(("src", "tgt_in"), got_pair, want_pair):
            g = torch.as_tensor(g)
            expect_true(
                tuple(g.shape) == tuple(w.shape),
                f"{what}, {nth} call: {name} has shape {tuple(g.shape)}, expected {tuple(w.shape)} "
                "(batch_size, length).",
            )
            expect_true(
                g.dtype == torch.long,
                f"{what}, {nth} call: {name} has dtype {str(g.dtype).replace('torch.', '')}, expected int64 (long) tokens.",
            )
            bad = g != w
            if bad.any():
                b = int(bad.nonzero()[0][0])
                hint = {
                    "src": "src must be exactly torch.randint(0, 10, (batch_size, length), generator=generator): "
                    "pass the generator, draw the digits in that shape (not (length, batch_size)) and make no "
                    "other random draw before it.",
                    "tgt_in": "tgt_in is BOS (10) followed by src[:, :-1], the target shifted right by one, so "
                    "that the decoder predicts src[:, t] having seen only src[:, :t].",
                }[name]
                expect_true(
                    False,
                    f"{what}, {nth} call (generator seeded with a fixed seed): {name} differs from the expected "
                    f"batch in {int(bad.sum())} of {bad.numel()} entries, the first in row {b} (expected "
                    f"{w[b].tolist()}, got {g[b].tolist()}). {hint}",
                    got=g,
                )
