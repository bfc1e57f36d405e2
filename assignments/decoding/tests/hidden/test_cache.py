"""causal_mask, KVCache and forward: a cached forward pass equals recomputing the whole prefix."""

import pytest
import torch
from support_decoding import cached_pieces, params, tokens

from autograder.checks import expect_close, expect_raises, expect_true, replay

CACHE_HINT = ("A cached step: its first position is t0 = len(cache) (positions[t0:t0+T], not [0:T]); in every layer "
              "the new keys/values go through cache.update ONCE and the queries attend to exactly what it returns; "
              "mask causal_mask(T, t0 + T), which blocks nothing for a single new token.")


# Each case pairs a one-token query (whose right mask blocks nothing) with a mask that blocks
# something, so a causal_mask that blocks nothing at all earns no case.
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


def test_cache_update_appends(student, gen):
    """KVCache: update appends the new keys and values after the stored ones and returns them all"""
    k1, v1, k2, v2 = (torch.randn(2, 3, 4, generator=gen, dtype=torch.float64) for _ in range(4))
    k3, v3 = (torch.randn(2, 2, 4, generator=gen, dtype=torch.float64) for _ in range(2))
    args = (k1, v1, k2, v2, k3, v3)
    with replay(lambda m: _update_sequence(m.KVCache, *args)[0]):
        keys, values = _update_sequence(student.KVCache, *args)
    what = "KVCache(2, 10): update(0, k1 (2, 3, 4)), update(1, k2), then update(0, k3 (2, 2, 4)) returned"
    expect_close(keys, torch.cat([k1, k3], dim=1), f"{what} these keys", atol=0,
                 call=lambda m: _update_sequence(m.KVCache, *args)[0],
                 hint="Append after the stored positions (torch.cat along dim 1); each layer has its own keys.")
    expect_close(values, torch.cat([v1, v3], dim=1), f"{what} these values", atol=0,
                 call=lambda m: _update_sequence(m.KVCache, *args)[1])


def _overflow(module_kvcache, d=3):
    cache = module_kvcache(1, 5)
    cache.update(0, torch.zeros(1, 4, d), torch.zeros(1, 4, d))
    return cache.update(0, torch.zeros(1, 2, d), torch.zeros(1, 2, d))      # 4 + 2 > max_len = 5


def test_cache_max_len_raises(student, gen):
    """KVCache: update raises ValueError past max_len; forward too"""
    expect_raises(lambda: _overflow(student.KVCache), (ValueError,),
                  "KVCache(1, max_len=5): update with 4 positions, then 2 more", call=lambda m: _overflow(m.KVCache))
    big = torch.zeros(1, 6, 3)
    expect_raises(lambda: student.KVCache(1, 5).update(0, big, big), (ValueError,),
                  "KVCache(1, max_len=5).update(0, 6 positions)",
                  call={"cls": "KVCache", "init": (1, 5), "init_kwargs": {}, "method": "update", "args": (0, big, big),
                        "kwargs": {}})
    prm = params(gen, max_len=8)
    toks = tokens(1, 9, 9, gen)
    expect_raises(lambda: student.forward(prm, toks), (ValueError,), "forward(params with max_len 8, tokens (1, 9))",
                  call={"fn": "forward", "args": (prm, toks), "kwargs": {}})


FORWARD_CASES = {"2 layers, T=7": (2, 7, 2), "3 layers, T = max_len": (1, 24, 3), "1 layer, T=1": (3, 1, 1)}


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


@pytest.mark.parametrize("case", list(CHUNKS), ids=list(CHUNKS))
def test_cached_forward_equals_recompute(student, reference, gen, case):
    """forward: through a KVCache, chunk by chunk, equals one pass over the whole sequence"""
    chunks = CHUNKS[case]
    prm = params(gen)
    toks = tokens(2, sum(chunks), 9, gen)
    want = reference.forward(prm, toks)                                           # (2, T, V) recomputed at once
    call = lambda m: cached_pieces(m, prm, toks, chunks)  # noqa: E731 - replayed on each catalogued mistake
    with replay(call):
        got = cached_pieces(student, prm, toks, chunks)
    expect_close(
        got, want, f"forward(params, chunks of {chunks} tokens, one KVCache) against forward(params, all {sum(chunks)} "
        "tokens)", atol=1e-10, call=call, hint=CACHE_HINT,  # float64 round-off
    )


def _earlier_entries_changed(module, prm, toks, chunks):
    """1.0 if a forward call changed keys/values already in the cache (or the stored length is wrong)."""
    n_layers = sum(1 for k in prm if k.endswith(".w_q"))
    cache = module.KVCache(n_layers, prm["positions"].shape[0])
    before, stored = None, 0
    for size in chunks:
        module.forward(prm, toks[:, stored:stored + size], cache)
        stored += size
        now = [(torch.as_tensor(k).clone(), torch.as_tensor(v).clone()) for k, v in zip(cache.keys, cache.values)]
        if any(k.shape[1] != stored or v.shape[1] != stored for k, v in now):
            return 1.0
        if before is not None and any(
            not torch.equal(k[:, : k0.shape[1]], k0) or not torch.equal(v[:, : v0.shape[1]], v0)
            for (k, v), (k0, v0) in zip(now, before)
        ):
            return 1.0
        before = now
    return 0.0


def test_cache_never_changes_earlier_entries(student, gen):
    """KVCache: a forward step adds positions to every layer and never changes the stored ones"""
    prm = params(gen)
    chunks = [3, 1, 1, 2, 1]
    toks = tokens(2, sum(chunks), 9, gen)
    call = lambda m: _earlier_entries_changed(m, prm, toks, chunks)  # noqa: E731
    with replay(call):
        got = _earlier_entries_changed(student, prm, toks, chunks)
    expect_true(
        got == 0.0,
        f"forward(params, chunks of {chunks} tokens, one KVCache): after a step, cache.keys[l] / cache.values[l] "
        "either did not hold exactly the positions fed so far (B, t, d), or an entry stored by an earlier step "
        "changed. Write each new position after the stored ones (index t0, not 0), and never overwrite the past.",
        call=call, got=got,
    )
