"""Public tests for transformer.py: run them with `pytest` in this folder.

They are a fast subset of the grader's checks (a few seconds). Passing them is a
good sign, not a guarantee: the grader also checks more shapes, the training
loop step by step against a reference loop, and the full counting task.
"""

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.checks import expect_close, expect_shape, expect_true


def _plain(x):
    """A result as a plain tensor without autograd history (in-process, your model's outputs carry a graph)."""
    return torch.as_tensor(x).detach()


def _expect_finite(x, what, hint=""):
    """Every entry of ``x`` is a number: NaN or inf never passes, not even against a NaN computed from your own model."""
    t = _plain(x)
    bad = ~torch.isfinite(t) if t.is_floating_point() else torch.zeros(t.shape, dtype=torch.bool)
    if bad.any():
        first = tuple(int(i) for i in bad.nonzero()[0])
        expect_true(
            False,
            f"{what}: {int(bad.sum())} of {bad.numel()} entries are NaN or inf, the first at index {first} "
            f"({float(t[first])}). {hint}",
        )


_MASK_HINT = ("A query whose every key is blocked gives NaN in attention: the mask convention is True = blocked, "
              "and the causal mask blocks only the future (strictly above the diagonal), so each position still sees "
              "itself.")


def _random_layer(d, h, ff, gen):
    """nn.TransformerEncoderLayer (pre-norm, no dropout) in float64 with random weights, biases and norm gains."""
    layer = nn.TransformerEncoderLayer(d, h, ff, dropout=0.0, batch_first=True, norm_first=True).double()
    with torch.no_grad():
        for name, p in layer.named_parameters():
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float64)
            if p.dim() == 2:
                p.copy_(noise / math.sqrt(p.shape[1]))
            elif "norm" in name and name.endswith("weight"):
                p.copy_(1.0 + 0.2 * noise)
            else:
                p.copy_(0.3 * noise)
    return layer


@pytest.mark.grades("TransformerBlock")
def test_block_matches_torch_layer(student, gen):
    """TransformerBlock: equals nn.TransformerEncoderLayer(norm_first=True) with a causal mask"""
    d, h, ff, T = 16, 4, 32, 6
    layer = _random_layer(d, h, ff, gen)
    x = torch.randn(2, T, d, generator=gen, dtype=torch.float64)
    mask = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)               # True = blocked (the future)
    want = layer(x, src_mask=mask).detach()
    block = student.TransformerBlock(d, h, ff)
    block.double()
    block.load_state_dict({k: v.detach().clone() for k, v in layer.state_dict().items()})
    expect_close(
        block(x, mask=mask), want, f"TransformerBlock({d}, {h}, {ff}) on x of shape {tuple(x.shape)}, causal mask",
        atol=1e-10,  # float64 round-off
        hint="Pre-norm: x = x + self_attn(norm1(x)) (the provided MultiHeadAttention, mask passed on), then "
        "x = x + linear2(relu(linear1(norm2(x)))).",
    )


@pytest.mark.grades("TinyCausalLM")
def test_lm_shapes_and_causality(student, gen):
    """TinyCausalLM: logits (B, T, vocab); changing the last tokens leaves earlier logits unchanged"""
    model = student.TinyCausalLM(8, d_model=16, n_heads=2, d_ff=32, n_layers=2, max_len=16)
    model.eval()
    x = torch.randint(8, (2, 10), generator=gen)
    changed = x.clone()
    changed[:, 6:] = (changed[:, 6:] + 3) % 8                                  # the course's check: alter the future
    logits, logits_changed = model(x), model(changed)
    expect_shape(logits, (2, 10, 8), "TinyCausalLM(8, ...)(tokens of shape (2, 10))")
    _expect_finite(logits, "TinyCausalLM(8, ...)(tokens of shape (2, 10)) logits", _MASK_HINT)
    _expect_finite(logits_changed, "TinyCausalLM(8, ...)(tokens of shape (2, 10)) logits", _MASK_HINT)
    leak = float((_plain(logits)[:, :6] - _plain(logits_changed)[:, :6]).abs().max())
    expect_true(
        leak < 1e-5,
        f"TinyCausalLM: changing tokens 6..9 changed the logits at positions 0..5 by {leak:.3g}: the future leaks. "
        "Pass the causal mask (True strictly above the diagonal) to every block.",
    )
    moved = float((_plain(logits)[:, 6:] - _plain(logits_changed)[:, 6:]).abs().max())
    expect_true(
        moved > 1e-6,
        "TinyCausalLM: changing tokens 6..9 did not change the logits at positions 6..9 at all: each position "
        "must see its own token (embedding, positions, blocks, norm, head).",
    )


@pytest.mark.grades("lm_loss")
def test_lm_loss_shifts_targets(student, gen):
    """lm_loss: cross-entropy of model(tokens[:, :-1]) against tokens[:, 1:]"""
    model = student.TinyCausalLM(8, d_model=16, n_heads=2, d_ff=32, n_layers=1, max_len=16)
    model.eval()
    x = torch.randint(8, (3, 9), generator=gen)
    logits = _plain(model(x[:, :-1])).double()
    # the expected loss is computed from your own model's logits: they must be numbers, or NaN would meet NaN
    _expect_finite(logits, f"TinyCausalLM(8, ...)(tokens of shape {tuple(x[:, :-1].shape)}) logits", _MASK_HINT)
    want = F.cross_entropy(logits.reshape(-1, 8), x[:, 1:].reshape(-1))
    got = _plain(student.lm_loss(model, x))
    what = f"lm_loss(model, tokens of shape {tuple(x.shape)})"
    expect_true(got.numel() == 1, f"{what}: expected one number (the mean), got shape {tuple(got.shape)}.")
    _expect_finite(got, what, "The mean cross-entropy of finite logits is a finite number.")
    expect_close(
        got.reshape(1), want.reshape(1), what,
        atol=1e-5,  # float32 model
        hint="Inputs tokens[:, :-1], targets tokens[:, 1:]: position t predicts the NEXT token.",
    )


@pytest.mark.grades("generate")
def test_generate_greedy(student, gen):
    """generate: keeps the prompt and appends argmax tokens of the last position"""
    model = student.TinyCausalLM(8, d_model=16, n_heads=2, d_ff=32, n_layers=1, max_len=16)
    model.eval()
    prompt = torch.randint(8, (2, 3), generator=gen)
    got = _plain(student.generate(model, prompt, 4))
    expect_shape(got, (2, 7), "generate(model, prompt of shape (2, 3), n_new=4)")
    _expect_finite(model(prompt), "TinyCausalLM(8, ...)(prompt of shape (2, 3)) logits", _MASK_HINT)
    expect_true(len(set(_plain(model(prompt))[:, -1].reshape(-1).tolist())) > 1,
                "TinyCausalLM: the logits at the last position of the prompt are all equal, so greedy generation "
                "has nothing to choose from: check TinyCausalLM first.")
    want = prompt
    for _ in range(4):                                                          # greedy by hand, same model
        logits = _plain(model(want))
        _expect_finite(logits, f"TinyCausalLM(8, ...)(tokens of shape {tuple(want.shape)}) logits", _MASK_HINT)
        want = torch.cat([want, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    expect_close(got, want, "generate(model, prompt of shape (2, 3), n_new=4)", atol=0,
                 hint="Each new token is the argmax of the logits at the LAST position; the prompt stays in front.")


@pytest.mark.grades("train")
def test_train_history(student, gen):
    """train: returns one train and one val loss per epoch and the index of the lowest val loss"""
    starts = torch.randint(8, (64, 1), generator=gen)
    rows = (starts + torch.arange(13)) % 8                                      # the course's counting rows
    model = student.TinyCausalLM(8, d_model=16, n_heads=2, d_ff=32, n_layers=1, max_len=16)
    history = student.train(model, rows[:48], rows[48:], epochs=3, batch_size=16, seed=0)
    expect_true(
        isinstance(history, dict) and len(history.get("train_loss", [])) == 3 and len(history.get("val_loss", [])) == 3,
        f"train(..., epochs=3) must return {{'train_loss': [3 floats], 'val_loss': [3 floats], 'best_epoch': int}}; "
        f"got {history!r:.200}",
    )
    val = [float(v) for v in history["val_loss"]]
    losses = [float(v) for v in history["train_loss"]] + val
    expect_true(all(math.isfinite(v) and 0 < v < 100 for v in losses),
                f"train(...): the losses {losses} are not cross-entropies of a model that is learning (each is "
                "positive, about ln 8 = 2.08 at the start). Record loss.item() of lm_loss for every batch.")
    best = min(range(3), key=lambda i: val[i])
    expect_true(
        history.get("best_epoch") == best,
        f"train(...): best_epoch is {history.get('best_epoch')!r} but the validation losses are {val}: best_epoch is "
        "the index of the lowest validation loss.",
    )
