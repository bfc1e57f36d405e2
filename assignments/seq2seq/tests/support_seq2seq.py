"""Grader-side helpers for the seq2seq hidden tests (never shipped to students).

Every model the tests use gets its weights here, from the test's seed, on the
grader side; the same ``state_dict`` is then loaded into the student's model
(``strict=True``), so student and reference start from identical weights.
"""

from __future__ import annotations

from pathlib import Path

import torch

from autograder.grading.seam import load_module

VOCAB = 12
BOS = 10

# The grader-side work here (reference models, replays of the mistake catalogue) runs on
# tiny tensors, where extra intra-op threads only add overhead: on a busy 2-core machine a
# 6-step training replay took 0.4 s with 2 threads and 0.02 s with 1. Collected before any
# test runs, so it holds for the whole grading process (the worker already uses one thread).
torch.set_num_threads(1)

# worker_helpers.py is not secret: the grader imports the same file to run the
# same recipes (copy_batches, CopyProbe) on the reference side.
HELPERS = load_module("_seq2seq_worker_helpers", Path(__file__).resolve().parents[1] / "worker_helpers.py")


def seeded_model(cls, seed: int, scale: float = 1.0, double: bool = True, **kwargs):
    """``cls(**kwargs)`` with weights drawn from ``seed`` (PyTorch's default init, times ``scale``).

    The global RNG is forked so that the test's randomness stays in its own seed.
    """
    with torch.random.fork_rng():
        torch.default_generator.manual_seed(seed)  # torch.manual_seed's CPU part (its device part formats the stack)
        model = cls(**kwargs)
    if double:
        model = model.double()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(scale)
    return model


def state_dict_of(model) -> dict:
    """A plain ``{name: tensor}`` copy of ``model``'s weights, ready to send to the worker."""
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def student_model(student, cls_name: str, state_dict: dict, double: bool = True, **kwargs):
    """Build ``student.<cls_name>(**kwargs)`` in the worker and load ``state_dict`` (strict)."""
    model = getattr(student, cls_name)(**kwargs)
    if double:
        model.double()
    model.load_state_dict(state_dict)
    return model


def student_probe(student, state_dict: dict, **kwargs):
    """The worker-side ``CopyProbe`` with ``state_dict`` loaded, in float64."""
    probe = student.helper("CopyProbe", **kwargs)
    probe.double()
    probe.load_state_dict(state_dict)
    return probe


def random_tokens(gen: torch.Generator, batch: int, length: int, high: int = 10) -> torch.Tensor:
    """(batch, length) long tokens in [0, high), from the test's generator."""
    return torch.randint(0, high, (batch, length), generator=gen)


def shifted(src: torch.Tensor) -> torch.Tensor:
    """BOS followed by ``src[:, :-1]``: the decoder input for target ``src``."""
    return torch.cat([torch.full((src.shape[0], 1), BOS, dtype=torch.long), src[:, :-1]], dim=1)  # (B, T)
