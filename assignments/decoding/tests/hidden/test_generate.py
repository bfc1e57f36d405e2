"""generate: greedy and seeded sampling, with and without the cache, against recomputation."""

import pytest
import torch
from support_decoding import helpers, params, tokens

from autograder.checks import derived, expect_close, expect_raises, expect_true, replay

GREEDY = {
    "cache, prompt 3, 6 new": (True, 3, 6, 2),
    "no cache, prompt 3, 6 new": (False, 3, 6, 2),
    "cache, prompt 1, 23 new (up to max_len)": (True, 1, 23, 3),
    "no cache, prompt 5, 4 new": (False, 5, 4, 1),
}


@pytest.mark.parametrize("case", list(GREEDY), ids=list(GREEDY))
def test_greedy_matches_reference(student, reference, gen, case):
    """generate: greedy tokens and float64 logits equal the reference's (recomputation)"""
    use_cache, T0, n_new, n_layers = GREEDY[case]
    prm = params(gen, n_layers=n_layers)
    prompt = tokens(2, T0, 9, gen)
    kwargs = {"temperature": 0.0, "use_cache": use_cache}
    want_tokens, want_logits = reference.generate(prm, prompt, n_new, temperature=0.0, use_cache=False)
    got = student.generate(prm, prompt, n_new, **kwargs)
    what = f"generate(params, prompt {tuple(prompt.shape)}, n_new={n_new}, temperature=0, use_cache={use_cache})"
    expect_true(isinstance(got, (tuple, list)) and len(got) == 2, f"{what} must return (tokens, logits).")
    hint = "Greedy: each new token is the argmax of the LAST position's logits. " + (
        "With the cache: feed the prompt once, then only the token just drawn, at position len(cache)."
        if use_cache else "Without the cache: forward(params, tokens so far) at every step.")
    expect_close(got[1], want_logits, f"{what}: the logits of each step", atol=1e-10, hint=hint)  # float64 round-off
    expect_close(got[0], want_tokens, f"{what}: the tokens", atol=0, hint=hint)


SAMPLED = {
    "temperature=0.9, top_k=4": {"temperature": 0.9, "top_k": 4},
    "temperature=1.3, top_p=0.85": {"temperature": 1.3, "top_p": 0.85},
}


@pytest.mark.parametrize("case", list(SAMPLED), ids=list(SAMPLED))
def test_sampled_cache_equals_recompute(student, reference, gen, seed, case):
    """generate: seeded sampling gives the same tokens and logits with and without the cache"""
    options = SAMPLED[case]
    prm = params(gen)
    prompt = tokens(3, 4, 9, gen)
    n_new = 10
    what = f"generate(params, prompt (3, 4), n_new={n_new}, {', '.join(f'{k}={v}' for k, v in options.items())}, generator)"

    def cached_logits(module):
        out = module.generate(prm, prompt, n_new, generator=torch.Generator().manual_seed(seed), use_cache=True, **options)
        return out[1]

    with replay(cached_logits):
        toks, logits = student.generate(prm, prompt, n_new, generator=student.helper("seeded_generator", seed),
                                        use_cache=True, **options)
        toks_nc, logits_nc = student.generate(prm, prompt, n_new, generator=student.helper("seeded_generator", seed),
                                              use_cache=False, **options)
    toks, logits = torch.as_tensor(toks), torch.as_tensor(logits)
    expect_true(tuple(toks.shape) == (3, 4 + n_new) and tuple(logits.shape) == (3, n_new, 9),
                f"{what}: expected tokens (3, {4 + n_new}) and logits (3, {n_new}, 9), got {tuple(toks.shape)} and "
                f"{tuple(logits.shape)}.")
    # the logits of step i must be the model's on YOUR tokens so far, recomputed from scratch
    want = torch.stack([reference.forward(prm, toks[:, : 4 + i])[:, -1] for i in range(n_new)], dim=1)
    expect_close(logits, want, f"{what} with the cache: the logits of each step, against recomputing your tokens",
                 atol=1e-10, call=cached_logits,  # float64 round-off
                 hint="A cached step must compute exactly what the whole prefix computes: position len(cache), the "
                 "keys/values of every earlier position, the new token's key once.")
    expect_close(toks_nc, toks, f"{what}: tokens without the cache vs with it (same seed)", atol=0,
                 hint="The same seed and the same logits must give the same draws: call sample_next once per step, "
                 "with the generator you were given, in both modes.")
    expect_close(logits_nc, logits, f"{what}: logits without the cache vs with it", atol=1e-10)
    probs = torch.stack([reference.next_token_probs(logits[:, i], **options) for i in range(n_new)], dim=1)
    drawn = probs.gather(-1, toks[:, 4:, None].long())[..., 0]                     # (3, n_new)
    expect_true(bool((drawn > 0).all()),
                f"{what}: a generated token has probability 0 after filtering: draw each token with sample_next "
                "from that step's logits and the given temperature, top_k and top_p.")


def _linear_steps_problem(shapes, B, T0, n_new, n_layers):
    """'' if the recorded attention shapes are those of a cache, else what is wrong."""
    if len(shapes) % n_layers:
        return f"{len(shapes)} one_head_attention calls for {n_layers} layers"
    seen = 0
    for i in range(0, len(shapes), n_layers):
        group = shapes[i:i + n_layers]
        b, n_q, n_k = group[0]
        if any(list(s) != list(group[0]) for s in group) or b != B:
            return f"the layers of one step computed different shapes {group}"
        if n_k != seen + n_q:
            return (f"after {seen} positions, {n_q} new queries attended to {n_k} keys (expected {seen + n_q}: "
                    f"the {seen} cached ones and the {n_q} new ones, each once)")
        if seen >= T0 and n_q != 1:
            return f"after the prompt, a step computed ({b}, {n_q}, {n_k}) weights (one new query expected)"
        seen += n_q
    if seen < T0 + n_new - 1:
        return f"only {seen} positions were fed"
    return ""


def test_per_step_scores_linear(student, reference, gen):
    """generate: with the cache, each step's attention is one query against the prefix (linear work)"""
    n_layers, B, T0, n_new = 2, 2, 5, 8
    prm = params(gen, n_layers=n_layers)
    prompt = tokens(B, T0, 9, gen)
    args, kwargs = (prm, prompt, n_new), {"temperature": 0.0, "use_cache": True}
    want = helpers().record_shapes(reference, "generate", *args, **kwargs)["shapes"]

    def shapes_of(module):
        return helpers().record_shapes(module, "generate", *args, **kwargs)["shapes"]

    with replay(shapes_of):
        got = student.helper("attention_shapes", "generate", *args, **kwargs)["shapes"]
    problem = _linear_steps_problem(got, B, T0, n_new, n_layers)
    expect_true(
        not problem,
        f"generate(params, prompt ({B}, {T0}), n_new={n_new}, use_cache=True): the attention weights your code "
        f"computed (shapes recorded from one_head_attention, in order: {[tuple(s) for s in got][:12]}"
        f"{' ...' if len(got) > 12 else ''}) are not a cache's: {problem}. The reference computes "
        f"{[tuple(s) for s in want[::n_layers]]} (one per step, in every layer). Feed the prompt once, then only the "
        "new token: its query against the cached keys is a (B, 1, t) score row, linear in t, not (t, t).",
        call=shapes_of, got=got,
    )


def _repeat_differs(generate, prm, p1, p2, n_new):
    """1.0 if generating from p1 again, after p1 and p2, gives other tokens (or raises), else 0.0."""
    first = torch.as_tensor(generate(prm, p1, n_new, temperature=0.0, use_cache=True)[0])
    try:
        generate(prm, p2, n_new, temperature=0.0, use_cache=True)
        again = torch.as_tensor(generate(prm, p1, n_new, temperature=0.0, use_cache=True)[0])
    except Exception:  # noqa: BLE001 - a stale cache often overflows max_len: that is the symptom too
        return 1.0
    return float(not torch.equal(first, again))


def test_fresh_cache_each_call(student, reference, gen):
    """generate: each call starts from an empty cache (nothing is kept between calls)"""
    prm = params(gen, max_len=40)
    p1, p2 = tokens(2, 4, 9, gen), tokens(2, 6, 9, gen)
    # The first call must be right too, or a generate that ignores its prompt would "repeat itself".
    want = torch.as_tensor(reference.generate(prm, p1, 5, temperature=0.0, use_cache=True)[0])
    first = student.generate(prm, p1, 5, temperature=0.0, use_cache=True)[0]
    expect_close(derived(first, torch.as_tensor(first)), want, "generate(params, prompt A, 5, temperature=0): the tokens",
                 atol=0)
    call = lambda m: _repeat_differs(m.generate, prm, p1, p2, 5)  # noqa: E731
    with replay(call):
        got = _repeat_differs(student.generate, prm, p1, p2, 5)
    expect_true(
        got == 0.0,
        "generate(params, prompt A, 5, temperature=0) called again after two calls gave other tokens than the first "
        "time (or failed): state from an earlier call leaked in. Create a new KVCache inside generate, every call "
        "(not at module level, not as a default argument).",
        call=call, got=got,
    )


@pytest.mark.parametrize("use_cache", [True, False], ids=["cache", "no cache"])
def test_too_long_raises(student, gen, use_cache):
    """generate: ValueError when prompt + new tokens exceed max_len; exactly max_len works"""
    prm = params(gen, max_len=10)
    prompt = tokens(1, 4, 9, gen)
    kwargs = {"temperature": 0.0, "use_cache": use_cache}
    expect_raises(
        lambda: student.generate(prm, prompt, 7, **kwargs), (ValueError,),
        f"generate(params with max_len 10, prompt (1, 4), n_new=7, use_cache={use_cache})",
        call={"fn": "generate", "args": (prm, prompt, 7), "kwargs": kwargs},
    )
    out = student.generate(prm, prompt, 6, **kwargs)
    expect_true(tuple(torch.as_tensor(out[0]).shape) == (1, 10),
                f"generate(params with max_len 10, prompt (1, 4), n_new=6, use_cache={use_cache}) should return "
                "tokens (1, 10): the output may fill the whole position table.")
