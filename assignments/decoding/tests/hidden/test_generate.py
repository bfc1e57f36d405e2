"""generate: greedy and seeded sampling, with and without the cache, against recomputation."""

import pytest
import torch
from support_decoding import finite, helpers, params, token_ids, tokens

from autograder.checks import Feedback, derived, expect_close, expect_raises, expect_true

pytestmark = pytest.mark.grades("generate")  # the function these tests grade (summary, dashboard, pytest -m)

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

    # Generators live in the worker, so nothing here trusts them: both are seeded first, then other generators are
    # seeded before each run. Only draws from each run's own generator give the same tokens in both runs.
    make_gen = lambda s: student.helper("seeded_generator", s)  # noqa: E731
    g_cached, g_recomputed = make_gen(seed), make_gen(seed)
    make_gen(seed + 7)
    out = student.generate(prm, prompt, n_new, generator=g_cached, use_cache=True, **options)
    expect_true(isinstance(out, (tuple, list)) and len(out) == 2, f"{what} must return (tokens, logits).")
    make_gen(seed + 9)
    out_nc = student.generate(prm, prompt, n_new, generator=g_recomputed, use_cache=False, **options)
    expect_true(isinstance(out_nc, (tuple, list)) and len(out_nc) == 2,
                f"{what} with use_cache=False must return (tokens, logits).")
    toks, logits = torch.as_tensor(out[0]), torch.as_tensor(out[1])
    expect_true(tuple(toks.shape) == (3, 4 + n_new) and tuple(logits.shape) == (3, n_new, 9),
                f"{what}: expected tokens (3, {4 + n_new}) and logits (3, {n_new}, 9), got {tuple(toks.shape)} and "
                f"{tuple(logits.shape)}.")
    toks = token_ids(toks, f"{what}: the tokens", 9)
    logits = finite(logits, f"{what} with the cache: the logits")
    # the logits of step i must be the model's on YOUR tokens so far, recomputed from scratch
    want = torch.stack([reference.forward(prm, toks[:, : 4 + i])[:, -1] for i in range(n_new)], dim=1)
    hint = ("A cached step must compute exactly what the whole prefix computes: position len(cache), the "
            "keys/values of every earlier position, the new token's key once.")
    if torch.allclose(logits, want / options["temperature"], atol=1e-8, rtol=0):
        hint = ("Your logits are the model's divided by the temperature: generate returns the logits each token was "
                "drawn from BEFORE the temperature (sample_next applies it).")
    expect_close(logits, want, f"{what} with the cache: the logits of each step, against recomputing your tokens",
                 atol=1e-10, hint=hint)  # float64 round-off
    expect_close(out_nc[0], toks, f"{what}: tokens without the cache vs with it (same seed)", atol=0,
                 hint="The same seed and the same logits must give the same draws: call sample_next once per step, "
                 "with the generator you were given (and no other source of randomness), in both modes.")
    expect_close(out_nc[1], logits, f"{what}: logits without the cache vs with it", atol=1e-10)
    probs = torch.stack([reference.next_token_probs(logits[:, i], **options) for i in range(n_new)], dim=1)
    drawn = probs.gather(-1, toks[:, 4:, None])[..., 0]                            # (3, n_new)
    # Judged on generate alone: tokens your own sample_next draws (once per step, the seed's generator) are right
    # here whatever it and next_token_probs filter; their own tests judge that.
    expect_true(bool((drawn > 0).all()) or _same(_own_draws(student, logits, seed, options), toks[:, 4:]),
                f"{what}: a generated token has probability 0 after filtering: draw each token with sample_next "
                "from that step's logits and the given temperature, top_k and top_p.")


def _own_draws(student, logits, seed, options):
    """The tokens the student's sample_next draws from ``logits`` (B, n, V), one call per step in order, from one
    generator seeded with ``seed``: generate's draws when it calls sample_next once per step as it should."""
    generator = student.helper("seeded_generator", seed)
    try:
        steps = [torch.as_tensor(student.sample_next(logits[:, i], generator=generator, **options)).reshape(-1)
                 for i in range(logits.shape[1])]
        return torch.stack(steps, dim=1).long()                                    # (B, n)
    except (Feedback, RuntimeError, TypeError, ValueError):  # sample_next's own failure: no draws to compare with
        return None


def _same(a, b) -> bool:
    return a is not None and a.shape == b.shape and torch.equal(a, b.long())


MARK_HINT = ("With use_cache=True, generate feeds the prompt once and then only the token just drawn; in every layer "
             "forward passes the new keys and values to cache.update ONCE and attends to exactly what update returns. "
             "The grader checks this from the logits: it runs your generate with a KVCache whose update stores "
             "marked keys and values (each position's key times {key}, value times {value}, the first time that "
             "position is stored), and computes the reference the same way. The logits follow the marks only when "
             "every step reads the past from the cache.")


def test_generate_reads_the_cache(student, reference, gen):
    """generate: with the cache, each step reads the stored keys and values (the prefix is not recomputed)"""
    n_layers, B, T0, n_new = 2, 2, 5, 8
    prm = params(gen, n_layers=n_layers)
    prompt = tokens(B, T0, 9, gen)
    kwargs = {"temperature": 0.0}
    marks = helpers()
    want_tokens, want_logits = marks.run_with_marked_cache(reference, prm, prompt, n_new, **kwargs)
    plain = reference.generate(prm, prompt, n_new, use_cache=False, **kwargs)[1]
    if float((want_logits - plain).abs().max()) < 1e-3:                         # the grader's own invariant
        raise RuntimeError("decoding: the marked cache does not change the reference's logits")
    what = (f"generate(params with {n_layers} layers, prompt ({B}, {T0}), n_new={n_new}, temperature=0, use_cache=True) "
            "with a cache that marks what it stores")
    got = student.helper("generate_with_marked_cache", prm, prompt, n_new, **kwargs)
    expect_true(isinstance(got, (tuple, list)) and len(got) == 2, f"{what} must return (tokens, logits).")
    hint = MARK_HINT.format(key=marks.KEY_MARK, value=marks.VALUE_MARK)
    logits = torch.as_tensor(got[1])
    if tuple(logits.shape) == tuple(want_logits.shape):
        logits = finite(logits, f"{what}: the logits")
        if bool(torch.allclose(logits, plain, atol=1e-8, rtol=0)):
            hint = ("Your logits are those of recomputing the whole prefix at every step, unmarked: with "
                    "use_cache=True your generate never reads the keys and values stored by cache.update. ") + hint
    expect_close(logits, want_logits, f"{what}: the logits of each step", atol=1e-10, hint=hint)  # float64 round-off
    expect_close(got[0], want_tokens, f"{what}: the tokens", atol=0, hint=hint)


def _any_call_wrong(results, wants):
    """1.0 if a call raised or gave other tokens than the reference, else 0.0."""
    for result, want in zip(results, wants):
        if isinstance(result, str) or not isinstance(result, (tuple, list)) or len(result) != 2:
            return 1.0
        got = torch.as_tensor(result[0])
        if tuple(got.shape) != tuple(want.shape) or got.is_floating_point() or not torch.equal(got.long(), want):
            return 1.0
    return 0.0


def _describe_calls(results, wants, names):
    parts = []
    for name, result, want in zip(names, results, wants):
        if isinstance(result, str):
            parts.append(f"{name} {result[:160]}")
        elif _any_call_wrong([result], [want]):
            parts.append(f"{name} gave other tokens than a first call would")
        else:
            parts.append(f"{name} was right")
    return "; ".join(parts)


def test_fresh_cache_each_call(student, reference, gen):
    """generate: each call starts from an empty cache (nothing is kept between calls, even with the same params)"""
    prm = params(gen, max_len=40)
    p1, p2 = tokens(2, 4, 9, gen), tokens(2, 6, 9, gen)
    kwargs = {"temperature": 0.0, "use_cache": True}
    # The first call must be right too, or a generate that ignores its prompt would "repeat itself".
    want = torch.as_tensor(reference.generate(prm, p1, 5, **kwargs)[0])
    first = student.generate(prm, p1, 5, **kwargs)[0]
    expect_close(derived(first, torch.as_tensor(first)), want, "generate(params, prompt A (2, 4), 5, temperature=0): "
                 "the tokens (a first call; this test then checks that calls do not affect each other)", atol=0)
    calls = [[[p1, 5], kwargs], [[p2, 5], kwargs], [[p1, 5], kwargs]]
    wants = [torch.as_tensor(reference.generate(prm, *args, **kw)[0]) for args, kw in calls]
    # 1. B, then A again, each call with its own copy of the params (the seam sends a fresh copy every call): a cache
    #    kept at module level or as a default argument shows. 2. A, B, A with the SAME params object (run in the
    #    worker, where that object lives): a cache remembered per params or per model shows too.
    seam_results = []
    for args, kw in calls[1:]:
        try:
            seam_results.append(student.generate(prm, *args, **kw))
        except Feedback as exc:  # the student's code raised: a wrong call (the message is shown below)
            seam_results.append(f"raised: {str(exc)[:160]}")
    shared_results = student.helper("generate_calls", prm, calls)
    got = [_any_call_wrong(seam_results, wants[1:]), _any_call_wrong(shared_results, wants)]
    expect_true(
        got == [0.0, 0.0],
        "generate(params, prompt A (2, 4), 5, temperature=0, use_cache=True) after a first call: "
        + _describe_calls(seam_results, wants[1:], ["then with prompt B (2, 6)", "then with prompt A again"])
        + ". Then three calls with one and the same params dict: "
        + _describe_calls(shared_results, wants, ["prompt A", "then prompt B", "then prompt A again"])
        + ". State from an earlier call leaked into a later one. Create a new KVCache inside generate, on every call "
        "(not at module level, not as a default argument, not remembered per params dict or per model).",
        got=got,
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
    )
    out = student.generate(prm, prompt, 6, **kwargs)
    expect_true(tuple(torch.as_tensor(out[0]).shape) == (1, 10),
                f"generate(params with max_len 10, prompt (1, 4), n_new=6, use_cache={use_cache}) should return "
                "tokens (1, 10): the output may fill the whole position table.")
