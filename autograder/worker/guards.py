"""Detect calls to functions an assignment bans (``torch.softmax`` in a softmax...).

The worker wraps each banned function before the student's file is imported,
so ``from torch.nn.functional import softmax`` at the top of a submission gets
the wrapper too. Each answer reports which banned functions ran during the
request. Student code could undo the wrappers on purpose; this catches the
honest shortcut, not a determined cheat (see the README's threat model).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import logging
from typing import Any, Iterator

_used: list[str] = []
_warned: set[str] = set()  # the names already warned about in this process (the grader installs per replay)
_log = logging.getLogger(__name__)


def reset() -> None:
    _used.clear()


def used() -> list[str]:
    return sorted(set(_used))


@functools.lru_cache(maxsize=256)
def _resolve(dotted: str) -> tuple[Any, str]:
    """``"torch.nn.functional.softmax"`` -> (the module or class, "softmax"). Remembered: the grader installs the
    wrappers around every replay of a mistake, and each failed import of a prefix searches the whole path."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            owner: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:-1]:
            owner = getattr(owner, name)
        return owner, parts[-1]
    raise ImportError(dotted)


def install(banned: list[str]) -> list[tuple[Any, str, Any]]:
    """Wrap each banned function; returns (owner, name, original) triples to undo it."""
    undo = []
    for dotted in banned:
        try:
            owner, name = _resolve(dotted)
            original = getattr(owner, name)
        except (ImportError, AttributeError):
            _warn_unresolved(dotted)
            continue

        def make_wrapper(original: Any = original, dotted: str = dotted) -> Any:
            @functools.wraps(original)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                _used.append(dotted)
                return original(*args, **kwargs)

            del wrapper.__wrapped__  # functools.wraps hands the original to anyone who asks (the red team did)
            return wrapper

        setattr(owner, name, make_wrapper())
        undo.append((owner, name, original))
    return undo


def _warn_unresolved(dotted: str) -> None:
    """A banned name this torch or numpy does not have is not guarded: said to the operator's log (grading goes on;
    the release refuses such a name, release/banned_names.py, so this means the installed versions differ)."""
    if dotted not in _warned:
        _warned.add(dotted)
        _log.warning(
            "banned name %s does not resolve in this environment: calls to it are not detected. Correct assignment.toml's "
            "banned list, or install the pinned torch and numpy (requirements.txt)",
            dotted,
        )


@contextlib.contextmanager
def active(banned: list[str]) -> Iterator[None]:
    """The wrappers for the duration of a block only: the grader replays catalogued
    mistakes under them (``autograder/diagnosis/diagnoser.py``), then gets the originals back."""
    reset()
    undo = install(banned)
    try:
        yield
    finally:
        for owner, name, original in reversed(undo):
            setattr(owner, name, original)
