"""Non-secret helpers that run in the student's worker process (and on the grader side).

Two jobs the grader cannot do across the process boundary:

* ``copy_batches``: a ``torch.Generator`` cannot be sent to the worker (only
  plain data crosses), so the generator is created *here*, beside the
  student's ``copy_batch``, from a seed the grader sends. The grader repeats
  the same recipe with the reference and compares the batches and the
  generator's final state, which shows that exactly one
  ``torch.randint(0, 10, (batch_size, length))`` draw was made per call.
* ``CopyProbe``: a tiny stand-in model with the copy model's interface
  (``model(src, tgt_in) -> (B, T, V)`` logits), so ``train_copy`` can be
  checked step for step even when the student's ``AttnSeq2Seq`` is wrong.

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
    """A small model with the copy model's interface: logits from (src, tgt_in), position by position.

    ``logits[b, t] = out(src_emb(src[b, t]) + tgt_emb(tgt_in[b, t]))``. It
    depends on both inputs, so training it shows which target and which
    decoder input ``train_copy`` used; with large weights its gradients are
    large, so it also shows whether they were clipped.
    """

    def __init__(self, vocab: int = 12, width: int = 8) -> None:
        super().__init__()
        self.src_emb = nn.Embedding(vocab, width)
        self.tgt_emb = nn.Embedding(vocab, width)
        self.out = nn.Linear(width, vocab)

    def forward(self, src: torch.Tensor, tgt_in: torch.Tensor, **options: object) -> torch.Tensor:
        # A train_copy written for a model with options (IBM's pytorch-seq2seq passes teacher_forcing_ratio=1.0)
        # drives the probe as well; only a ratio below 1 contradicts the contract's teacher forcing.
        ratio = options.get("teacher_forcing_ratio", 1)
        if isinstance(ratio, (int, float)) and ratio != 1:
            raise ValueError(
                f"train_copy called the model with teacher_forcing_ratio={ratio}: train with teacher forcing, "
                "the whole tgt_in as the decoder's input (ratio 1)"
            )
        hidden = self.src_emb(src) + self.tgt_emb(tgt_in)  # (B, T, width)
        return self.out(hidden)  # (B, T, V)
