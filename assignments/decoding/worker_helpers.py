"""Helpers the grader runs in the student's worker (``student.helper(...)``).

Non-secret: this file runs beside the student's code and holds no expected value.
Nothing a helper returns is taken as a report about the student's code: a helper only
*runs* the student's functions on inputs the grader chose, in a way the plain-data seam
cannot express, and every test compares what comes back with values the grader computes
itself, with the reference. A submission that tampers with a helper gains nothing: to pass,
what it returns must be what the honest code returns.

* ``seeded_generator``: a ``torch.Generator`` cannot cross the process boundary, so the
  grader asks the worker for a seeded one and passes the handle to ``sample_next`` and
  ``generate``. Tests never trust it to be honest: they compare draws made under one seed
  with the global generator moved in between (a generator whose seeding also reseeds the
  global one gains nothing).
* ``cache_script``: a sequence of ``KVCache.update`` calls and ``len(cache)`` readings on one
  cache (the seam has no ``len`` of a remote object), keeping the tensors each update
  returned (the seam returns copies at once, so whether a later update changes them can
  only be seen where they live).
* ``generate_with_marked_cache``: ``generate(..., use_cache=True)`` with the cache's
  ``update`` storing *marked* keys and values (scaled the first time a position is stored).
  The logits then follow the marks only when each step really reads the stored keys and
  values and stores each position once; recomputing the prefix gives the unmarked logits.
* ``generate_calls``: several ``generate`` calls with the *same* params object (the seam
  decodes a fresh dict for every call), to show no state is kept between calls.
* ``contract_cache``: a cache of the grader's that does what the contract says ``KVCache`` does
  as ``forward`` uses it (``update`` appends and returns (K, V); ``len`` counts the positions
  stored), so ``forward``'s cache tests judge ``forward`` alone: a wrong ``KVCache`` is charged by
  its own tests. It holds no answer the contract does not state (no checks, no ``max_len``).

Each helper has a ``run_*`` twin taking the module, which the grader runs on the reference
(for the expected values) and on each catalogued mistake (for diagnosis).
"""

from __future__ import annotations

import sys
import weakref

import torch

MODULE = "decoding"

# What the marked cache stores the first time it sees a (layer, position): key * KEY_MARK, value * VALUE_MARK.
KEY_MARK = 1.5
VALUE_MARK = -0.75


def seeded_generator(seed: int) -> torch.Generator:
    """A fresh ``torch.Generator`` seeded with ``seed``, living in the worker."""
    return torch.Generator().manual_seed(int(seed))


def cache_script(n_layers: int, max_len: int, script: list) -> dict:
    """``run_cache_script`` on the student's module."""
    return run_cache_script(sys.modules[MODULE], n_layers, max_len, script)


def run_cache_script(module, n_layers: int, max_len: int, script: list) -> dict:
    """On one ``module.KVCache(n_layers, max_len)``, run ``script``: ``["update", layer, k, v]`` or ``["len"]``.

    Returns ``{"lengths": [len(cache) at each "len"], "returned_then": [[K, V] of each update, as returned],
    "returned": [the same tensors, as they are after the whole script]}``.
    """
    cache = module.KVCache(int(n_layers), int(max_len))
    lengths, returned, returned_then = [], [], []
    for step in script:
        if step[0] == "len":
            lengths.append(int(len(cache)))
        else:
            _, layer, k, v = step
            out = cache.update(int(layer), k, v)
            if not (isinstance(out, (tuple, list)) and len(out) == 2 and all(isinstance(t, torch.Tensor) for t in out)):
                raise TypeError(f"KVCache.update returned {type(out).__name__}; it must return the pair (K, V) of tensors")
            returned.append(list(out))  # the tensors themselves: an in-place change later shows here
            returned_then.append([t.detach().clone() for t in out])
    return {"lengths": lengths, "returned_then": returned_then,
            "returned": [[K.detach().clone(), V.detach().clone()] for K, V in returned]}


def generate_with_marked_cache(params: dict, prompt: torch.Tensor, n_new: int, **kwargs):
    """``run_with_marked_cache`` on the student's module."""
    return run_with_marked_cache(sys.modules[MODULE], params, prompt, n_new, **kwargs)


def run_with_marked_cache(module, params: dict, prompt: torch.Tensor, n_new: int, **kwargs):
    """``module.generate(params, prompt, n_new, use_cache=True, **kwargs)`` while ``module.KVCache.update`` marks
    what it stores.

    The first time a (layer, position) is stored, in any cache of this call, its key is multiplied by KEY_MARK and
    its value by VALUE_MARK; stored again (a cache rebuilt, a position fed twice) it is stored as computed. A
    position's index is counted here, per cache object and layer, from the number of positions given to update.
    """
    cls = module.KVCache
    had_own = "update" in vars(cls)
    original = cls.update
    seen: set[tuple[int, int]] = set()
    counts: dict[tuple[int, int], int] = {}
    alive: list = []  # every cache of the call stays alive, so that id() values stay distinct

    def marked_update(self, layer, k, v):
        if not any(c is self for c in alive):
            alive.append(self)
        start = counts.get((id(self), int(layer)), 0)
        n = k.shape[1]
        first = [(int(layer), start + j) not in seen for j in range(n)]
        key_scale = torch.tensor([KEY_MARK if f else 1.0 for f in first], dtype=k.dtype).reshape(1, n, 1)
        value_scale = torch.tensor([VALUE_MARK if f else 1.0 for f in first], dtype=v.dtype).reshape(1, n, 1)
        result = original(self, layer, k * key_scale, v * value_scale)
        seen.update((int(layer), start + j) for j in range(n))
        counts[(id(self), int(layer))] = start + n
        return result

    cls.update = marked_update
    try:
        return module.generate(params, prompt, n_new, use_cache=True, **kwargs)
    finally:
        if had_own:
            cls.update = original
        else:
            del cls.update


def generate_calls(params: dict, calls: list) -> list:
    """``run_generate_calls`` on the student's module."""
    return run_generate_calls(sys.modules[MODULE], params, calls)


def run_generate_calls(module, params: dict, calls: list) -> list:
    """``module.generate(params, *args, **kwargs)`` for each ``[args, kwargs]`` in ``calls``, the SAME params object
    every time. Each result is the call's ``(tokens, logits)``, or ``"raised <Type>: <message>"``."""
    results = []
    for args, kwargs in calls:
        try:
            results.append(module.generate(params, *args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - a call that fails is a result too (the test says so)
            results.append(f"raised {type(exc).__name__}: {str(exc)[:200]}")
    return results


_live: weakref.WeakSet = weakref.WeakSet()  # the grader's caches of the test running now (contract_cache)
_making = [False]


class ContractCache:
    """The grader's key/value cache, for forward's tests: ``update(layer, k, v)`` appends (B, n, d) after the
    stored positions and returns the layer's (K, V); ``len`` is the number of positions in layer 0.

    Only ``contract_cache`` makes one, and it works only until its test ends (``contract_caches_done``): a
    student's KVCache that found this class or kept an instance (through gc, say) gets an error, never the points
    of KVCache's tests."""

    def __init__(self, n_layers: int, max_len: int):
        if not _making[0]:
            raise RuntimeError("the grader's cache is made by the grader only, for forward's tests: write your own KVCache")
        self.max_len = int(max_len)
        self.keys: list = [None] * int(n_layers)
        self.values: list = [None] * int(n_layers)

    def _in_its_test(self) -> None:
        if self not in _live:
            raise RuntimeError("a cache of the grader's works only inside the forward test it was made for")

    def __len__(self) -> int:
        self._in_its_test()
        return 0 if self.keys[0] is None else int(self.keys[0].shape[1])

    def update(self, layer: int, k: torch.Tensor, v: torch.Tensor):
        self._in_its_test()
        if self.keys[layer] is not None:
            k, v = torch.cat([self.keys[layer], k], dim=1), torch.cat([self.values[layer], v], dim=1)  # (B, t + n, d)
        self.keys[layer], self.values[layer] = k, v
        return k, v


def contract_cache(n_layers: int, max_len: int) -> ContractCache:
    """A ``ContractCache`` living in the worker, to hand to the student's ``forward`` (until contract_caches_done)."""
    _making[0] = True
    try:
        cache = ContractCache(n_layers, max_len)
    finally:
        _making[0] = False
    _live.add(cache)
    return cache


def contract_caches_done() -> None:
    """The test that made the grader's caches has ended: they stop working."""
    _live.clear()
