"""train: judged by its behaviour against the reference loop on identical probe models.

Every probe run uses one full batch (batch_size >= number of rows), so the
shuffle order cannot matter (up to float64 round-off in the mean), and the
reference's history is the expected one, step for step. The probe's initial
scale and the learning rate are large enough that gradient clipping at 1.0
triggers and AdamW's weight decay moves the weights visibly. Every call of the
student's loop runs with the contract's lm_loss in place of the student's
(support_transformer.train_alone): these tests charge the loop's own mistakes only.
"""

import math

import pytest
import torch
import torch.nn.functional as F
from support_train import (
    LENGTH,
    MAX_LEN,
    VOCAB,
    D,
    counting_reference_model,
    epoch_and_weights,
    expect_real_losses,
    flat,
    frozen_loss,
    history_keys_ok,
    probe_data,
    rising_validation,
    run_both,
    validation_calls_with_grad,
)
from support_transformer import (
    counting,
    expect_a_loop_that_trains,
    expect_grad_off_in_source,
    fmt,
    got_state,
    helpers,
    probe_pair,
    tokens,
    train_alone,
)

from autograder.checks import Feedback, expect_close, expect_true

pytestmark = pytest.mark.grades("train")  # the function these tests grade (summary, dashboard, pytest -m)

# float64 probes: two correct loops differ by round-off in sums taken in another order, which
# Adam's normalised steps keep around 1e-13 after a few epochs; but the contract also allows
# clipping by hand, g * max_norm / ||g||, without clip_grad_norm_'s 1e-6 on the norm. Measured
# over 12 seeds on these tests' probes (variants/clip_without_eps.py): histories differ by up to
# 1.1e-7 absolute, 7.2e-8 relative; final weights by up to 3.8e-7 absolute. Every catalogued
# mistake moves the history by more than 1e-4 (relative) and the weights by more than 1e-3.
RTOL = 1e-6
WEIGHTS_ATOL = 4e-6


def test_full_batch_history(student, reference, gen, seed):
    """train: one full batch per epoch follows the reference loop step for step (losses per epoch)"""
    train_tokens, val_tokens = probe_data(gen)
    options = dict(epochs=6, lr=0.05, batch_size=64, seed=seed)
    _, _, got, want = run_both(student, reference, seed, train_tokens, val_tokens, init_scale=2.0, **options)
    history_keys_ok(got, options)
    setting = (f"train(probe model, train_tokens {tuple(train_tokens.shape)}, val_tokens {tuple(val_tokens.shape)}, "
               "epochs=6, lr=0.05, batch_size=64), so one full batch and one optimiser step per epoch")
    expect_close(
        got["train_loss"], want["train_loss"], f"history['train_loss'] of {setting}", atol=1e-10, rtol=RTOL,
        hint="Each step: optimizer.zero_grad(), loss = lm_loss(model, batch), loss.backward(), "
        "nn.utils.clip_grad_norm_(model.parameters(), 1.0), optimizer.step(), with "
        "torch.optim.AdamW(model.parameters(), lr=lr) (not Adam: AdamW's weight decay of 0.01 is part of the "
        "recipe) and the lr you were given. The model must be in train mode (model.train()) during every epoch.",
    )
    expect_close(
        got["val_loss"], want["val_loss"], f"history['val_loss'] of {setting}", atol=1e-10, rtol=RTOL,
        hint="The validation loss is lm_loss on val_tokens after the epoch's steps, computed in eval mode "
        "(model.eval(), so dropout-like layers behave as at test time) inside torch.no_grad().",
    )


# More data for a loop whose own validation loss did not turn at lr=0.1 (SGD's, say): the learning rates of the
# tries after the first. Over 20 seeds the reference and Adam turned at the first try, SGD within three 19 times.
RETRY_LRS = (1.0, 1.0)


def test_best_epoch_and_weights(student, reference, gen, seed):
    """train: best_epoch is the epoch of the lowest of the loop's own validation losses, and the model holds its weights"""
    # Judged on the loop's own history, not on the reference's trajectory (test_full_batch_history judges that): a
    # loop with another optimiser (SGD, Adam) that keeps the right checkpoint loses nothing here. The first data are
    # chosen on the reference so that its validation loss bottoms out early and rises: a checkpoint chosen on the
    # training loss, or the last weights kept, shows in any loop that trains like the recipe. When the loop's own
    # validation loss does not turn there (lowest at the first or last epoch), it gets other data and a higher lr.
    epochs = 8
    data = rising_validation(reference, gen, seed, dict(epochs=epochs, lr=0.1, batch_size=64, seed=seed))
    probe_args, probe_kwargs = (VOCAB, D, MAX_LEN), {"seed": seed, "init_scale": 1.0}
    for attempt, lr in enumerate((0.1, *RETRY_LRS)):
        if attempt:
            data = tokens(4, LENGTH, VOCAB, gen), tokens(6, LENGTH, VOCAB, gen)
        options = dict(epochs=epochs, lr=lr, batch_size=64, seed=seed)
        probe = student.helper("ProbeLM", *probe_args, **probe_kwargs)
        got = train_alone(student, probe, *data, **options)
        history_keys_ok(got, options)
        setting = f"train(probe model, epochs={epochs}, lr={lr}, one full batch)"
        expect_real_losses(got, setting)
        val = [float(v) for v in got["val_loss"]]
        lowest = val.index(min(val))  # the first of the lowest
        # The diagnoser compares the whole history (losses and best epoch), not the epoch index alone.
        expect_true(
            got["best_epoch"] == lowest,
            f"{setting}: best_epoch is {got['best_epoch']!r}, but your own validation losses {fmt(val)} are lowest "
            f"at epoch {lowest} (training losses {fmt(got['train_loss'])}). best_epoch is the index (from 0) of the "
            "LOWEST VALIDATION loss, the first on ties: the training loss keeps falling while the model overfits, so "
            "it cannot choose the checkpoint (and the test set must never be used for it).",
            got=flat(got),
        )
        if 1 <= lowest <= epochs - 2:
            break
    train_tokens, val_tokens = data
    # The weights of epoch best_epoch as the loop itself computes them: the same call stopped after that epoch (the
    # same seed gives the same first epochs) ends on its lowest validation loss, so it holds them whatever it
    # restores. Nothing here depends on the reference's trajectory, nor on how the loop computes its losses.
    final = got_state(probe)
    again = student.helper("ProbeLM", *probe_args, **probe_kwargs)
    train_alone(student, again, train_tokens, val_tokens, **{**options, "epochs": lowest + 1})
    for name, value in got_state(again).items():
        try:
            expect_close(
                final.get(name, torch.full_like(value, float("nan"))),
                value,
                f"model.state_dict()['{name}'] after {setting} returned best_epoch={lowest}, against the same "
                f"parameter after the same call with epochs={lowest + 1} (which ends on that epoch)",
                atol=WEIGHTS_ATOL,  # the same computation; a clipping by hand without the 1e-6 differs more (see RTOL)
                rtol=RTOL,
                hint="After the loop the model must hold the weights it had at the end of best_epoch. Save them when "
                "the validation loss improves with copy.deepcopy(model.state_dict()) (model.state_dict() alone "
                "returns the live tensors, which later steps overwrite), and load them back with "
                "model.load_state_dict(...) once the loop is over.",
            )
        except Feedback as exc:
            # For the diagnoser: the best epoch with the weights, so that a checkpoint chosen on the training loss
            # (another best epoch, the same last weights) is not named for a loop that only forgot to restore, or
            # to copy, the best weights.
            exc.got = epoch_and_weights(got["best_epoch"], final)
            raise
    expect_a_loop_that_trains(student, reference, (VOCAB, D, MAX_LEN), seed, train_tokens, val_tokens, lr)


def test_train_loss_weighted_by_batch_size(student, reference, gen, seed):
    """train: train_loss is the mean over the epoch's rows (a smaller last batch counts less)"""
    train_tokens, val_tokens = tokens(10, LENGTH, VOCAB, gen), tokens(5, LENGTH, VOCAB, gen)
    probe, local = probe_pair(student, VOCAB, D, MAX_LEN, seed=seed, init_scale=1.0)
    # lr=0 freezes the weights, so every epoch's mean over the rows is the loss of the whole set in
    # train mode, whatever the shuffle: batches of 4, 4 and 2 rows must be weighted 4:4:2
    options = dict(epochs=2, lr=0.0, batch_size=4, seed=seed)
    got = train_alone(student, probe, train_tokens, val_tokens, **options)
    history_keys_ok(got, options)
    with torch.no_grad():
        whole, in_eval_mode = (float(reference.lm_loss(local.train(mode), train_tokens)) for mode in (True, False))
    hint = ("With lr=0 the weights never change, so each epoch's training loss must equal the mean loss over all 10 "
            "rows. Batches have 4, 4 and 2 rows: average the batch losses weighted by their sizes (sum of "
            "loss.item() * len(batch), divided by the number of rows), not the plain mean of the three; and every "
            "row counts: the last, smaller batch is trained on too (no drop_last=True).")
    in_eval = [i for i, v in enumerate(flat(got)[:2]) if abs(v - in_eval_mode) <= 1e-9 * abs(in_eval_mode)]
    if in_eval:  # the loss of the whole set in eval mode: the weighting is right, the mode is not
        hint = (f"Epoch {in_eval[0]}'s training loss is the loss of all 10 rows in EVAL mode ({in_eval_mode:.6f}): "
                "that epoch trained with the model in eval mode. The validation switches to model.eval(); call "
                "model.train() at the start of every epoch, not once before the loop.")
    expect_close(
        got["train_loss"], [whole] * 2,
        "history['train_loss'] of train(probe model, 10 training rows, batch_size=4, lr=0.0, epochs=2)",
        atol=1e-10, rtol=1e-9,  # float64: a weighted mean of batch means equals the full mean to round-off
        hint=hint,
    )


def test_best_epoch_first_on_ties(student, reference, gen, seed):
    """train: best_epoch is the first epoch when validation losses tie"""
    train_tokens, val_tokens = tokens(6, LENGTH, VOCAB, gen), tokens(4, LENGTH, VOCAB, gen)
    probe_args, probe_kwargs = (VOCAB, D, MAX_LEN), {"seed": seed}
    probe = student.helper("ProbeLM", *probe_args, **probe_kwargs)
    options = dict(epochs=3, lr=0.0, batch_size=64, seed=seed)
    got = train_alone(student, probe, train_tokens, val_tokens, **options)
    history_keys_ok(got, options)
    expect_real_losses(got, "train(probe model, lr=0.0, epochs=3)")
    # The tie is the grader's, not the loop's word: lr=0 freezes the weights, so every epoch's validation
    # loss is the loss of the initial probe, computed here. A property (best_epoch == 0) pays only together
    # with the values it is about: a loop returning made-up equal losses earns nothing. Either mode's loss is
    # accepted here (the mode is test_validation_eval_mode's business, and test_full_batch_history's).
    want = frozen_loss(reference, probe_args, probe_kwargs, val_tokens)
    in_train_mode = frozen_loss(reference, probe_args, probe_kwargs, val_tokens, training=True)
    got_val = [float(v) for v in got["val_loss"]]
    if got_val and abs(got_val[0] - in_train_mode) <= 1e-10 + 1e-9 * abs(in_train_mode):
        want = in_train_mode
    expect_close(
        got["val_loss"], [want] * 3,
        "history['val_loss'] of train(probe model, lr=0.0, epochs=3): the weights never change, so each epoch's "
        "validation loss is lm_loss of the initial model on val_tokens",
        atol=1e-10, rtol=1e-9,  # float64 probe, the same weights and the same mean: round-off only
        hint="Compute the validation loss after every epoch as lm_loss(model, val_tokens).item() with the model in "
        "eval mode (model.eval()) inside torch.no_grad().",
    )
    expect_true(
        got["best_epoch"] == 0,
        f"train(probe model, lr=0.0, epochs=3): the weights never change, so the three validation losses are "
        f"equal ({fmt(got['val_loss'])}), and best_epoch must be 0, the first of the tied epochs; got "
        f"{got['best_epoch']!r}. Replace the checkpoint only on a strict improvement (val < best).",
        got=flat(got),
    )


def test_same_seed_same_history(student, reference, gen, seed):
    """train: the same seed gives the same history, whatever the global random state"""
    train_tokens, val_tokens = tokens(12, LENGTH, VOCAB, gen), tokens(4, LENGTH, VOCAB, gen)
    options = dict(epochs=3, lr=0.02, batch_size=3, seed=seed + 1)
    initial = helpers().ProbeLM(VOCAB, D, MAX_LEN, seed=seed).state_dict()
    runs, weights = [], []
    for global_seed in (1, 2):
        student.helper("set_global_seed", 1000 * seed + global_seed)
        student.helper("draw_global", 7 * global_seed)
        probe = student.helper("ProbeLM", VOCAB, D, MAX_LEN, seed=seed)
        runs.append(train_alone(student, probe, train_tokens, val_tokens, **options))
        weights.append(got_state(probe))
    history_keys_ok(runs[0], options)
    expect_real_losses(runs[0], "train(probe model, batch_size=3, epochs=3)")
    # Reproducibility pays only for a loop that trains: the weights the model holds afterwards (read back
    # and compared here) must have moved from the initial ones, and be the same after both runs. A loop
    # that returns a made-up constant history without training earns nothing.
    moved = max(float((weights[0].get(k, v) - v).abs().max()) for k, v in initial.items())
    expect_true(
        moved > 1e-6,
        f"train(probe model, batch_size=3, epochs=3, lr=0.02): the model's weights after training are the "
        f"initial ones (largest change {moved:.3g}): the loop did not train the model it was given. Every step: "
        "zero_grad, lm_loss, backward, clip, optimizer.step() on torch.optim.AdamW(model.parameters(), lr=lr).",
    )
    expect_a_loop_that_trains(student, reference, (VOCAB, D, MAX_LEN), seed, train_tokens, val_tokens, options["lr"])
    expect_close(
        runs[1]["train_loss"], runs[0]["train_loss"],
        "history['train_loss'] of two identical train(..., batch_size=3, seed=same) calls made after different "
        "torch.manual_seed(...) states",
        atol=1e-12,  # the same computation in the same order: identical up to nothing
        hint="The shuffle must come from a torch.Generator seeded with `seed` (torch.Generator().manual_seed(seed)), "
        "created once per call and passed to torch.randperm(n, generator=generator); the global RNG "
        "(torch.randperm(n) alone) depends on whatever ran before.",
    )
    for name, value in weights[0].items():
        expect_close(
            weights[1].get(name, torch.full_like(value, float("nan"))), value,
            f"model.state_dict()['{name}'] after two identical train(..., batch_size=3, seed=same) calls made "
            "after different torch.manual_seed(...) states",
            atol=1e-12,  # the same computation in the same order
            hint="The same seed must give the same training, whatever ran before: shuffle with "
            "torch.randperm(n, generator=torch.Generator().manual_seed(seed)) (one generator per call).",
        )


def test_validation_eval_mode(student, reference, gen, seed):
    """train: the validation loss is the eval-mode loss of the weights after the epoch's steps"""
    # The probe's train mode scales its features (a fixed "dropout"), so the loss of the same weights differs
    # between the modes. One epoch: the model then holds the weights of that epoch (the best, being the only
    # one), whatever the checkpointing does. The grader reads them back and computes their eval-mode
    # validation loss itself; the loop's val_loss must be that number. Nothing the student's process says
    # about its own mode is taken as evidence, only the value it returned.
    train_tokens, val_tokens = probe_data(gen)
    probe_args, probe_kwargs = (VOCAB, D, MAX_LEN), {"seed": seed, "init_scale": 1.0}
    probe = student.helper("ProbeLM", *probe_args, **probe_kwargs)
    options = dict(epochs=1, lr=0.05, batch_size=4, seed=seed)
    got = train_alone(student, probe, train_tokens, val_tokens, **options)
    history_keys_ok(got, options)
    expect_real_losses(got, "train(probe model, epochs=1)")
    final = got_state(probe)
    local = helpers().ProbeLM(*probe_args, **probe_kwargs)
    names = sorted(local.state_dict())
    expect_true(
        sorted(final) == names,
        f"train(probe model, epochs=1): the model's state_dict() afterwards has keys {sorted(final)}, expected "
        f"{names}: train must update the model it is given in place, not replace its parameters.",
    )
    local.load_state_dict({k: torch.as_tensor(v, dtype=torch.float64) for k, v in final.items()})
    with torch.no_grad():
        local.eval()
        want = float(reference.lm_loss(local, val_tokens))
        batch_means = [float(reference.lm_loss(local, val_tokens[i : i + 4])) for i in range(0, len(val_tokens), 4)]
        local.train()
        in_train_mode = float(reference.lm_loss(local, val_tokens))
    hint = (
        f"Computed in train mode, the same weights give {in_train_mode:.6f}. After the epoch's steps call "
        "model.eval() (dropout-like layers off) and compute lm_loss(model, val_tokens).item() inside "
        "torch.no_grad(); call model.train() again at the start of the next epoch."
    )
    got_val = got["val_loss"][0] if isinstance(got["val_loss"], (list, tuple)) and got["val_loss"] else None
    if isinstance(got_val, (int, float)) and abs(got_val - sum(batch_means) / len(batch_means)) <= 1e-9 * abs(want):
        hint = (
            f"Your value is the plain mean of the losses of validation batches of 4 rows (4 and 2 rows: "
            f"{fmt(batch_means)}). The validation loss is the mean over all validation rows: lm_loss(model, "
            "val_tokens) in one call, or batch losses weighted by their sizes, as for train_loss."
        )
    expect_close(
        got["val_loss"], [want],
        "history['val_loss'] of train(probe model, train_tokens (8, 9), val_tokens (6, 9), epochs=1, batch_size=4), "
        "against the eval-mode lm_loss of the weights the model holds afterwards",
        atol=1e-10, rtol=1e-9,  # float64 probe: the same weights and the same mean give the same number to round-off
        hint=hint,
    )
    expect_a_loop_that_trains(student, reference, (VOCAB, D, MAX_LEN), seed, train_tokens, val_tokens, options["lr"])


def test_validation_no_grad(student, reference, gen, seed):
    """train: the validation loss is computed inside torch.no_grad()"""
    # torch.no_grad() changes no value train returns (no backward is ever called on the validation loss).
    # What pays is the grader's own reading of the source (expect_grad_off_in_source); the probe model's log
    # of torch.is_grad_enabled(), written inside the student's process, can only fail the test. Eval mode,
    # which does change the values, is test_validation_eval_mode.
    train_tokens, val_tokens = probe_data(gen)
    probe = student.helper("ProbeLM", VOCAB, D, MAX_LEN, seed=seed)
    probe.watch(val_tokens)
    options = dict(epochs=2, lr=0.01, batch_size=4, seed=seed)
    train_alone(student, probe, train_tokens, val_tokens, **options)
    log = probe.call_log()
    val_calls = sum(1 for c in log if isinstance(c, dict) and c.get("watched"))

    expect_true(
        val_calls > 0,
        "train(probe model, epochs=2): the model was never called on val_tokens[:, :-1]; compute "
        "lm_loss(model, val_tokens) after every epoch.",
    )
    expect_grad_off_in_source(student, "train", "train(probe model, epochs=2)")
    with_grad = validation_calls_with_grad(log)
    expect_true(
        with_grad == 0,
        f"train(...): {with_grad} of {val_calls} forward calls on the validation tokens ran with gradients "
        "enabled. Wrap the validation loss in `with torch.no_grad():` so no graph is built for data you never "
        "train on (it wastes memory and time).",
        got=with_grad,
    )
    expect_a_loop_that_trains(student, reference, (VOCAB, D, MAX_LEN), seed, train_tokens, val_tokens, options["lr"])


def test_counting_task(student, reference, gen, seed):
    """train: TinyCausalLM trained on modular counting beats log 8 by far and generates the count"""
    # The trained weights are read back and evaluated here, in the reference TinyCausalLM: the test loss and
    # the generated count are what those weights compute, never what the student's own forward or generate
    # say (a model that copies a hard-wired answer earns nothing). TinyCausalLM's and generate's own
    # behaviour are the other tests' business.
    vocab, epochs = 8, 10
    train_tokens, val_tokens, test_tokens = counting(256, gen), counting(64, gen), counting(128, gen)
    student.helper("set_global_seed", seed)
    model = student.TinyCausalLM(vocab)
    history = train_alone(student, model, train_tokens, val_tokens, epochs=epochs, seed=seed)
    history_keys_ok(history, {"epochs": epochs})
    state = {k: torch.as_tensor(v) for k, v in model.state_dict().items()}
    trained, problem = counting_reference_model(reference, state, vocab)
    expect_true(
        trained is not None,
        f"TinyCausalLM(8) after train(...): its state_dict() does not load into a TinyCausalLM(8) of the contract "
        f"({problem}). The grader evaluates the trained weights itself, so the modules must be named and sized as "
        "the handout says.",
    )
    with torch.no_grad():
        logits = trained(test_tokens[:, :-1]).double()                             # (128, 12, 8)
        test_loss = float(F.cross_entropy(logits.reshape(-1, vocab), test_tokens[:, 1:].reshape(-1)))
    baseline = math.log(vocab)
    # the reference reaches about 0.05 after 10 epochs on every seed tried; a quarter of log 8 leaves a wide margin
    expect_true(
        math.isfinite(test_loss) and test_loss < baseline / 4,
        f"TinyCausalLM(8) trained with train(model, counting rows (256, 13), epochs={epochs}): the trained weights, "
        f"evaluated by the grader in the contract's TinyCausalLM, give a test cross-entropy of {test_loss:.4f}, "
        f"expected far below the uniform baseline log 8 = {baseline:.4f} (under {baseline / 4:.3f}; the reference "
        f"reaches about 0.05). Validation losses per epoch: {fmt(history['val_loss'])}. Check the training step "
        "(this test runs your TinyCausalLM, whose own tests judge the model, with the contract's lm_loss).",
    )
    prompts = torch.tensor([[2], [5], [7]])
    with torch.no_grad():
        generated = reference.generate(trained, prompts, 11)
    want = (prompts + torch.arange(12)) % vocab
    expect_close(
        generated, want,
        f"greedy generation (the grader's) from the trained weights, prompts {prompts.tolist()}, n_new=11, after "
        "training on modular counting",
        atol=0,  # tokens are integers
        hint="The trained model must continue the count: a low loss on teacher-forced rows but a wrong count means "
        "the model learnt something else.",
    )
