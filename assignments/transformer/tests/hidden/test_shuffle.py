"""train's shuffle: a fresh order of the training rows each epoch, from a torch.Generator seeded with ``seed``.

Every other train test uses one full batch (or lr=0), where the order cannot matter. Here batches are smaller
than the data (12 rows, batches of 4, 3 epochs), and the contract's clause is judged whole: two seeds give
different orders, the same seed the same orders, each epoch a fresh order, and the caller's global torch
random state is left as it was.

What pays is the grader's own evidence: one full-batch epoch of the loop goes downhill, and the weights two
seeds leave, read back, differ (a loop that never shuffles trains the same way under every seed). The orders
come from the probe model's log of the rows it was given, written inside the student's process, and the global
generator's state after the call is drawn there too: both can only fail the test, never pay for it.
"""

import pytest
import torch
from support_transformer import expect_a_loop_that_trains, got_state, tokens, train_alone

from autograder.checks import expect_close, expect_true

pytestmark = pytest.mark.grades("train")  # the function these tests grade (summary, dashboard, pytest -m)

VOCAB, D, MAX_LEN, LENGTH = 6, 8, 16, 9
N_ROWS, BATCH, EPOCHS, LR = 12, 4, 3, 0.02
SETTING = f"train(probe model, {N_ROWS} training rows, batch_size={BATCH}, epochs={EPOCHS}, lr={LR}"
ADVICE = (
    "Create ONE generator per call, generator = torch.Generator().manual_seed(seed), before the epoch loop; at the "
    "start of every epoch draw order = torch.randperm(n_rows, generator=generator) and take the batches in that "
    "order (a DataLoader(..., shuffle=True, generator=generator) does the same)."
)


def _data(gen):
    """12 training rows told apart by their first two tokens (row i starts with i % 6, i // 6), and 4 validation
    rows (second token 5, which no training row has)."""
    train = tokens(N_ROWS, LENGTH, VOCAB, gen)
    train[:, 0] = torch.arange(N_ROWS) % VOCAB
    train[:, 1] = torch.arange(N_ROWS) // VOCAB
    val = tokens(4, LENGTH, VOCAB, gen)
    val[:, 1] = VOCAB - 1
    return train, val


def _orders(log, train_tokens):
    """Each epoch's order of the training rows, from the probe's log of its train-mode calls on them. None when
    the log does not hold one order of every row per epoch (a loop that calls the model on the rows in other
    ways): the log is then no evidence either way, and the other checks judge the loop."""
    index = {tuple(row[:-1].tolist()): i for i, row in enumerate(train_tokens)}
    seen = []
    for call in log if isinstance(log, list) else []:
        if isinstance(call, dict) and call.get("training") and not call.get("watched"):
            seen += [index.get(tuple(row) if isinstance(row, list) else None, -1) for row in call.get("tokens") or []]
    orders = [seen[e * N_ROWS : (e + 1) * N_ROWS] for e in range(EPOCHS)]
    if len(seen) != EPOCHS * N_ROWS or any(sorted(order) != list(range(N_ROWS)) for order in orders):
        return None
    return orders


def _run(student, data, seed, global_seed, probe_seed):
    """The student's train on a fresh probe that records its rows, the worker's global generator seeded with
    ``global_seed`` first: (weights afterwards, each epoch's order, 4 draws of the global generator afterwards)."""
    student.helper("set_global_seed", global_seed)
    probe = student.helper("ProbeLM", VOCAB, D, MAX_LEN, seed=probe_seed)
    probe.watch(data[1])
    probe.record_rows()
    history = train_alone(student, probe, *data, epochs=EPOCHS, lr=LR, batch_size=BATCH, seed=seed)
    draws = student.helper("draw_global", 4)
    expect_true(
        isinstance(history, dict) and len(history.get("train_loss", ())) == EPOCHS,
        f"{SETTING}, seed={seed}) must return a dict whose 'train_loss' has one float per epoch; got {history!r:.200}",
    )
    return got_state(probe), _orders(probe.call_log(), data[0]), draws


def test_shuffle_each_epoch_from_the_seeded_generator(student, reference, gen, seed):
    """train: a fresh shuffle each epoch from a generator seeded with `seed`; the global random state untouched"""
    data = _data(gen)
    first, again = 1000 * seed + 1, 1000 * seed + 2  # the caller's global random states (never the seeds)
    weights, orders, draws = _run(student, data, seed, first, seed)
    expect_a_loop_that_trains(student, reference, (VOCAB, D, MAX_LEN), seed, *data, LR)
    other_weights, _, _ = _run(student, data, seed + 1, again, seed)
    moved = max(float((other_weights.get(k, v) - v).abs().max()) for k, v in weights.items())
    expect_true(
        moved > 1e-6,
        f"{SETTING}) with seed={seed} and with seed={seed + 1}, from the same initial weights: the weights after "
        f"training are the same (largest difference {moved:.3g}), so the batches came in the same order: the rows "
        f"are not shuffled, or not from `seed`. {ADVICE}",
        got=moved,
    )
    if orders is not None:
        repeated = next((e for e in range(1, EPOCHS) if orders[e] == orders[e - 1]), None)
        expect_true(
            repeated is None,
            f"{SETTING}, seed={seed}): epoch {repeated} took the training rows in the same order as epoch "
            f"{(repeated or 1) - 1} (rows per epoch: {orders}). Each epoch needs a fresh order from the same "
            f"generator: a generator created or seeded inside the epoch loop starts over every epoch. {ADVICE}",
            got=orders,
        )
    _, orders_again, _ = _run(student, data, seed, again, seed)
    if orders is not None and orders_again is not None:
        expect_true(
            orders_again == orders,
            f"{SETTING}, seed={seed}) twice, after different torch.manual_seed(...) states: the rows came in "
            f"different orders ({orders} and {orders_again}). The order must depend on `seed` alone, not on the "
            f"global random generator (torch.randperm(n) without a generator draws from it). {ADVICE}",
            got=orders_again,
        )
    want = torch.rand(4, generator=torch.Generator().manual_seed(first)).tolist()
    expect_close(
        draws,
        want,
        f"the caller's global random generator after {SETTING}, seed={seed}) (4 draws of torch.rand, against the "
        "same draws without the call)",
        atol=0,  # the same generator in the same state draws the same numbers
        hint="train must leave the caller's global random state as it was: no torch.manual_seed(...) inside it, "
        f"and no draw from the global generator (torch.randperm(n) without a generator). {ADVICE}",
    )
