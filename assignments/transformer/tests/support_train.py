"""The helpers of hidden/test_train.py (never shipped to students): probe data, the reference loop beside the
student's, and the readings its tests share."""

import math

import torch
from support_transformer import (
    fmt,
    helpers,
    probe_pair,
    tokens,
    train_alone,
)

from autograder.checks import as_float64, expect_true

VOCAB, D, MAX_LEN, LENGTH = 6, 8, 16, 9  # the probes' vocabulary, width, positions and sequence length


def probe_data(gen, n_train=8, n_val=6):
    """Train rows start with a non-zero token and validation rows with 0, so the probe can tell them apart."""
    return tokens(n_train, LENGTH, VOCAB, gen, first=(1, VOCAB)), tokens(n_val, LENGTH, VOCAB, gen, first=(0, 1))


def run_both(student, reference, probe_seed, train_tokens, val_tokens, init_scale, **options):
    """Train the same probe with the student's loop (in the worker) and the reference loop (here)."""
    probe, local = probe_pair(student, VOCAB, D, MAX_LEN, seed=probe_seed, init_scale=init_scale)
    got = train_alone(student, probe, train_tokens, val_tokens, **options)
    want = reference.train(local, train_tokens, val_tokens, **options)
    return probe, local, got, want


def history_keys_ok(got, options):
    expect_true(
        isinstance(got, dict) and {"train_loss", "val_loss", "best_epoch"} <= set(got),
        f"train(...) must return a dict with keys 'train_loss', 'val_loss' and 'best_epoch'; got {got!r:.200}",
    )
    for key in ("train_loss", "val_loss"):
        expect_true(
            len(got[key]) == options["epochs"],
            f"train(..., epochs={options['epochs']}): history['{key}'] has {len(got[key])} entries, expected one "
            "float per epoch.",
        )


def flat(history):
    """A history as one list of numbers: train losses, validation losses, best epoch (NaN where not a number)."""

    def number(v):
        try:
            return float(v)
        except (TypeError, ValueError):
            return math.nan

    return [number(v) for v in [*history["train_loss"], *history["val_loss"], history["best_epoch"]]]


def rising_validation(reference, gen, seed, options, tries=6):
    """Probe data on which the reference's validation loss bottoms out early and then rises.

    Chosen on the grader side (the reference is trusted): the first candidate whose best epoch is
    neither the first nor the last and is not the epoch of lowest training loss, so that picking the
    checkpoint by training loss, or keeping the last weights, gives a different model (in a loop that trains
    like the reference; the test judges the loop on its own history). Four training
    rows and a high learning rate make the probe overfit within a few epochs; about half of the
    random candidates qualify, so a few tries almost always find one, and the test stays valid (only
    less sharp) when none does. Returns the data.
    """
    epochs = options["epochs"]
    for _ in range(tries):
        data = tokens(4, LENGTH, VOCAB, gen), tokens(6, LENGTH, VOCAB, gen)
        local = helpers().ProbeLM(VOCAB, D, MAX_LEN, seed=seed, init_scale=1.0)
        history = reference.train(local, *data, **options)
        train_loss, best = history["train_loss"], history["best_epoch"]
        lowest_train = min(range(epochs), key=lambda i: train_loss[i])
        if 1 <= best <= epochs - 2 and lowest_train != best:
            break
    return data


def epoch_and_weights(best_epoch, state):
    """One float64 vector: the best epoch, then the weights flattened (in name order)."""
    try:
        epoch = float(best_epoch)
    except (TypeError, ValueError):
        epoch = math.nan
    weights = [as_float64(state[k], "the weights").detach().reshape(-1) for k in sorted(state)]
    return torch.cat([torch.tensor([epoch], dtype=torch.float64), *weights])


def expect_real_losses(history, what):
    """The history holds cross-entropies (a constant answer has no best epoch to find)."""
    losses = [float(v) for v in list(history["train_loss"]) + list(history["val_loss"])]
    expect_true(all(0 < v < 100 and math.isfinite(v) for v in losses),
                f"{what}: the losses {fmt(losses)} are not cross-entropies (each is positive, near ln {VOCAB} = "
                f"{math.log(VOCAB):.3g} for a probe that knows nothing). Record lm_loss(...).item() of every batch.")


def frozen_loss(reference, probe_args, probe_kwargs, val_tokens, training=False):
    """lm_loss of a fresh grader-side probe on ``val_tokens`` (eval mode unless ``training``), as a float."""
    local = helpers().ProbeLM(*probe_args, **probe_kwargs)
    local.train(training)
    with torch.no_grad():
        return float(reference.lm_loss(local, val_tokens))


def validation_calls_with_grad(log):
    return sum(bool(c.get("grad_enabled")) for c in log if isinstance(c, dict) and c.get("watched"))


def counting_reference_model(reference, state, vocab):
    """The reference TinyCausalLM (the contract's default sizes) holding the weights read back from the student's.

    Returns (model or None, what went wrong). Only the reference's parameter names are taken (a persistent
    positional table the student keeps beside them is left out: the reference builds its own).
    """
    with torch.random.fork_rng():
        model = reference.TinyCausalLM(vocab)
    want = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    missing = sorted(k for k in want if k not in state)
    wrong = sorted(k for k in want if k in state and tuple(state[k].shape) != want[k])
    if missing or wrong:
        return None, (f"missing {missing[:6]}" if missing else "") + (f" wrong shapes {wrong[:6]}" if wrong else "")
    model.load_state_dict({k: torch.as_tensor(state[k]).detach().to(torch.float32) for k in want})
    return model.eval(), ""
