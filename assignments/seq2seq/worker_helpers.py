"""Non-secret helpers that run in the student's worker process (and on the grader side).

Two jobs the grader cannot do across the process boundary:

* ``copy_batches``: a ``torch.Generator`` cannot be sent to the worker (only
  plain data crosses), so the generator is created *here*, beside the
  student's ``copy_batch``, from a seed the grader sends. The grader repeats
  the same recipe with the reference and compares the batches and the
  generator's final state, which shows that exactly one
  ``torch.randint(0, 10, (batch_size, length))`` draw was made per call.
* ``CopyProbe``: a small stand-in model with the copy model's interface
  (``model(src, tgt_in) -> (B, T, V)`` logits) and its named modules (``emb``,
  ``encoder``, ``cell``, ``out``), so ``train_copy`` can be checked step for
  step even when the student's ``AttnSeq2Seq`` is wrong.

Nothing here contains the solution: it is safe for the student's code to see.
"""

from __future__ import annotations

import sys

import torch
from torch import nn


def copy_batches(seed: int, batch_size: int, length: int, calls: int = 2, module: str = "seq2seq") -> dict:
    """Worker side: run :func:`run_copy_batches` on the student's ``copy_batch``.

    ``module`` is the name the student's file was imported under (the worker
    registers it in ``sys.modules`` before loading these helpers).
    """
    return run_copy_batches(sys.modules[module].copy_batch, seed, batch_size, length, calls)


def run_copy_batches(copy_batch, seed: int, batch_size: int, length: int, calls: int = 2) -> dict:
    """Call ``copy_batch(batch_size, length, g)`` ``calls`` times with one generator seeded by ``seed``.

    Returns ``{"batches": [(src, tgt_in), ...], "state": g.get_state()}``; the
    grader runs the same function on the reference's ``copy_batch``.
    """
    generator = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(calls):
        src, tgt_in = copy_batch(batch_size, length, generator)
        batches.append((src, tgt_in))
    return {"batches": batches, "state": generator.get_state()}


class CopyProbe(nn.Module):
    """The grader's stand-in model for ``train_copy``: the contract's modules, a simpler forward of its own.

    It has the modules ``AttnSeq2Seq`` has, named and typed as the contract says (``emb``, ``encoder``,
    ``cell``, ``out``, smaller), so a ``train_copy`` that builds its optimisers over those modules (one Adam
    per group, as PyTorch's translation tutorial does) trains it as it trains the student's model. Its forward
    is not the copy model's: position t's logits are ``out(cat[s_t, e_t])`` with ``e = encoder(emb(src))`` and
    ``s_t = cell(cat[emb(tgt_in[:, t]), e_t], e_t)``, one cell step per position from the encoder's state there
    (no attention, no decoder recurrence). It depends on both inputs, so training it shows which target and
    which decoder input ``train_copy`` used; with large weights its gradients are large, so it also shows
    whether they were clipped. It has no ``step``, ``generate`` or ``attend``: ``train_copy`` may rely on
    ``model(src, tgt_in)``, ``model.parameters()`` and the four modules only.
    """

    def __init__(self, hidden: int = 8, vocab: int = 12, emb: int = 8) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab, emb)
        self.encoder = nn.GRU(emb, hidden, batch_first=True)
        self.cell = nn.GRUCell(emb + hidden, hidden)
        self.out = nn.Linear(2 * hidden, vocab)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, **options: object) -> torch.Tensor:
        # A train_copy written for a model with options (IBM's pytorch-seq2seq passes teacher_forcing_ratio=1.0)
        # drives the probe as well; only a ratio below 1 contradicts the contract's teacher forcing.
        ratio = options.get("teacher_forcing_ratio", 1)
        if isinstance(ratio, (int, float)) and ratio != 1:
            raise ValueError(
                f"train_copy called the model with teacher_forcing_ratio={ratio}: train with teacher forcing, "
                "the whole tgt_in as the decoder's input (ratio 1)"
            )
        enc, _ = self.encoder(self.emb(src))  # (B, T, h)
        B, T, h = enc.shape
        enc = enc.reshape(B * T, h)  # each position on its own
        state = self.cell(torch.cat([self.emb(tgt_in).reshape(B * T, -1), enc], dim=1), enc)  # (B·T, h)
        return self.out(torch.cat([state, enc], dim=1)).reshape(B, T, -1)  # (B, T, V)
