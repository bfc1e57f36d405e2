"""Helpers the grader runs in the student's worker (``student.helper(...)``).

Non-secret: this file runs beside the student's code and holds no expected
value. Two jobs the plain-data seam cannot do from the grader's side:

* a ``torch.Generator`` cannot cross the process boundary, so the grader asks
  the worker for a seeded one and passes the handle to ``sample_next`` and
  ``generate`` (its state then advances exactly as it would in-process);
* the shapes of the attention weights the student's code computes are
  recorded by wrapping the module's ``one_head_attention`` (every attention goes through it,
  as the contract says) for the duration of one call.
"""

from __future__ import annotations

import sys

import torch

MODULE = "decoding"


def seeded_generator(seed: int) -> torch.Generator:
    """A fresh ``torch.Generator`` seeded with ``seed``, living in the worker."""
    return torch.Generator().manual_seed(int(seed))


def set_global_seed(seed: int) -> None:
    """Seed the worker's global torch RNG (to show a result does not depend on it)."""
    torch.manual_seed(int(seed))


def draw_global(n: int) -> list[float]:
    """Consume ``n`` numbers from the worker's global RNG."""
    return torch.rand(int(n)).tolist()


def attention_shapes(function: str, *args, **kwargs) -> dict:
    """Run ``decoding.<function>(*args, **kwargs)`` and record every ``one_head_attention`` call's weights shape.

    Returns ``{"shapes": [[B, n_q, n_k], ...], "result": <the call's return value>}``.
    """
    return record_shapes(sys.modules[MODULE], function, *args, **kwargs)


def record_shapes(module, function: str, *args, **kwargs) -> dict:
    """The same on any module (the grader replays it on the reference and on each catalogued mistake)."""
    original = module.one_head_attention
    shapes: list[list[int]] = []

    def recording_attention(q, k, v, mask=None):
        out, weights = original(q, k, v, mask)
        shapes.append([int(s) for s in weights.shape])
        return out, weights

    module.one_head_attention = recording_attention
    try:
        result = getattr(module, function)(*args, **kwargs)
    finally:
        module.one_head_attention = original
    return {"shapes": shapes, "result": result}
