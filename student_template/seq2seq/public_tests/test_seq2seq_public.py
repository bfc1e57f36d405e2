"""Public tests for seq2seq.py: fast checks you can run with `pytest` in this folder.

They check shapes, conventions and a small worked example; the hidden tests
compare your code with a reference on many more inputs, so passing these is
necessary, not sufficient.
"""

import math

import pytest
import torch

from autograder.checks import expect_close, expect_dtype, expect_shape, expect_true

VOCAB, BOS = 12, 10


@pytest.mark.grades("attend")
def test_attend_worked_example(student):
    """attend: a query aligned with one encoder state puts most weight on it"""
    # Three encoder states (T = 3, h = 4); the query points along the second one.
    enc = torch.tensor([[[1.0, 0.0, 0.0, 0.0], [0.0, 4.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]], dtype=torch.float64)
    query = torch.tensor([[0.0, 2.0, 0.0, 0.0]], dtype=torch.float64)
    context, weights = student.attend(query, enc)
    expect_shape(weights, (1, 3), "attend weights for query (1, 4), enc (1, 3, 4)")
    expect_shape(context, (1, 4), "attend context for query (1, 4), enc (1, 3, 4)")
    # scores = enc · query / sqrt(4) = [0, 8, 0] / 2 = [0, 4, 0]
    e4 = math.exp(4.0)
    want_weights = torch.tensor([[1.0, e4, 1.0]], dtype=torch.float64) / (e4 + 2)
    # 1e-12: float64 arithmetic on a handful of numbers.
    expect_close(
        weights, want_weights, "attend weights on the worked example (scores [0, 4, 0] after dividing by sqrt(4))",
        atol=1e-12,
        hint="weights = softmax(enc · query / sqrt(h)) over the T positions; h = 4 here, so divide by 2.",
    )
    want_context = want_weights @ enc[0]  # (1, 4) weighted average of the encoder states
    expect_close(
        context, want_context, "attend context on the worked example", atol=1e-12,
        hint="context = weights @ enc: the weighted average of the encoder states.",
    )


@pytest.mark.grades("AttnSeq2Seq")
def test_model_shapes(student):
    """AttnSeq2Seq: step, forward and generate return the documented shapes and dtypes"""
    model = student.AttnSeq2Seq(hidden=16, vocab=VOCAB, emb=8)
    src = torch.tensor([[1, 2, 3, 4, 5], [9, 8, 7, 6, 5]])
    tgt_in = torch.tensor([[BOS, 1, 2, 3, 4], [BOS, 9, 8, 7, 6]])
    logits = model(src, tgt_in)
    expect_shape(logits, (2, 5, VOCAB), "AttnSeq2Seq(hidden=16, emb=8)(src (2, 5), tgt_in (2, 5)) logits")
    finite = torch.isfinite(torch.as_tensor(logits).detach())
    expect_true(
        bool(finite.all()),
        f"AttnSeq2Seq(hidden=16, emb=8)(src (2, 5), tgt_in (2, 5)): {int((~finite).sum())} of {finite.numel()} "
        "logits are NaN or inf; every logit of a freshly built model is a finite number.",
    )
    other = torch.as_tensor(model(src.flip(1), tgt_in)).detach()
    expect_true(
        float((torch.as_tensor(logits).detach() - other).abs().max()) > 0,
        "AttnSeq2Seq: the logits did not change when the source sequence was reversed: the decoder must read "
        "the encoder's states (its last hidden state, and attention over all of them).",
    )
    out = model.generate(src, 5)
    expect_shape(out, (2, 5), "AttnSeq2Seq.generate(src (2, 5), length=5)")
    expect_dtype(out, torch.long, "AttnSeq2Seq.generate(src (2, 5), length=5)")
    step = model.step(torch.tensor([BOS, BOS]), torch.zeros(2, 16), torch.zeros(2, 5, 16))
    expect_true(
        isinstance(step, (tuple, list)) and len(step) == 2,
        "AttnSeq2Seq.step(tok (2,), state (2, 16), enc (2, 5, 16)) must return a pair (logits, new_state).",
    )
    expect_shape(step[0], (2, VOCAB), "AttnSeq2Seq.step logits")
    expect_shape(step[1], (2, 16), "AttnSeq2Seq.step new state")


@pytest.mark.grades("copy_batch")
def test_copy_batch_structure(student):
    """copy_batch: digits 0-9 and tgt_in = BOS followed by src shifted right"""
    src, tgt_in = student.copy_batch(4, 6, None)
    src, tgt_in = torch.as_tensor(src), torch.as_tensor(tgt_in)
    expect_shape(src, (4, 6), "copy_batch(4, 6, None) src")
    expect_shape(tgt_in, (4, 6), "copy_batch(4, 6, None) tgt_in")
    expect_dtype(src, torch.long, "copy_batch src")
    expect_true(
        bool(((src >= 0) & (src <= 9)).all()),
        f"copy_batch src must hold digits 0-9; got values from {int(src.min())} to {int(src.max())}.",
    )
    expect_true(
        len(set(src.reshape(-1).tolist())) > 1,
        "copy_batch src must be random digits (torch.randint(0, 10, ...)); all 24 of them are equal.",
    )
    expect_true(
        bool((tgt_in[:, 0] == BOS).all()),
        f"copy_batch tgt_in must start with BOS = {BOS} in every row; its first column is {tgt_in[:, 0].tolist()}.",
    )
    expect_true(
        torch.equal(tgt_in[:, 1:], src[:, :-1]),
        "copy_batch tgt_in[:, 1:] must equal src[:, :-1] (the target shifted right by one): "
        f"src[0] = {src[0].tolist()}, tgt_in[0] = {tgt_in[0].tolist()}.",
    )


@pytest.mark.grades("train_copy")
def test_train_copy_runs(student):
    """train_copy: a few steps return one finite loss per step, starting near log(12)"""
    model = student.AttnSeq2Seq(hidden=16, vocab=VOCAB, emb=8)
    losses = student.train_copy(model, 4, steps=3, batch_size=8, lr=3e-3, seed=0)
    expect_true(
        isinstance(losses, (list, tuple)) and len(losses) == 3,
        f"train_copy(..., steps=3) must return a list of 3 losses; got {type(losses).__name__} "
        f"{'of length ' + str(len(losses)) if isinstance(losses, (list, tuple)) else ''}.",
    )
    losses = [float(x) for x in losses]
    expect_true(all(math.isfinite(x) for x in losses), f"train_copy losses must be finite; got {losses}.")
    # An untrained model is close to uniform over 12 symbols: loss about log(12) = 2.48.
    expect_true(
        abs(losses[0] - math.log(12)) < 0.5,
        f"the first loss of an untrained model should be near log(12) = 2.48 (a near-uniform guess over 12 "
        f"symbols); got {losses[0]:.3f}. Is it the mean cross-entropy over all B·T tokens?",
    )
