"""Grader-side helpers for the decoding hidden tests (never shipped to students).

The model is plain data (a dict of float64 tensors), so the grader builds it,
sends the same dict to the student's worker, and runs the reference on it
here. Generators are the exception: they cannot cross the process boundary, so
the worker builds them (``worker_helpers.seeded_generator``) and the grader
passes the handle. No test trusts what the worker says about itself: every
conclusion is drawn from returned values compared with the reference's.

Grading must not depend on the CPU: sorting, sampling, counting or comparing a NaN
is not defined the same way everywhere, so every student value a test sorts, counts,
indexes with or compares entry by entry goes through ``finite`` or ``token_ids`` first.
"""

from __future__ import annotations

import importlib.util
import math
from contextlib import contextmanager
from pathlib import Path

import torch

from autograder.checks import Feedback, checkpoint

_HELPERS_FILE = Path(__file__).resolve().parents[1] / "worker_helpers.py"
_helpers = None

# Statistical bound for frequency tests: each token's frequency over N draws must be within
# SIGMAS standard deviations sqrt(p (1 - p) / N) of its probability (plus 1/N for rounding).
# At 6 sigma a correct sampler fails one token with probability about 2e-9.
SIGMAS = 6.0


def helpers():
    """worker_helpers.py imported on the grader side (its run_* functions, on the reference and on mistakes)."""
    global _helpers
    if _helpers is None:
        spec = importlib.util.spec_from_file_location("_decoding_worker_helpers", _HELPERS_FILE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _helpers = module
    return _helpers


def params(gen: torch.Generator, vocab: int = 9, d: int = 8, n_layers: int = 2, max_len: int = 24,
           scale: float = 1.0) -> dict:
    """Random float64 parameters of the attention-only LM (the handout's layout)."""
    f64 = torch.float64
    out = {"embedding": torch.randn(vocab, d, generator=gen, dtype=f64),
           "positions": 0.5 * torch.randn(max_len, d, generator=gen, dtype=f64)}
    for layer in range(n_layers):
        for name in ("w_q", "w_k", "w_v", "w_o"):
            out[f"layers.{layer}.{name}"] = scale * torch.randn(d, d, generator=gen, dtype=f64) / math.sqrt(d)
    out["head"] = torch.randn(d, vocab, generator=gen, dtype=f64)
    return out


def tokens(n: int, length: int, vocab: int, gen: torch.Generator) -> torch.Tensor:
    return torch.randint(vocab, (n, length), generator=gen)


def distinct_logits(rows: int, vocab: int, gen: torch.Generator, spread: float = 2.0) -> torch.Tensor:
    """Float64 logits whose entries differ pairwise by at least 1e-3 (no ties at any threshold)."""
    out = []
    for _ in range(rows):
        base = torch.randperm(vocab, generator=gen).to(torch.float64) * (spread / vocab)
        out.append(base + 1e-3 * torch.rand(vocab, generator=gen, dtype=torch.float64))
    return torch.stack(out)


def cached_pieces(module, prm: dict, toks: torch.Tensor, chunks: list[int], make_cache=None) -> torch.Tensor:
    """forward through a fresh cache (``make_cache(n_layers, max_len)``, module.KVCache by default), feeding
    ``chunks`` tokens at a time; the logits concatenated."""
    n_layers = sum(1 for k in prm if k.endswith(".w_q"))
    cache = (make_cache or module.KVCache)(n_layers, prm["positions"].shape[0])
    pieces, start = [], 0
    for size in chunks:
        pieces.append(torch.as_tensor(module.forward(prm, toks[:, start:start + size], cache)).detach())
        start += size
    return torch.cat(pieces, dim=1)


@contextmanager
def graders_cache(student):
    """A maker of the grader's cache in the student's worker (worker_helpers.ContractCache): forward's tests hand
    it to the student's forward, so that they judge forward alone (a wrong KVCache pays in its own tests). The
    caches it made stop working when the block ends (worker_helpers.contract_caches_done)."""
    try:
        yield lambda n_layers, max_len: student.helper("contract_cache", n_layers, max_len)
    finally:
        try:
            student.helper("contract_caches_done")
        except Feedback:  # the worker was stopped: its caches went with it
            pass


def fmt(values) -> str:
    return "[" + ", ".join(f"{float(v):.4g}" for v in values) + "]"


def _where(index: tuple) -> str:
    if len(index) >= 2:
        row = index[:-1]
        return f"row {row[0] if len(row) == 1 else row}, entry {index[-1]}"
    return f"entry {index[0]}" if index else "the value"


def finite(value, what: str) -> torch.Tensor:
    """``value`` as a float64 tensor once every entry is a finite number; else a Feedback saying where
    ("row 3, entry 1 is NaN"). Use it before sorting, counting, comparing with > or != or indexing."""
    checkpoint()
    try:
        t = torch.as_tensor(value).detach()
    except Exception:  # noqa: BLE001 - anything that is not numbers
        raise Feedback(f"{what}: expected a tensor, got {type(value).__name__}.", got=value) from None
    if t.dtype == torch.bool or t.is_complex():
        raise Feedback(f"{what}: expected a float tensor, got dtype {str(t.dtype).replace('torch.', '')}.", got=value)
    t = t.to(torch.float64)
    bad = ~torch.isfinite(t)
    if bad.any():
        index = tuple(int(i) for i in bad.nonzero()[0])
        kind = "NaN" if torch.isnan(t[index]) else ("inf" if t[index] > 0 else "-inf")
        raise Feedback(
            f"{what}: {_where(index)} is {kind} ({int(bad.sum())} of {t.numel()} entries are not finite numbers), "
            "so nothing else could be checked. NaN comes from 0/0 (a row with nothing kept) or inf - inf (dividing "
            "by a zero temperature, or exp overflowing).",
            got=value,
        )
    return t


def token_ids(value, what: str, vocab: int) -> torch.Tensor:
    """``value`` as a long tensor once every entry is a whole number in [0, vocab); else a Feedback saying where."""
    checkpoint()
    try:
        t = torch.as_tensor(value).detach()
    except Exception:  # noqa: BLE001
        raise Feedback(f"{what}: expected a tensor of token ids, got {type(value).__name__}.", got=value) from None
    if t.is_floating_point() or t.is_complex() or t.dtype == torch.bool:
        shown = str(t.dtype).replace("torch.", "")
        if t.is_floating_point():
            f = finite(t, what)
            if bool((f != f.round()).any()):
                raise Feedback(f"{what}: token ids must be whole numbers (dtype long), got {shown} values like "
                               f"{fmt(f[f != f.round()][:3])}.", got=value)
            t = f.long()
        else:
            raise Feedback(f"{what}: token ids must be integers (dtype long), got {shown}.", got=value)
    t = t.long()
    bad = (t < 0) | (t >= vocab)
    if bad.any():
        index = tuple(int(i) for i in bad.nonzero()[0])
        raise Feedback(f"{what}: {_where(index)} is token {int(t[index])}, outside the vocabulary 0 .. {vocab - 1}.",
                       got=value)
    return t
