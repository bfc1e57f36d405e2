"""causal_mask, KVCache and forward: a cached forward pass equals recomputing the whole prefix."""

import pytest
import torch
from support_decoding import cached_pieces, graders_cache, params, tokens

from autograder.checks import derived, expect_close, expect_raises, expect_true

CACHE_HINT = ("A cached step: its first position is t0 = len(cache) (positions[t0:t0+T], not [0:T]); in every layer "
              "the new keys/values go through cache.update ONCE and the queries attend to exactly what it returns; "
              "mask causal_mask(T, t0 + T), which blocks nothing for a single new token.")


# Each case pairs a one-token query (whose right mask blocks nothing) with a mask that blocks
# something, so a causal_mask that blocks nothing at all earns no case.
@pytest.mark.grades("causal_mask")
@pytest.mark.parametrize("shapes", [((1, 1), (2, 2)), ((1, 6), (3, 7)), ((5, 5),), ((4, 6),)], ids=str)
def test_causal_mask_matches_reference(student, reference, shapes):
    """causal_mask: the last n_q of n_k positions may see every key up to their own position"""
    for n_q, n_k in shapes:
        expect_close(
            student.causal_mask(n_q, n_k), reference.causal_mask(n_q, n_k), f"causal_mask({n_q}, {n_k})",
            atol=0,
            hint="Query i is at position n_k - n_q + i (the cache holds the first n_k - n_q keys): it may see keys "
            "0 .. n_k - n_q + i. torch.ones(n_q, n_k).triu(1) aligns the queries with the FIRST keys instead: "
            "with a cache, a new token would see only the oldest positions.",
        )


def _update_sequence(module_kvcache, k1, v1, k2, v2, k3, v3):
    """Layer 0 gets k1 then k3, layer 1 gets k2: the (K, V) of layer 0's second update."""
    cache = module_kvcache(2, 10)
    cache.update(0, k1, v1)
    cache.update(1, k2, v2)
    return cache.update(0, k3, v3)


@pytest.mark.grades("KVCache")
def test_cache_update_appends(student, gen):
    """KVCache: update appends the new keys and values after the stored ones and returns them all"""
    k1, v1, k2, v2 = (torch.randn(2, 3, 4, generator=gen, dtype=torch.float64) for _ in range(4))
    k3, v3 = (torch.randn(2, 2, 4, generator=gen, dtype=torch.float64) for _ in range(2))
    args = (k1, v1, k2, v2, k3, v3)
    keys, values = _update_sequence(student.KVCache, *args)
    what = "KVCache(2, 10): update(0, k1 (2, 3, 4)), update(1, k2), then update(0, k3 (2, 2, 4)) returned"
    expect_close(keys, torch.cat([k1, k3], dim=1), f"{what} these keys", atol=0,
                 hint="Append after the stored positions (torch.cat along dim 1); each layer has its own keys.")
    expect_close(values, torch.cat([v1, v3], dim=1), f"{what} these values", atol=0)


def _overflow(module_kvcache, d=3):
    cache = module_kvcache(1, 5)
    cache.update(0, torch.zeros(1, 4, d), torch.zeros(1, 4, d))
    return cache.update(0, torch.zeros(1, 2, d), torch.zeros(1, 2, d))      # 4 + 2 > max_len = 5


@pytest.mark.grades("KVCache")
def test_cache_max_len_raises(student, gen):
    """KVCache: update raises ValueError past max_len (exactly max_len fits)"""
    expect_raises(lambda: _overflow(student.KVCache), (ValueError,),
                  "KVCache(1, max_len=5): update with 4 positions, then 2 more")
    big = torch.zeros(1, 6, 3)
    expect_raises(lambda: student.KVCache(1, 5).update(0, big, big), (ValueError,),
                  "KVCache(1, max_len=5).update(0, 6 positions)")
    # exactly max_len positions fit: the limit is "past max_len", not "at it"
    full = torch.arange(15, dtype=torch.float64).reshape(1, 5, 3)
    stored = student.KVCache(1, 5).update(0, full, full)
    keys = derived(stored[0], torch.as_tensor(stored[0]))  # keeps the record of that update: the diagnosis replays it
    expect_close(keys, full, "KVCache(1, max_len=5).update(0, exactly 5 positions): "
                 "the keys returned (exactly max_len positions fit; only more raise)", atol=0)


@pytest.mark.grades("forward")
def test_forward_past_max_len_raises(student, gen):
    """forward: ValueError past the positions table (max_len), and none at exactly max_len"""
    prm = params(gen, max_len=8)
    expect_raises(lambda: student.forward(prm, tokens(1, 9, 9, gen)), (ValueError,), "forward(params with max_len 8, tokens (1, 9))")
    student.forward(prm, tokens(1, 8, 9, gen))  # exactly max_len positions: a ValueError on every call earns nothing


FORWARD_CASES = {"2 layers, T=7": (2, 7, 2), "3 layers, T = max_len": (1, 24, 3), "1 layer, T=1": (3, 1, 1)}


@pytest.mark.grades("forward")
@pytest.mark.parametrize("case", list(FORWARD_CASES), ids=list(FORWARD_CASES))
def test_forward_matches_reference(student, reference, gen, case):
    """forward: without a cache, the attention-only LM with the causal mask, against the reference"""
    B, T, n_layers = FORWARD_CASES[case]
    prm = params(gen, n_layers=n_layers)
    toks = tokens(B, T, 9, gen)
    expect_close(
        student.forward(prm, toks), reference.forward(prm, toks),
        f"forward(params with {n_layers} layers, tokens {tuple(toks.shape)})",
        atol=1e-10,  # float64 round-off
        hint="x = embedding[tokens] + positions[:T]; per layer x = x + one_head_attention(x W_q, x W_k, x W_v, "
        "causal_mask(T, T))[0] @ W_o; logits = x @ head. Position t must not see later tokens.",
    )


CHUNKS = {
    "prompt of 4, then 1 at a time": [4, 1, 1, 1, 1],
    "1 at a time from an empty cache": [1, 1, 1, 1, 1, 1],
    "chunks of 3, 2, 1, 3": [3, 2, 1, 3],
}


@pytest.mark.grades("forward")
@pytest.mark.parametrize("case", list(CHUNKS), ids=list(CHUNKS))
def test_cached_forward_equals_recompute(student, reference, gen, case):
    """forward: through a KVCache, chunk by chunk, equals one pass over the whole sequence"""
    chunks = CHUNKS[case]
    prm = params(gen)
    toks = tokens(2, sum(chunks), 9, gen)
    want = reference.forward(prm, toks)                                           # (2, T, V) recomputed at once
    with graders_cache(student) as make_cache:  # the grader's cache: forward alone
        got = cached_pieces(student, prm, toks, chunks, make_cache)
    expect_close(
        got, want, f"forward(params, chunks of {chunks} tokens, one cache of the grader's) against forward(params, all {sum(chunks)} "
        "tokens)", atol=1e-10, hint=CACHE_HINT,  # float64 round-off
    )


def _cache_states(module, prm, toks, chunks):
    """After each forward call through one module.KVCache: (cache.keys, cache.values), as the cache holds them."""
    n_layers = sum(1 for k in prm if k.endswith(".w_q"))
    cache = module.KVCache(n_layers, prm["positions"].shape[0])
    states, stored = [], 0
    for size in chunks:
        module.forward(prm, toks[:, stored:stored + size], cache)
        stored += size
        keys, values = cache.keys, cache.values
        states.append(([None if k is None else torch.as_tensor(k).detach().clone() for k in keys],
                       [None if v is None else torch.as_tensor(v).detach().clone() for v in values]))
    return states


@pytest.mark.grades("KVCache")
def test_cache_never_changes_earlier_entries(student, reference, gen):
    """KVCache: after each forward step, every layer holds the keys and values of all positions fed, the old unchanged"""
    prm = params(gen)
    chunks = [3, 1, 1, 2, 1]
    toks = tokens(2, sum(chunks), 9, gen)
    want = _cache_states(reference, prm, toks, chunks)
    got = _cache_states(student, prm, toks, chunks)
    stored = 0
    for i, size in enumerate(chunks):
        stored += size
        for part, name in enumerate(("keys", "values")):
            mine = got[i][part]
            expect_true(
                isinstance(mine, (list, tuple)) and len(mine) == len(want[i][part]),
                f"forward(params with 2 layers, chunks of {chunks} tokens, one KVCache(2, 24)): cache.{name} must be a "
                f"list with one entry per layer (2), got {type(mine).__name__}"
                + (f" of length {len(mine)}" if isinstance(mine, (list, tuple)) else "") + ".",
            )
            for layer in range(len(mine)):
                expect_close(
                    mine[layer], want[i][part][layer],
                    f"forward(params, chunks of {chunks} tokens (B=2), one KVCache): after call {i + 1} ({stored} "
                    f"positions fed), cache.{name}[{layer}] (the {name} of those {stored} positions, (2, {stored}, 8), "
                    "as forward computed them)",
                    atol=1e-10,  # float64 round-off
                    hint="Each forward call appends its new positions' keys and values after the stored ones in every "
                    "layer (index t0 = len(cache), not 0), exactly once, and never overwrites the past.",
                )


STORED = {"1 new token after 5 stored": (5, 1), "2 new tokens after 3 stored": (3, 2)}


def _forward_on_stored(module, prm, stored_k, stored_v, toks, make_cache=None):
    """forward(prm, toks, cache), the cache (``make_cache``, module.KVCache by default) holding stored_k[l] /
    stored_v[l] in layer l (given to update directly)."""
    cache = (make_cache or module.KVCache)(len(stored_k), prm["positions"].shape[0])
    for layer, (k, v) in enumerate(zip(stored_k, stored_v)):
        cache.update(layer, k, v)
    return module.forward(prm, toks, cache)


@pytest.mark.grades("forward")
@pytest.mark.parametrize("case", list(STORED), ids=list(STORED))
def test_forward_reads_the_cache(student, reference, gen, case):
    """forward: a cached step attends to the keys and values stored in the cache (whatever they are)"""
    t0, T = STORED[case]
    prm = params(gen)                                                          # 2 layers, d = 8, vocabulary 9
    # Keys and values no token sequence gives: a step that reads them from the cache follows them; a step that
    # recomputes its prefix (from tokens kept somewhere else) cannot.
    stored_k = [torch.randn(2, t0, 8, generator=gen, dtype=torch.float64) for _ in range(2)]
    stored_v = [torch.randn(2, t0, 8, generator=gen, dtype=torch.float64) for _ in range(2)]
    toks = tokens(2, T, 9, gen)
    want = _forward_on_stored(reference, prm, stored_k, stored_v, toks)       # (2, T, 9)
    with graders_cache(student) as make_cache:  # forward alone
        got = _forward_on_stored(student, prm, stored_k, stored_v, toks, make_cache)
    expect_close(
        got, want,
        f"a cache of the grader's (2 layers, max_len 24) given {t0} positions of random keys and values in each layer with update, then "
        f"forward(params, tokens (2, {T}), cache): the logits",
        atol=1e-10,  # float64 round-off
        hint=f"The new tokens are positions {t0} .. {t0 + T - 1} (t0 = len(cache)); in every layer their keys and "
        "values go through cache.update(layer, k, v) once and the queries attend to exactly the (K, V) it returns "
        f"(the {t0} stored positions, then the new ones), with causal_mask({T}, {t0 + T}). Nothing may be recomputed "
        "or kept outside the cache: the cache is the whole past.",
    )


def _script(rng):
    """update and len steps on a KVCache(3, 12): layers updated out of order, then a second step, then layer 0
    twice in a row (each layer stores its own positions: one write position shared by the layers, advanced by
    the last one, overwrites layer 0's)."""
    k = lambda n: torch.randn(2, n, 4, generator=rng, dtype=torch.float64)  # noqa: E731
    steps = [["len"]]
    for layer in (1, 0, 2):
        steps += [["update", layer, k(3), k(3)], ["len"]]
    for layer in (0, 1, 2):
        steps += [["update", layer, k(2), k(2)], ["len"]]
    steps += [["update", 0, k(1), k(1)], ["len"]]
    steps += [["update", 0, k(2), k(2)], ["len"]]
    return steps


def _expected_script(steps):
    """The (K, V) every update must return, and len(cache) at every "len" step (layer 0's stored positions)."""
    stored, returns, lengths = {}, [], []
    for step in steps:
        if step[0] == "len":
            lengths.append(stored[0][0].shape[1] if 0 in stored else 0)
            continue
        _, layer, k, v = step
        K, V = stored.get(layer, (k[:, :0], v[:, :0]))
        stored[layer] = (torch.cat([K, k], dim=1), torch.cat([V, v], dim=1))
        returns.append(stored[layer])
    return returns, lengths


def _describe(steps, upto=None):
    words = []
    for step in steps[:upto]:
        n = step[2].shape[1] if step[0] != "len" else 0
        words.append("len" if step[0] == "len" else f"update({step[1]}, {n} position{'s' if n > 1 else ''})")
    return ", ".join(words)


@pytest.mark.grades("KVCache")
def test_cache_returns_stay_valid(student, gen):
    """KVCache: the (K, V) an update returned never change afterwards (later updates write elsewhere)"""
    steps = _script(gen)
    want, _ = _expected_script(steps)
    # The update calls run in the worker, where the returned tensors live: the seam would return copies at once.
    got = student.helper("cache_script", 3, 12, steps)["returned"]
    expect_true(len(got) == len(want), f"KVCache(3, 12): expected {len(want)} (K, V) pairs from {len(want)} updates, "
                f"got {len(got)}.")
    for i, (K, V) in enumerate(want):
        for part, (mine, theirs) in enumerate(zip(got[i], (K, V))):
            expect_close(
                mine, theirs,
                f"KVCache(3, max_len=12): {_describe(steps)}. The {'K' if part == 0 else 'V'} returned by update "
                f"number {i + 1}, looked at after all the updates",
                atol=0,
                hint="update returns the layer's keys and values so far, and a later update must not change them: "
                "store new positions in new tensors (torch.cat), or write them into a buffer at positions no returned "
                "tensor covers. Shifting or overwriting stored entries in place changes what you returned earlier.",
            )


@pytest.mark.grades("KVCache")
def test_cache_len_is_layer_zero(student, gen):
    """KVCache: len(cache) is layer 0's number of positions, also while the other layers lag behind"""
    steps = _script(gen)
    want_returns, want_lengths = _expected_script(steps)
    got = student.helper("cache_script", 3, 12, steps)
    # the lengths pay only together with the right (K, V) from every update in the same run
    for i, pair in enumerate(want_returns):
        for part, want in enumerate(pair):
            expect_close(
                got["returned_then"][i][part], want,
                f"KVCache(3, max_len=12): {_describe(steps)}. The {'KV'[part]} returned by update number {i + 1}",
                atol=0,
                hint="update appends the new positions after that layer's stored ones and returns them all.",
            )
    lengths = got["lengths"]
    expect_close(
        lengths, want_lengths,
        f"KVCache(3, max_len=12): len(cache) after each step of: {_describe(steps)}", atol=0,
        hint="len(cache) is the number of positions stored in layer 0 (0 while layer 0 is empty), whatever the other "
        "layers hold: inside a forward step layer 0 is updated first, and len(cache) must already count the new "
        "positions. Read it from layer 0 (not the last layer, the longest, or a counter advanced by other layers).",
    )
