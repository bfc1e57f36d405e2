"""Dive into Deep Learning's training loop: an Accumulator of (loss * count, count) per epoch, updater.zero_grad(), backward, d2l's grad_clipping (sqrt of the summed squared gradients, scaled by theta / norm when above theta), step

Source: d2l-ai/d2l-en, d2l/torch.py, functions ``grad_clipping`` and ``train_epoch_ch8`` and
class ``Accumulator`` (the recurrent-networks chapter's loop, reused by ``train_seq2seq``;
code under MIT-0). Written after its formulation, not copied (the search tools' terms keep
public code out of this repository's commits): per epoch a two-slot accumulator; for each batch
``updater.zero_grad()``, the loss, ``l.backward()``, ``grad_clipping(net, 1)``,
``updater.step()``, ``metric.add(l * y.numel(), y.numel())``; the epoch's loss is
``metric[0] / metric[1]``. grad_clipping sums p.grad ** 2 over the parameters that require
grad, takes the square root, and when it is above theta multiplies every gradient in place by
theta / norm (no 1e-6, which the contract allows).
Changes for the contract: d2l weights by the tokens of the batch (y.numel()); here every row has
the same length, so weighting by rows (len(rows)) is the same mean and is what the contract
says; batches are a fresh torch.randperm of the rows each epoch from one generator seeded with
``seed`` (d2l's data iterators shuffle with Python's random); torch.optim.AdamW(lr=lr) instead
of d2l's SGD; d2l's loop has no validation: here the validation loss is computed after every
epoch in eval mode under torch.no_grad, the best epoch's state_dict is deep-copied and loaded
back at the end, and the history dict is returned. The model, lm_loss and generate come from
the reference.
"""
BUG = ("metric.add(float(l) * len(rows), len(rows))", "metric.add(float(l), 1)")  # mean of batch means
BUG_NAMES = ["unweighted_train_loss"]


class _Accumulator:
    """For accumulating sums over n variables."""

    def __init__(self, n):
        self.data = [0.0] * n

    def add(self, *args):
        self.data = [a + float(b) for a, b in zip(self.data, args)]

    def __getitem__(self, idx):
        return self.data[idx]


def _grad_clipping(net, theta):
    params = [p for p in net.parameters() if p.requires_grad and p.grad is not None]
    norm = torch.sqrt(sum(torch.sum(p.grad**2) for p in params))  # noqa: F821
    if norm > theta:
        for param in params:
            param.grad[:] *= theta / norm


def train(model, train_tokens, val_tokens, epochs=25, lr=3e-3, batch_size=64, seed=0):
    generator = torch.Generator().manual_seed(seed)  # noqa: F821
    updater = torch.optim.AdamW(model.parameters(), lr=lr)  # noqa: F821
    history = {"train_loss": [], "val_loss": [], "best_epoch": 0}
    best, best_state = float("inf"), None
    for epoch in range(epochs):
        model.train()
        metric = _Accumulator(2)  # sum of training loss, no. of rows
        for rows in torch.randperm(train_tokens.shape[0], generator=generator).split(batch_size):  # noqa: F821
            updater.zero_grad()
            l = lm_loss(model, train_tokens[rows])  # noqa: E741, F821
            l.backward()
            _grad_clipping(model, 1)
            updater.step()
            metric.add(float(l) * len(rows), len(rows))
        history["train_loss"].append(metric[0] / metric[1])
        model.eval()
        with torch.no_grad():  # noqa: F821
            val = float(lm_loss(model, val_tokens))  # noqa: F821
        history["val_loss"].append(val)
        if val < best:
            best, history["best_epoch"] = val, epoch
            best_state = copy.deepcopy(model.state_dict())  # noqa: F821
    if best_state is not None:
        model.load_state_dict(best_state)
    return history
