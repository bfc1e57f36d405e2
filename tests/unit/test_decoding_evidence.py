"""decoding pays for values the grader computes, not for what the student's process says about itself.

Issue 23's decoding attacks, graded through the CLI, each beside the honest wrong code it dresses up:

* a sampler that ignores its generator, plus a ``torch.Generator`` whose seeding also reseeds the global
  generator (the attack earned 100 instead of 90 when the tests trusted seeded generators);
* a generate that ignores ``use_cache``, plus code that replaces the grader's worker helper with one that
  runs generate unmarked (the old test read a shape recorder living in the student's process);
* a KVCache that keeps the right attributes and shapes but wrong values (the attributes test paid alone).

Each forged submission must earn exactly what its honest code earns. Also, grader-side and fast: the
finiteness checks name the first non-finite row, and the marked cache gives the same logits whether the
prompt is fed at once or one token at a time (so correct code in either style scores the same).
"""

from __future__ import annotations

import importlib.util
import sys

import pytest
import torch
from conftest import KIT, grade, reference_source, write_submission

# A proof of the kit's design rather than a unit of it: run by `make proofs` (CI), kept out of `make test`'s
# four minutes.
pytestmark = pytest.mark.proof

DECODING = KIT / "assignments" / "decoding"


def _points(document: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for test in document["tests"]:
        key = test.get("extra_data", {}).get("test", test["name"])
        out[key] = out.get(key, 0.0) + test["score"]
    return out


GLOBAL_RNG = """

def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    probs = next_token_probs(logits, temperature, top_k, top_p)
    if temperature == 0:
        return probs.argmax(dim=-1)
    return torch.multinomial(probs, 1)[:, 0]          # the global generator, not the one given
"""

SEED_FORGERY = """

class _Forged(torch.Generator):                       # seeding any generator also seeds the global one
    def manual_seed(self, seed):
        torch.manual_seed(seed)
        return super().manual_seed(seed)


torch.Generator = _Forged
"""

NO_CACHE = """

_reference_generate = generate


def generate(params, prompt, n_new, temperature=1.0, top_k=None, top_p=None, generator=None, use_cache=True):
    return _reference_generate(params, prompt, n_new, temperature, top_k, top_p, generator, use_cache=False)
"""

HELPER_FORGERY = """

import sys as _sys

for _name, _helpers in list(_sys.modules.items()):     # the grader's helpers, where the worker loaded them
    if hasattr(_helpers, "generate_with_marked_cache"):
        _helpers.generate_with_marked_cache = lambda params, prompt, n_new, **kw: generate(params, prompt, n_new, **kw)
        _helpers.run_with_marked_cache = lambda module, params, prompt, n_new, **kw: module.generate(params, prompt, n_new, **kw)
"""

SHAPES_ONLY_CACHE = """

class KVCache:                                         # works, but its attributes show zeros of the right shapes
    def __init__(self, n_layers, max_len):
        self.max_len = max_len
        self._k, self._v = [None] * n_layers, [None] * n_layers

    keys = property(lambda self: [None if t is None else torch.zeros_like(t) for t in self._k])
    values = property(lambda self: [None if t is None else torch.zeros_like(t) for t in self._v])

    def __len__(self):
        return 0 if self._k[0] is None else self._k[0].shape[1]

    def update(self, layer, k, v):
        if (0 if self._k[layer] is None else self._k[layer].shape[1]) + k.shape[1] > self.max_len:
            raise ValueError(f"max_len={self.max_len}")
        self._k[layer] = k if self._k[layer] is None else torch.cat([self._k[layer], k], dim=1)
        self._v[layer] = v if self._v[layer] is None else torch.cat([self._v[layer], v], dim=1)
        return self._k[layer], self._v[layer]
"""


@pytest.mark.parametrize(
    "honest, forgery",
    [(GLOBAL_RNG, SEED_FORGERY), (NO_CACHE, HELPER_FORGERY)],
    ids=["generator seeding reseeds the global one", "worker helper replaced"],
)
def test_decoding_forgery_earns_what_the_honest_code_earns(tmp_path, honest, forgery):
    source = reference_source("decoding") + honest
    honest_doc = grade("decoding", write_submission(tmp_path / "honest", "decoding", source), tmp_path)
    forged_doc = grade("decoding", write_submission(tmp_path / "forged", "decoding", source + forgery), tmp_path)
    assert honest_doc["score"] < 100
    assert _points(forged_doc) == _points(honest_doc), (forged_doc["score"], honest_doc["score"])


def test_decoding_cache_attributes_pay_only_with_values(tmp_path):
    source = reference_source("decoding") + SHAPES_ONLY_CACHE
    points = _points(grade("decoding", write_submission(tmp_path / "s", "decoding", source), tmp_path))
    assert points["hidden/test_cache.py::test_cache_never_changes_earlier_entries"] == 0


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_decoding_finite_names_the_row():
    sys.path.insert(0, str(DECODING / "tests"))
    try:
        support = _load("_support_decoding_under_test", DECODING / "tests" / "support_decoding.py")
    finally:
        sys.path.remove(str(DECODING / "tests"))
    x = torch.zeros(5, 4, dtype=torch.float64)
    x[3, 1] = float("nan")
    with pytest.raises(AssertionError, match=r"row 3, entry 1 is NaN"):
        support.finite(x, "next_token_probs(...)")
    with pytest.raises(AssertionError, match=r"outside the vocabulary"):
        support.token_ids(torch.tensor([0, 9]), "sample_next(...)", 9)
    with pytest.raises(AssertionError, match=r"is NaN"):
        support.token_ids(torch.tensor([0.0, float("nan")]), "sample_next(...)", 9)
    assert support.token_ids(torch.tensor([1.0, 2.0]), "t", 9).dtype == torch.long


def test_decoding_marked_cache_is_the_same_for_any_prompt_feeding():
    """Feeding the prompt at once or one token at a time stores each position once: the same marked logits."""
    helpers = _load("_decoding_helpers_under_test", DECODING / "worker_helpers.py")
    reference = _load("_decoding_reference_under_test", KIT / "solutions" / "decoding" / "decoding.py")
    one_at_a_time = _load("_decoding_one_at_a_time", KIT / "solutions" / "decoding" / "decoding.py")
    original = one_at_a_time.forward

    def forward(params, tokens, cache=None):
        if cache is None or tokens.shape[1] == 1:
            return original(params, tokens, cache)
        return torch.cat([original(params, tokens[:, t : t + 1], cache) for t in range(tokens.shape[1])], dim=1)

    one_at_a_time.forward = forward
    params = reference.init_params(vocab_size=9, d_model=8, n_layers=2, max_len=20, seed=3)
    prompt = torch.randint(9, (2, 5), generator=torch.Generator().manual_seed(4))
    want = helpers.run_with_marked_cache(reference, params, prompt, 6, temperature=0.0)
    got = helpers.run_with_marked_cache(one_at_a_time, params, prompt, 6, temperature=0.0)
    plain = reference.generate(params, prompt, 6, temperature=0.0, use_cache=False)
    assert torch.equal(got[0], want[0]) and torch.allclose(got[1], want[1], atol=1e-10, rtol=0)
    assert float((want[1] - plain[1]).abs().max()) > 1e-3  # the marks do change the logits
    assert "update" in vars(reference.KVCache)  # the class is restored
