"""Mutants derived from a reference: operators, stable ids, only inside the solution markers."""

from autograder.release.mutants import Mutant, Score, derive

SOURCE = '''import math
import torch


def provided(x):
    return x.transpose(-2, -1)  # outside the markers: never mutated


def attend(q, k, v, mask=None):
    """contract"""
    # BEGIN SOLUTION
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    m = scores.amax(dim=-1, keepdim=True)
    e = torch.exp(scores - m)
    w = e / e.sum(dim=-1, keepdim=True)
    return w @ v, torch.ones(3, 3).triu(diagonal=1)
    # END SOLUTION
'''


def test_each_operator_finds_its_site_inside_the_markers_only():
    mutants = {m.id: m for m in derive(SOURCE)}
    for expected in (
        "no-scaling:attend:0",
        "transpose:attend:0",
        "neg-inf:attend:0",
        "no-max-shift:attend:0",
        "flip-mask:attend:0",
        "no-renormalise:attend:0",
        "dim:attend:0",
        "diagonal+1:attend:0",
        "diagonal-1:attend:0",
        "mean-for-sum:attend:0",
    ):
        assert expected in mutants, sorted(mutants)
    assert not any(":provided:" in m for m in mutants)
    assert "-1000000000.0" in mutants["neg-inf:attend:0"].diff and "+" in mutants["neg-inf:attend:0"].diff
    assert "diagonal=2" in mutants["diagonal+1:attend:0"].source


def test_ids_do_not_move_when_another_function_changes():
    before = {m.id for m in derive(SOURCE)}
    edited = SOURCE.replace("def provided(x):", "def helper(y):\n    return y\n\n\ndef provided(x):")
    assert {m.id for m in derive(edited)} == before


def test_a_survivor_counts_unless_recorded_as_equivalent():
    survivor = Mutant("compare:f:0", "", "")
    score = Score("a", total=4, killed=["x", "y", "z"], survivors=[survivor], equivalent={}, seconds=0)
    assert score.unexplained == [survivor] and score.score == 75
    recorded = Score("a", 4, ["x", "y", "z"], [survivor], {"compare:f:0": "integers"}, 0)
    assert recorded.unexplained == [] and recorded.score == 100
