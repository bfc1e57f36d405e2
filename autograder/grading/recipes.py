"""Recipes: how the grader could build a student's object again, so that a check on what one of its
methods returned needs no hand-written ``call=``.

One job: the provenance of values returned by a student's *object*. A top-level function called on
plain data is recorded by the seam directly (``{"fn": ...}``); an object needs its history too. An
object built by a top-level class of the student's module on plain data gets a :class:`Recipe`
(the class and its arguments). Its configuring calls on plain data (``double()``,
``load_state_dict(sd)``, ``eval()``...) are appended as steps; a call of the object itself or of
another method on plain data records its result as ``{"cls", "init", "init_kwargs", "steps",
"method", "args", "kwargs"}``, which the diagnosis replays on a fresh object built from each
catalogued mistake (``diagnosis.py``), the way a hand-written ``call=`` always did.

What cannot be replayed is never recorded: once the object is handed to another call
(``train(model, ...)``), what that call did to it is unknown and its recipe is dropped, and so it is
when a configuring call is given values the worker returned (loading the student's own buffers
into every mistake's module would erase the very differences the diagnosis looks for); objects a
grader helper built, and objects built from other objects, get none.
"""

from __future__ import annotations

import weakref
from typing import Any

import torch

from ..context import current, record_call

# Methods that configure a module the same way every time they run on the same plain arguments.
CONFIGURING = frozenset({"double", "float", "load_state_dict", "eval", "train", "requires_grad_"})
# Calls after which the object is taken to be unchanged: calling it (a module's forward, which the
# contract's modules keep free of side effects, as a hand-written call= always assumed) and reading
# its weights. After any other method (``cache.update(k, v)``), a replay on a fresh object would
# miss what that call did: its result is recorded, and the recipe ends there.
UNCHANGED = frozenset({"__call__", "state_dict", "named_parameters", "named_buffers"})


class Recipe:
    """The class, its arguments and the configuring steps of one object in the worker (shared by
    every handle on that object: ``m`` and what ``m.double()`` returns)."""

    def __init__(self, cls: str, init: tuple, init_kwargs: dict) -> None:
        self.cls, self.init, self.init_kwargs = cls, init, init_kwargs
        self.steps: list[tuple[str, tuple, dict]] = []
        self.valid = True

    def call(self, method: str, args: tuple, kwargs: dict) -> dict:
        """The replay of ``method(*args, **kwargs)`` on this object as it stands now."""
        return {
            "cls": self.cls,
            "init": self.init,
            "init_kwargs": self.init_kwargs,
            "steps": list(self.steps),
            "method": method,
            "args": args,
            "kwargs": kwargs,
        }


def built(obj: Any, cls: str, args: tuple, kwargs: dict, replayable: bool = True) -> None:
    """``obj`` was returned by the class ``cls`` called on plain data (``replayable``: a class of the
    student's module, not a grader helper's, which no mistake's module holds)."""
    record_call(obj, {"cls": cls, "init": args, "init_kwargs": kwargs, "method": None})
    if replayable and hasattr(obj, "_recipe"):
        obj._recipe = Recipe(cls, args, kwargs)


def called(target: Any, args: tuple, kwargs: dict, result: Any) -> None:
    """``target(*args, **kwargs)`` (plain data) returned ``result``: record it if ``target`` is an
    object with a recipe (called itself) or one of its methods."""
    owner, method = (target, "__call__") if target._recipe is not None else (target._owner, target._attr)
    recipe = getattr(owner, "_recipe", None) if owner is not None else None
    if recipe is None or not recipe.valid:
        return
    if method in CONFIGURING:
        if _from_worker((args, kwargs)):  # e.g. the student's own buffers: a mistake's module must keep its own
            recipe.valid = False
            return
        recipe.steps.append((method, args, kwargs))
        if hasattr(result, "_recipe"):  # ``m.double()`` returns the same object: its handle shares the recipe
            result._recipe = recipe
        return
    record_call(result, recipe.call(method, args, kwargs))
    if method not in UNCHANGED:
        recipe.valid = False


def handed_over(values: Any) -> None:
    """The objects among ``values`` were passed to a call: what it did to them cannot be replayed."""
    if hasattr(values, "_recipe"):
        if values._recipe is not None:
            values._recipe.valid = False
    elif isinstance(values, (list, tuple)):
        for value in values:
            handed_over(value)
    elif isinstance(values, dict):
        for value in values.values():
            handed_over(value)


def holds_remote(value: Any) -> bool:
    """``value`` is, or contains, an object that lives in the worker."""
    if hasattr(value, "_recipe"):
        return True
    if isinstance(value, (list, tuple)):
        return any(holds_remote(v) for v in value)
    if isinstance(value, dict):
        return any(holds_remote(v) for v in value.values())
    return False


def returned(value: Any) -> Any:
    """``value`` came back from the worker (the seam, for every answer): its tensors are remembered
    for the running test, so no recipe replays them as if the test had made them. Remembered by weak
    reference, never held: a tensor the test drops is freed (and forgotten) at once, so the grader's
    memory is what the test keeps, not every answer it ever received. Returns ``value``."""
    registry = _worker_values()
    if registry is not None:
        for tensor in _tensors(value):
            registry[id(tensor)] = tensor
    return value


def _from_worker(value: Any) -> bool:
    registry = _worker_values()
    return registry is not None and any(registry.get(id(t)) is t for t in _tensors(value))


def _worker_values() -> weakref.WeakValueDictionary | None:
    """The running test's tensors that came from the worker and are still alive, by id (a weak mapping:
    an entry goes when its tensor does, so a later tensor with the same id is never taken for it),
    kept in the test's context (``context.py``: one per test, dropped when it ends);
    None outside a test."""
    context = current()
    return context.worker_values if context is not None else None


def _tensors(value: Any, depth: int = 0) -> list:
    """The tensors in ``value`` (nested lists, tuples and dicts, a few levels deep)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if depth > 4:
        return []
    if isinstance(value, (list, tuple)):
        items = value
    elif isinstance(value, dict):
        items = list(value.values())
    else:
        return []
    return [t for item in items[:10000] for t in _tensors(item, depth + 1)]
