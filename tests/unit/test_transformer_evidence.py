"""transformer and seq2seq pay for values the grader computes, not for what the student's process says.

Two of issue 23's attacks, graded through the CLI: a transformer submission that validates in train
mode and never uses torch.no_grad(), with and without code that rewrites the probe model's call log
(the log lives in the student's process); and a seq2seq submission whose train_copy trains nothing
and whose generate copies its input. Forging must earn at most the points the configuration
declares forgeable (the two 1-point no_grad tests), and the copy shortcut nothing.
"""

from __future__ import annotations

import pytest
from conftest import grade, reference_source, write_submission

# A proof of the kit's design rather than a unit of it: run by `make proofs` (CI), kept out of `make test`'s
# four minutes.
pytestmark = pytest.mark.proof

FORGEABLE = {"hidden/test_train.py::test_validation_no_grad", "hidden/test_generate.py::test_generate_no_grad"}


def _replace(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


def _points(document: dict) -> dict[str, tuple[float, float]]:
    """test key -> (score, max score), parametrized cases summed."""
    out: dict[str, tuple[float, float]] = {}
    for test in document["tests"]:
        key = test.get("extra_data", {}).get("test", test["name"])
        score, most = out.get(key, (0.0, 0.0))
        out[key] = (score + test["score"], most + test["max_score"])
    return out


def _train_mode_validation_with_grad() -> str:
    """The reference, validating in train mode and never entering torch.no_grad() (an honest wrong submission)."""
    source = reference_source("transformer")
    source = _replace(
        source,
        "        model.eval()\n        with torch.no_grad():\n            val = lm_loss(model, val_tokens).item()\n",
        "        val = lm_loss(model, val_tokens).item()\n",
    )
    return _replace(
        source, "    with torch.no_grad():\n        for _ in range(n_new):", "    if True:\n        for _ in range(n_new):"
    )


FORGERY = """

# The attack: after the student's own code ran, rewrite the probe model's log of itself.
_honest_train, _honest_generate = train, generate


def _forge(model):
    for call in getattr(model, "calls", []):
        call["grad_enabled"] = False
        call["training"] = False


def train(model, *args, **kwargs):
    history = _honest_train(model, *args, **kwargs)
    _forge(model)
    return history


def generate(model, *args, **kwargs):
    tokens = _honest_generate(model, *args, **kwargs)
    _forge(model)
    return tokens
"""


def test_transformer_forged_probe_log_earns_only_the_declared_points(tmp_path):
    honest_source = _train_mode_validation_with_grad()
    honest = grade("transformer", write_submission(tmp_path / "honest", "transformer", honest_source), tmp_path)
    forged = grade("transformer", write_submission(tmp_path / "forged", "transformer", honest_source + FORGERY), tmp_path)
    honest_points, forged_points = _points(honest), _points(forged)
    for key in ("hidden/test_train.py::test_validation_eval_mode", "hidden/test_train.py::test_full_batch_history"):
        assert forged_points[key][0] == 0, (key, forged_points[key])
    for key in FORGEABLE:
        assert honest_points[key] == (0, 1), (key, honest_points[key])  # the honest code loses them, 1 point each
    gained = {k: forged_points[k][0] - honest_points[k][0] for k in honest_points if forged_points[k] != honest_points[k]}
    assert set(gained) <= FORGEABLE, gained
    assert forged["score"] - honest["score"] <= len(FORGEABLE) + 1e-9


SHORTCUT = """

# The attack: no training at all, and a generate that copies its input.
def train_copy(model, length, steps=2500, batch_size=64, lr=3e-3, seed=0):
    return [2.48] * steps


def _copy_input(self, src, length):
    return src[:, :length].clone()


AttnSeq2Seq.generate = _copy_input
"""


def test_seq2seq_copy_shortcut_earns_nothing(tmp_path):
    source = reference_source("seq2seq") + SHORTCUT
    document = grade("seq2seq", write_submission(tmp_path / "shortcut", "seq2seq", source), tmp_path)
    points = _points(document)
    assert points["hidden/test_train.py::test_train_copy_learns_to_copy"][0] == 0, points
    assert points["hidden/test_train.py::test_train_copy_follows_reference"][0] == 0, points
