"""lm_loss: shifted-target mean cross-entropy, on a grader probe model."""

import pytest
import torch
import torch.nn.functional as F
from support_transformer import probe_pair, tokens

from autograder.checks import describe, expect_close, expect_true

pytestmark = pytest.mark.grades("lm_loss")  # the function these tests grade (summary, dashboard, pytest -m)

CASES = {"vocab 5, (4, 9)": (5, 4, 9), "vocab 11, (3, 13)": (11, 3, 13)}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_lm_loss_matches_reference(student, reference, gen, seed, case):
    """lm_loss: mean cross-entropy of model(tokens[:, :-1]) against tokens[:, 1:]"""
    vocab, B, T = CASES[case]
    probe, local = probe_pair(student, vocab, 8, 16, seed=seed)
    probe.eval()
    local.eval()
    x = tokens(B, T, vocab, gen)
    with torch.no_grad():
        want = reference.lm_loss(local, x)
        same_position = F.cross_entropy(local(x[:, :-1]).reshape(-1, vocab), x[:, :-1].reshape(-1))
    got = student.lm_loss(probe, x)
    _check(got, want, x, vocab, same_position)


def _check(got, want, x, vocab, same_position):
    what = f"lm_loss(model, tokens) on tokens of shape {tuple(x.shape)} with a {vocab}-token vocabulary"
    expect_true(
        isinstance(got, (float, torch.Tensor)) and torch.as_tensor(got).numel() == 1,
        f"{what}: expected one number (a scalar tensor, the mean over every position of every row), got "
        f"{describe(got)}. Average the cross-entropy over all B*T positions (F.cross_entropy does by default).",
    )
    expect_close(
        got, want, what,
        atol=1e-10,  # float64 probe model: both sides compute the same mean to round-off
        hint="The model reads tokens[:, :-1] and position t is scored against the NEXT token, tokens[:, t+1] "
        f"(targets tokens[:, 1:]). Scoring it against its own input (no shift) would give {float(same_position):.6f}. "
        "Average over every position of every row, and take the vocabulary size from the logits' last dimension.",
    )
