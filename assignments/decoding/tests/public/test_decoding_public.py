"""Public tests for decoding.py: run them with `pytest` in this folder.

The handout's worked examples, in a few seconds. Passing them is a good sign,
not a guarantee: the grader also checks many random logits against the exact
distributions, ties and other corners, the frequencies of thousands of seeded
draws, the cache step by step, whether your cached steps read what the cache
holds, and generation against a reference.
"""

import math

import pytest
import torch

from autograder.checks import as_float64, expect_close, expect_raises, expect_shape, expect_true

LOGITS = torch.tensor([[2.0, 1.0, 0.0, -1.0]], dtype=torch.float64)           # (1, 4) the handout's example
SHUFFLED = torch.tensor([[0.0, 2.0, -1.0, 1.0]], dtype=torch.float64)         # the same logits, not in sorted order


def _generator(student, seed):
    """A seeded torch.Generator where your code runs (in the grader, that is another process)."""
    if getattr(type(student), "helper", None) is None:                        # your module, in this process
        return torch.Generator().manual_seed(seed)
    return student.helper("seeded_generator", seed)                          # the grader's seam: built in the worker


def _softmax(x):
    e = [math.exp(v) for v in x]
    return [v / sum(e) for v in e]


@pytest.mark.grades("next_token_probs")
def test_probs_worked_example(student):
    """next_token_probs: the handout's example, logits [2, 1, 0, -1]"""
    p = _softmax([2, 1, 0, -1])                                                  # 0.644, 0.237, 0.087, 0.032
    half = _softmax([4, 2, 0, -2])                                               # temperature 0.5 doubles the logits
    cases = {
        "temperature=1": ({}, p),
        "temperature=0.5": ({"temperature": 0.5}, half),
        "temperature=0 (greedy)": ({"temperature": 0.0}, [1.0, 0.0, 0.0, 0.0]),
        "top_k=2": ({"top_k": 2}, [p[0] / (p[0] + p[1]), p[1] / (p[0] + p[1]), 0.0, 0.0]),
        # the mass before token 2 is 0.881 < 0.9, so token 2 (which crosses 0.9) is kept
        "top_p=0.9": ({"top_p": 0.9}, [q / (p[0] + p[1] + p[2]) for q in p[:3]] + [0.0]),
    }
    for label, (kwargs, want) in cases.items():
        got = student.next_token_probs(LOGITS, **kwargs)
        expect_close(
            got, torch.tensor([want], dtype=torch.float64), f"next_token_probs([[2, 1, 0, -1]], {label})",
            atol=1e-12,  # float64 round-off
            hint="softmax(logits / temperature) first; then keep the top k (or the smallest set of most probable "
            "tokens whose mass reaches top_p, the crossing token included) and renormalise.",
        )
    # The same logits in another order: the tokens kept are the same ones, at their own positions. A mask built in
    # sorted order must be put back in the vocabulary's order (scatter it with the sort's indices).
    order = [1, 3, 0, 2]                                                         # SHUFFLED[0, order] is LOGITS[0]
    for label, (kwargs, want) in {"top_k=2": cases["top_k=2"], "top_p=0.9": cases["top_p=0.9"]}.items():
        unsorted = [0.0] * 4
        for rank, position in enumerate(order):
            unsorted[position] = want[rank]
        expect_close(
            student.next_token_probs(SHUFFLED, **kwargs), torch.tensor([unsorted], dtype=torch.float64),
            f"next_token_probs([[0, 2, -1, 1]], {label}) (the example's logits, not in sorted order)",
            atol=1e-12,  # float64 round-off
            hint="Keep or drop each token at its own position: a mask computed on the sorted probabilities is in "
            "sorted order, so put it back with the sort's indices (mask.scatter(-1, order, sorted_mask)) before "
            "applying it.",
        )


@pytest.mark.grades("sample_next")
def test_sample_greedy_and_seeded(student):
    """sample_next: temperature 0 is the argmax; the same seed gives the same draws"""
    logits = torch.tensor([[0.1, 3.0, -1.0], [2.0, 0.0, 2.5]], dtype=torch.float64)
    got = student.sample_next(logits, temperature=0.0)
    expect_close(got, torch.tensor([1, 2]), "sample_next(logits (2, 3), temperature=0)", atol=0,
                 hint="Temperature 0 is greedy: the argmax of each row.")
    many = logits.repeat(200, 1)                                                 # (400, 3)
    g = _generator(student, 7)
    _generator(student, 8)                                                       # another seed in between: no effect
    first = student.sample_next(many, temperature=1.5, generator=g)
    again = student.sample_next(many, temperature=1.5, generator=_generator(student, 7))
    expect_shape(first, (400,), "sample_next(logits (400, 3), ...): one token per row")
    expect_true(
        bool(torch.equal(torch.as_tensor(first), torch.as_tensor(again))),
        "sample_next(..., generator=torch.Generator().manual_seed(7)) twice (another generator seeded with 8 in "
        "between the first one's seeding and its draw) gave different tokens: draw only with the generator you are "
        "given (torch.multinomial(probs, 1, generator=generator)).",
    )


@pytest.mark.grades("causal_mask")
def test_causal_mask_with_cache(student):
    """causal_mask: the last n_q of n_k positions; one query against a cache blocks nothing"""
    cases = {
        (3, 3): [[0, 1, 1], [0, 0, 1], [0, 0, 0]],
        (1, 4): [[0, 0, 0, 0]],
        (2, 4): [[0, 0, 0, 1], [0, 0, 0, 0]],
    }
    for (n_q, n_k), want in cases.items():
        expect_close(
            student.causal_mask(n_q, n_k), torch.tensor(want, dtype=torch.bool), f"causal_mask({n_q}, {n_k})",
            atol=0,
            hint="Query i is at position n_k - n_q + i: block the keys AFTER it (key index > that position).",
        )


@pytest.mark.grades("KVCache")
def test_cache_appends_and_refuses_past_max_len(student, gen):
    """KVCache: update appends after the stored positions and returns them all; ValueError past max_len"""
    k1, v1 = (torch.randn(1, 3, 4, generator=gen, dtype=torch.float64) for _ in range(2))
    k2, v2 = (torch.randn(1, 2, 4, generator=gen, dtype=torch.float64) for _ in range(2))
    cache = student.KVCache(2, 5)
    cache.update(0, k1, v1)
    keys, values = cache.update(0, k2, v2)                                      # layer 0 now holds 3 + 2 = 5
    what = "KVCache(2, max_len=5): update(0, k1 (1, 3, 4), v1), then update(0, k2 (1, 2, 4), v2) returned"
    expect_close(keys, torch.cat([k1, k2], dim=1), f"{what} these keys", atol=0,
                 hint="update appends the new positions after the stored ones (torch.cat along dim 1) and returns "
                 "the layer's keys and values so far, (B, t + n, d).")
    expect_close(values, torch.cat([v1, v2], dim=1), f"{what} these values", atol=0)
    other, _ = cache.update(1, k2, v2)                                          # each layer has its own keys
    expect_close(other, k2, "then update(1, k2, v2) returned these keys (layer 1 had nothing stored)", atol=0,
                 hint="Keep one list entry per layer: cache.keys[layer], cache.values[layer].")
    expect_raises(lambda: cache.update(0, k2[:, :1], v2[:, :1]), (ValueError,),
                  "then update(0, one more position): layer 0 already holds max_len=5")


def _params(vocab=7, d=8, n_layers=2, max_len=16, gen=None):
    """Random float64 parameters in the handout's layout."""
    params = {"embedding": torch.randn(vocab, d, generator=gen, dtype=torch.float64),
              "positions": 0.5 * torch.randn(max_len, d, generator=gen, dtype=torch.float64)}
    for layer in range(n_layers):
        for name in ("w_q", "w_k", "w_v", "w_o"):
            params[f"layers.{layer}.{name}"] = torch.randn(d, d, generator=gen, dtype=torch.float64) / math.sqrt(d)
    params["head"] = torch.randn(d, vocab, generator=gen, dtype=torch.float64)
    return params


@pytest.mark.grades("forward")
def test_forward_prompt_then_one_token_at_a_time(student, gen):
    """forward: a prompt and then one token at a time through a KVCache equals one pass over everything"""
    params = _params(gen=gen)
    tokens = torch.randint(7, (2, 6), generator=gen)
    full = student.forward(params, tokens)                                       # (2, 6, 7)
    expect_shape(full, (2, 6, 7), "forward(params, tokens (2, 6)) with vocabulary 7")
    spread = float(torch.as_tensor(full).detach().std())
    expect_true(
        spread > 1e-6, "forward(params, tokens (2, 6)): the logits vary with the tokens and positions "
        f"(their standard deviation is {spread:.3g}: is forward computing anything yet?)", got=spread,
    )
    cache = student.KVCache(2, 16)
    pieces = [student.forward(params, tokens[:, :3], cache)]                    # the prompt: positions 0..2
    for t in range(3, 6):
        pieces.append(student.forward(params, tokens[:, t:t + 1], cache))       # one new position each
    expect_close(
        torch.cat([torch.as_tensor(p).detach() for p in pieces], dim=1), torch.as_tensor(full).detach(),
        "forward(params, tokens[:, :3], cache), then tokens 3, 4, 5 one at a time, against forward(params, tokens)",
        atol=1e-10,  # float64 round-off
        hint="A cached step: position t0 = len(cache) (not 0), its keys/values appended ONCE with cache.update, "
        "its query attending to everything update returns, mask causal_mask(T, t0 + T).",
    )


@pytest.mark.grades("generate")
def test_generate_cache_equals_recompute(student, gen):
    """generate: greedy with and without the cache gives the same tokens and logits"""
    params = _params(gen=gen)
    prompt = torch.randint(7, (2, 3), generator=gen)
    tokens, logits = student.generate(params, prompt, 5, temperature=0.0, use_cache=True)
    tokens_nc, logits_nc = student.generate(params, prompt, 5, temperature=0.0, use_cache=False)
    expect_shape(tokens, (2, 8), "generate(params, prompt (2, 3), n_new=5): the tokens")
    expect_shape(logits, (2, 5, 7), "generate(params, prompt (2, 3), n_new=5): the logits of the 5 steps")
    expect_close(tokens, tokens_nc, "generate(..., temperature=0): tokens with the cache vs without", atol=0,
                 hint="With and without the cache the model computes the same function.")
    what = "generate(params, prompt (2, 3), n_new=5): the logits"
    logits, logits_nc = as_float64(logits, what), as_float64(logits_nc, what + " without the cache")  # numbers, not True/False
    expect_close(logits, logits_nc, "generate(..., temperature=0): logits with the cache vs without",
                 atol=1e-10)  # float64 round-off
