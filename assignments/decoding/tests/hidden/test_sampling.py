"""next_token_probs and sample_next: exact distributions, frequencies of seeded draws, the generator."""

import pytest
import torch
from support_decoding import SIGMAS, distinct_logits, fmt

from autograder.checks import expect_close, expect_raises, expect_true, replay

HINT = ("In this order: softmax(logits / temperature); keep the top_k most probable tokens; keep the nucleus (the "
        "most probable tokens until their mass reaches top_p, the crossing token included); renormalise after each.")


def _probs_call(logits, **kwargs):
    return {"fn": "next_token_probs", "args": (logits,), "kwargs": kwargs}


def _compare_probs(student, reference, logits, **kwargs):
    want = reference.next_token_probs(logits, **kwargs)
    got = student.next_token_probs(logits, **kwargs)
    expect_close(
        got, want, f"next_token_probs(logits of shape {tuple(logits.shape)}, {_args(kwargs)})",
        atol=1e-12,  # float64 round-off
        hint=HINT,
    )


def _args(kwargs):
    return ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "defaults"


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.5])
def test_probs_temperature(student, reference, gen, temperature):
    """next_token_probs: softmax(logits / temperature), against the exact distribution"""
    logits = distinct_logits(4, 7, gen, spread=4.0)
    _compare_probs(student, reference, logits, temperature=temperature)


def test_temperature_zero_is_greedy(student, gen):
    """next_token_probs: temperature 0 puts all the mass on the argmax (sample_next returns it)"""
    logits = distinct_logits(5, 6, gen)
    want = torch.nn.functional.one_hot(logits.argmax(-1), 6).to(torch.float64)
    for kwargs in ({"temperature": 0.0}, {"temperature": 0.0, "top_k": 3}, {"temperature": 0.0, "top_p": 0.5}):
        expect_close(
            student.next_token_probs(logits, **kwargs), want, f"next_token_probs(logits (5, 6), {_args(kwargs)})",
            atol=0,  # exactly one-hot
            hint="Temperature 0 is the limit T -> 0: all the probability on the largest logit. Dividing by 0 gives "
            "inf - inf = NaN in the softmax: treat T = 0 as a special case (argmax).",
        )
    expect_close(
        student.sample_next(logits, temperature=0.0), logits.argmax(-1), "sample_next(logits (5, 6), temperature=0)",
        atol=0,
        hint="Temperature 0: return the argmax of each row.",
    )


INVALID = {
    "negative temperature": {"temperature": -0.5},
    "top_k=0": {"top_k": 0},
    "top_p=0": {"top_p": 0.0},
    "top_p above 1": {"top_p": 1.5},
}


@pytest.mark.parametrize("case", list(INVALID), ids=list(INVALID))
def test_invalid_arguments_raise(student, gen, case):
    """next_token_probs: ValueError for a negative temperature, top_k < 1, top_p outside (0, 1]"""
    logits = distinct_logits(2, 5, gen)
    kwargs = INVALID[case]
    for fn in ("next_token_probs", "sample_next"):
        expect_raises(
            lambda fn=fn: getattr(student, fn)(logits, **kwargs), (ValueError,),
            f"{fn}(logits (2, 5), {_args(kwargs)})",
            call={"fn": fn, "args": (logits,), "kwargs": kwargs},
        )


@pytest.mark.parametrize("k", [1, 3, 6, 9])
def test_top_k_matches_reference(student, reference, gen, k):
    """next_token_probs: top-k keeps exactly the k most probable tokens, renormalised"""
    logits = distinct_logits(5, 7, gen, spread=3.0)
    _compare_probs(student, reference, logits, temperature=0.8, top_k=k)


def test_top_k_ties_keep_exactly_k(student, gen):
    """next_token_probs: top-k keeps exactly k tokens when there are ties at the boundary"""
    # row r: the k-th and (k+1)-th largest logits are equal
    logits = torch.tensor([[3.0, 2.0, 2.0, 1.0, 0.0],
                           [0.5, 1.5, -1.0, 1.5, 4.0],
                           [1.0, 1.0, 1.0, 1.0, 0.0]], dtype=torch.float64)
    k = 2
    call = _probs_call(logits, top_k=k)
    probs = torch.as_tensor(student.next_token_probs(logits, top_k=k)).detach().double()
    kept = (probs > 0).sum(-1)
    expect_true(
        bool((kept == k).all()),
        f"next_token_probs(logits with ties at the k-th largest, top_k={k}) kept {kept.tolist()} tokens per row; "
        f"exactly {k} should stay. `logits >= kth_largest` keeps every tied token: select k indices instead "
        "(torch.topk, or a sort, and keep the first k).",
        call=lambda m: (torch.as_tensor(m.next_token_probs(logits, top_k=k)) > 0).sum(-1), got=kept,
    )
    for row in range(logits.shape[0]):
        keep = probs[row] > 0
        expect_true(
            bool(logits[row][keep].min() >= logits[row][~keep].max()),
            f"next_token_probs(..., top_k={k}), row {row}: a dropped token has a larger logit than a kept one.",
        )
        want = torch.softmax(logits[row][keep], -1)
        expect_close(probs[row][keep], want, f"next_token_probs(..., top_k={k}), row {row}: the kept probabilities",
                     atol=1e-12, call=call, hint="Renormalise over the kept tokens.")


@pytest.mark.parametrize("top_p", [0.3, 0.6, 0.9, 1.0])
def test_top_p_matches_reference(student, reference, gen, top_p):
    """next_token_probs: the nucleus keeps the token that crosses top_p"""
    logits = distinct_logits(6, 8, gen, spread=5.0)
    _compare_probs(student, reference, logits, top_p=top_p)


COMBINED = {
    "temperature=0.5, top_p=0.7": {"temperature": 0.5, "top_p": 0.7},
    "temperature=2, top_k=4, top_p=0.8": {"temperature": 2.0, "top_k": 4, "top_p": 0.8},
    "temperature=3, top_p=0.5": {"temperature": 3.0, "top_p": 0.5},
}


@pytest.mark.parametrize("case", list(COMBINED), ids=list(COMBINED))
def test_top_p_after_temperature_and_top_k(student, reference, gen, case):
    """next_token_probs: temperature, then top-k, then top-p on the renormalised result"""
    logits = distinct_logits(6, 9, gen, spread=6.0)
    _compare_probs(student, reference, logits, **COMBINED[case])


SINGLE = {
    "top_k=1": {"top_k": 1},
    "top_p=1e-6": {"top_p": 1e-6},
    "temperature=0": {"temperature": 0.0},
}


@pytest.mark.parametrize("case", list(SINGLE), ids=list(SINGLE))
def test_single_token_exact(student, gen, seed, case):
    """sample_next: when the filtered distribution has one token, every draw is that token"""
    kwargs = SINGLE[case]
    logits = distinct_logits(400, 6, gen, spread=3.0)                          # 400 different rows
    want = logits.argmax(-1)                                                    # (400,)
    generator = student.helper("seeded_generator", seed)

    def wrong_rows(module):
        draws = module.sample_next(logits, generator=torch.Generator().manual_seed(seed), **kwargs)
        return float((torch.as_tensor(draws) != want).any())

    with replay(wrong_rows):
        got = torch.as_tensor(student.sample_next(logits, generator=generator, **kwargs))
    bad = int((got.reshape(-1)[: want.numel()] != want).sum()) if got.numel() == want.numel() else want.numel()
    expect_true(
        got.shape == want.shape and bad == 0,
        f"sample_next(400 rows of logits, {_args(kwargs)}): {bad} of 400 draws were not the only token left "
        "after filtering (the most probable one). Draw from the FILTERED distribution (next_token_probs), not "
        "from softmax(logits); and keep the token that crosses top_p, even when it is the first one.",
        call=wrong_rows, got=float(bad > 0),
    )


FREQUENCY_CASES = {
    "temperature=1": {},
    "temperature=0.6, top_k=3": {"temperature": 0.6, "top_k": 3},
    "top_p=0.75": {"top_p": 0.75},
    "temperature=1.8, top_k=5, top_p=0.9": {"temperature": 1.8, "top_k": 5, "top_p": 0.9},
}
N_DRAWS = 20000


def _frequency_failures(tokens, probs):
    """Per token: 2 if drawn although dropped, 1 / -1 if its frequency is more than SIGMAS sigmas above / below
    its probability, else 0; and the frequencies."""
    counts = torch.bincount(tokens.reshape(-1).long().clamp(0, probs.numel() - 1), minlength=probs.numel()).double()
    freq = counts / tokens.numel()
    bound = SIGMAS * torch.sqrt(probs * (1 - probs) / tokens.numel()) + 1.0 / tokens.numel()
    flags = torch.where(freq > probs + bound, 1.0, torch.where(freq < probs - bound, -1.0, 0.0))
    flags = torch.where((probs == 0) & (counts > 0), 2.0, flags)
    return flags.tolist(), freq


@pytest.mark.parametrize("case", list(FREQUENCY_CASES), ids=list(FREQUENCY_CASES))
def test_sample_frequencies(student, reference, gen, seed, case):
    """sample_next: frequencies of 20000 seeded draws match the exact distribution"""
    kwargs = FREQUENCY_CASES[case]
    row = distinct_logits(1, 7, gen, spread=4.0)                                # (1, 7)
    logits = row.expand(N_DRAWS, 7).contiguous()                                # the same row 20000 times
    probs = reference.next_token_probs(row, **kwargs)[0]                        # (7,) exact

    def failures(module):
        draws = module.sample_next(logits, generator=torch.Generator().manual_seed(seed), **kwargs)
        return _frequency_failures(torch.as_tensor(draws), probs)[0]

    with replay(failures):
        tokens = torch.as_tensor(student.sample_next(logits, generator=student.helper("seeded_generator", seed), **kwargs))
    expect_true(
        tokens.numel() == N_DRAWS,
        f"sample_next(logits ({N_DRAWS}, 7), ...): expected one token per row ({N_DRAWS}), got shape {tuple(tokens.shape)}.",
    )
    flags, freq = _frequency_failures(tokens, probs)
    expect_true(
        not any(flags),
        f"sample_next(the same logits in {N_DRAWS} rows, {_args(kwargs)}): the frequencies of your draws are "
        f"{fmt(freq)}, the exact probabilities {fmt(probs)}"
        + (" (a dropped token was drawn)" if 2.0 in flags else "")
        + f". Allowed: {SIGMAS:g} standard deviations sqrt(p(1-p)/N) per token, and exactly 0 for a dropped token. "
        "Draw with torch.multinomial(next_token_probs(...), 1, generator=generator), one draw per row.",
        call=failures, got=flags,
    )


def _two_runs_differ(sample_next, make_gen, reseed_global, logits, seed):
    """1.0 if two draws with the same seed differ when the global generator is reseeded in between, else 0.0."""
    reseed_global(seed + 1)
    first = torch.as_tensor(sample_next(logits, temperature=1.3, generator=make_gen(seed + 5)))
    reseed_global(seed + 2)
    second = torch.as_tensor(sample_next(logits, temperature=1.3, generator=make_gen(seed + 5)))
    return float(not torch.equal(first, second))


def test_generator_reproducible(student, seed):
    """sample_next: draws only from the generator (the global random state changes nothing)"""
    logits = torch.linspace(-1.0, 1.0, 6, dtype=torch.float64).repeat(300, 1)  # (300, 6)
    make_gen = lambda s: student.helper("seeded_generator", s)  # noqa: E731 - built in the worker
    got = _two_runs_differ(student.sample_next, make_gen, lambda s: student.helper("set_global_seed", s), logits, seed)
    expect_true(
        got == 0.0,
        "sample_next(logits (300, 6), temperature=1.3, generator=torch.Generator().manual_seed(s)) gave different "
        "tokens in two runs with the same seed, when the global random generator had been reseeded in between: "
        "your draws use the global generator. Pass generator=generator to torch.multinomial (or torch.rand).",
        call=lambda m: _two_runs_differ(m.sample_next, lambda s: torch.Generator().manual_seed(s), torch.manual_seed,
                                        logits, seed),
        got=got,
    )
    a = torch.as_tensor(student.sample_next(logits, generator=make_gen(seed)))
    b = torch.as_tensor(student.sample_next(logits, generator=make_gen(seed + 100)))
    expect_true(
        not torch.equal(a, b),
        "sample_next(logits (300, 6), generator=...): two different seeds gave identical tokens: draw with the generator.",
    )
