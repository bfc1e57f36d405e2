"""The release's check of ``banned``: every name an attribute of the pinned torch, numpy or einops.

Why: the worker wraps each banned name before the student's file runs (``worker/guards.py``); a name that does
not resolve (``torch.nn.functional.sofmax``) wraps nothing, so a submission calling the real function would
not be caught. The schema can only say that ``banned`` is a list of strings; this resolves each one, as the
worker does, and names the nearest real attribute. The release (every zip is built by ``zips.build_zips``) and
``python -m autograder points`` refuse such a name; at grading it is only warned about (grading goes on).
"""

from __future__ import annotations

import difflib
import importlib
from pathlib import Path
from typing import Any, Iterable

from ..config import ConfigError

CONTRACT = ("torch", "numpy", "einops")  # what a submission may import besides the standard library


def banned_problems(names: Iterable[str]) -> list[str]:
    """Each banned name that is no attribute of the installed (pinned) torch, numpy or einops, with the nearest
    one that is: the worker could not wrap it, so calls to it would go unnoticed."""
    return [problem for problem in map(_unresolved, names) if problem]


def _unresolved(dotted: str) -> str | None:
    """Resolved as ``worker/guards.py`` does: the longest importable module, then attributes."""
    parts = dotted.split(".")
    if len(parts) < 2 or not all(p.isidentifier() for p in parts):
        return f"{dotted!r} is not a dotted name such as torch.nn.functional.softmax"
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for at in range(cut, len(parts)):
            if not hasattr(owner, parts[at]):
                return _missing(parts, at, owner)
            owner = getattr(owner, parts[at])
        return None
    near = difflib.get_close_matches(parts[0], CONTRACT, n=1, cutoff=0.6)
    hint = f"did you mean {'.'.join([near[0], *parts[1:]])}?" if near else "banned names are attributes of torch, numpy or einops"
    return f"{dotted}: there is no module {parts[0]}: {hint}"


def _missing(parts: list[str], at: int, owner: Any) -> str:
    """``torch.nn.functionl.softmax is not in torch 2.13.0: did you mean torch.nn.functional.softmax?``"""
    found, root = ".".join(parts[:at]), importlib.import_module(parts[0])
    version = f" {root.__version__}" if isinstance(getattr(root, "__version__", None), str) else ""
    near = difflib.get_close_matches(parts[at], [n for n in dir(owner) if not n.startswith("__")], n=1, cutoff=0.6)
    hint = f"{found} has no attribute {parts[at]}"
    if near:
        fixed = [*parts[:at], near[0], *parts[at + 1 :]]
        shown = fixed if at + 1 == len(parts) or _unresolved(".".join(fixed)) is None else fixed[: at + 1]
        hint = f"did you mean {'.'.join(shown)}?"
    return f"{'.'.join(parts)} is not in {parts[0]}{version}: {hint}"


def check_banned(path: Path | str, names: Iterable[str]) -> None:
    """The release's check of ``banned`` (and ``python -m autograder points``'): every name resolves."""
    problems = banned_problems(names)
    if problems:
        raise ConfigError(
            f"{path}: banned: {'; '.join(problems)}{' ' if problems[-1].endswith('?') else '. '}Correct the name: the "
            "worker cannot wrap a name that does not exist, so a submission calling the real function would not be caught"
        )
