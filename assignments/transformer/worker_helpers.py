"""Probe models the grader hands to ``lm_loss``, ``train`` and ``generate``.

Non-secret: this file runs inside the student's worker (``student.helper(...)``)
and, identically, on the grader side, so both sides can build bit-for-bit the
same model from the same arguments. The contract says those three functions
must accept any ``nn.Module`` that maps (B, T) long tokens to (B, T, vocab)
logits and has a ``max_len``; a probe is such a module, built to make the
loop's behaviour visible:

* float64 parameters, so two correct training loops agree to ~1e-12;
* its initial scale is adjustable, so gradient clipping at 1.0 really triggers;
* train mode differs from eval mode (a fixed "dropout-like" feature scaling),
  so a loss computed, or a token generated, in the wrong mode has a different
  value: the tests compare the values the student's functions return with what
  the grader computes itself on a grader-side copy (or on the weights read back);
* it records the mode, whether gradients were enabled and the input length of
  every forward call, and whether the input was the watched (validation) set;
  after ``record_rows()``, also the rows themselves (the order a loop shuffles).
  That log is written inside the student's process, so it is the process's
  word about itself, not evidence: it can only fail a test, never pay for one
  (the two 1-point no_grad tests, and the shuffle test's orders; assignment.toml
  says so).

``use_contract_lm_loss`` puts the contract's one-line ``lm_loss`` in place of the student's for the
length of one ``train`` call, so ``train``'s tests judge the loop alone: a wrong ``lm_loss`` is
charged by its own test, not again by every test of the loop that calls it. It holds no answer
the contract does not state.
"""

from __future__ import annotations

import sys

import torch
import torch.nn.functional as F
from torch import nn

MODULE = "transformer"

# The first optimiser a process builds imports torch._dynamo (seconds of CPU). The worker imports
# this file when it starts, outside every test's time limit, so the student's first train() call
# does not pay for it.
torch.optim.AdamW([nn.Parameter(torch.zeros(1))])


class ProbeLM(nn.Module):
    """A small causal float64 language model with observable behaviour.

    ``forward(tokens (B, T)) -> logits (B, T, vocab_size)``: position t sees
    tokens 0..t only (a running mean of the inputs). ``ValueError`` if
    T > max_len, like the contract's ``TinyCausalLM``.
    """

    def __init__(self, vocab_size: int = 6, d_model: int = 8, max_len: int = 16, seed: int = 0,
                 init_scale: float = 1.0):
        super().__init__()
        g = torch.Generator().manual_seed(int(seed))
        f64 = torch.float64
        self.vocab_size = vocab_size
        self.max_len = max_len
        self.embedding = nn.Parameter(torch.randn(vocab_size, d_model, generator=g, dtype=f64) * init_scale)
        self.positions = nn.Parameter(0.5 * torch.randn(max_len, d_model, generator=g, dtype=f64) * init_scale)
        self.mix = nn.Parameter(torch.randn(d_model, d_model, generator=g, dtype=f64) * init_scale / d_model**0.5)
        self.head = nn.Parameter(torch.randn(d_model, vocab_size, generator=g, dtype=f64) * init_scale)
        self.bias = nn.Parameter(0.1 * torch.randn(vocab_size, generator=g, dtype=f64))
        keep = torch.arange(d_model) % 2 == 0                                     # fixed pattern, no RNG involved
        self.register_buffer("train_scale", torch.where(keep, 2.0, 0.0).to(f64), persistent=False)
        self.watched: torch.Tensor | None = None
        self.rows_recorded = False
        self.calls: list[dict] = []

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        B, T = tokens.shape
        if T > self.max_len:
            raise ValueError(f"sequence length {T} is longer than max_len={self.max_len}")
        x = self.embedding[tokens] + self.positions[:T]                          # (B, T, d)
        counts = torch.arange(1, T + 1, dtype=x.dtype)[:, None]                   # (T, 1)
        context = x.cumsum(dim=1) / counts                                        # (B, T, d) mean of tokens 0..t
        hidden = torch.tanh(context @ self.mix + x)                               # (B, T, d)
        if self.training:
            hidden = hidden * self.train_scale                                    # train-mode only ("dropout-like")
        self.calls.append({
            "training": bool(self.training),
            "grad_enabled": bool(torch.is_grad_enabled()),
            "rows": int(B),
            "length": int(T),
            "watched": self._is_watched(tokens),
            **({"tokens": tokens.tolist()} if self.rows_recorded else {}),
        })
        return hidden @ self.head + self.bias                                     # (B, T, V)

    def _is_watched(self, tokens: torch.Tensor) -> bool:
        if self.watched is None or tokens.shape[1] > self.watched.shape[1]:
            return False
        prefixes = self.watched[:, : tokens.shape[1]]                             # (M, T)
        same = (tokens[:, None, :] == prefixes[None, :, :]).all(dim=-1)          # (B, M)
        return bool(same.any(dim=1).all())

    # -- grader-facing helpers ------------------------------------------------
    def watch(self, tokens: torch.Tensor) -> None:
        """Flag later forward calls whose every row is a prefix of a row of ``tokens``."""
        self.watched = tokens.clone()

    def record_rows(self) -> None:
        """Also record the input rows of every later forward call (``tokens``: a list of rows of ints)."""
        self.rows_recorded = True

    def call_log(self) -> list[dict]:
        """The recorded forward calls, oldest first."""
        return list(self.calls)


def set_global_seed(seed: int) -> None:
    """Seed the worker's global torch RNG (to build student models reproducibly, or to disturb it)."""
    torch.default_generator.manual_seed(int(seed))  # torch.manual_seed's CPU part, without its slow lazy device seeding


def draw_global(n: int) -> list[float]:
    """Consume ``n`` numbers from the worker's global RNG (to show a loop does not depend on it)."""
    return torch.rand(int(n)).tolist()


def contract_lm_loss(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """The contract's lm_loss: mean cross-entropy of model(tokens[:, :-1]) against tokens[:, 1:] (the grader's).
    It stands in only while ``use_contract_lm_loss`` has put it in place (inside one train test): called at any
    other time (a student's lm_loss that found it, say through gc) it raises, so it never pays lm_loss's tests."""
    if not _own_lm_loss:
        raise RuntimeError("the grader's stand-in lm_loss works only inside train's tests: write your own lm_loss")
    logits = model(tokens[:, :-1])                                               # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1))


_own_lm_loss: dict[int, object] = {}  # id(module) -> the student's own lm_loss while the contract's stands in


def use_contract_lm_loss(on: bool) -> None:
    """Put ``contract_lm_loss`` in place of the student module's ``lm_loss`` (``on``), or give back its own."""
    module = sys.modules[MODULE]
    if on and id(module) not in _own_lm_loss:
        _own_lm_loss[id(module)] = vars(module).get("lm_loss")
        module.lm_loss = contract_lm_loss
    elif not on and id(module) in _own_lm_loss:
        own = _own_lm_loss.pop(id(module))
        if own is None:
            vars(module).pop("lm_loss", None)  # the file defines none: leave it undefined, as written
        else:
            module.lm_loss = own
