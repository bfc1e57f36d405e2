"""next_token_probs and sample_next: exact distributions, frequencies of seeded draws, the generator."""

import pytest
import torch
from support_decoding import SIGMAS, distinct_logits, finite, fmt, token_ids

from autograder.checks import Feedback, expect_close, expect_raises, expect_true

HINT = ("In this order: softmax(logits / temperature); keep the top_k most probable tokens; keep the nucleus (the "
        "most probable tokens until their mass reaches top_p, the crossing token included); renormalise after each.")


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


@pytest.mark.grades("next_token_probs")
@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.5])
def test_probs_temperature(student, reference, gen, temperature):
    """next_token_probs: softmax(logits / temperature), against the exact distribution"""
    logits = distinct_logits(4, 7, gen, spread=4.0)
    _compare_probs(student, reference, logits, temperature=temperature)


@pytest.mark.grades("next_token_probs")
def test_temperature_zero_is_greedy(student, gen):
    """next_token_probs: temperature 0 puts all the mass on the argmax"""
    logits = distinct_logits(5, 6, gen)
    want = torch.nn.functional.one_hot(logits.argmax(-1), 6).to(torch.float64)
    for kwargs in ({"temperature": 0.0}, {"temperature": 0.0, "top_k": 3}, {"temperature": 0.0, "top_p": 0.5}):
        expect_close(
            student.next_token_probs(logits, **kwargs), want, f"next_token_probs(logits (5, 6), {_args(kwargs)})",
            atol=0,  # exactly one-hot
            hint="Temperature 0 is the limit T -> 0: all the probability on the largest logit. Dividing by 0 gives "
            "inf - inf = NaN in the softmax: treat T = 0 as a special case (argmax).",
        )


INVALID = {
    "negative temperature": {"temperature": -0.5},
    "top_k=0": {"top_k": 0},
    "top_p=0": {"top_p": 0.0},
    "top_p above 1": {"top_p": 1.5},
}


@pytest.mark.grades("next_token_probs")
@pytest.mark.parametrize("case", list(INVALID), ids=list(INVALID))
def test_invalid_arguments_raise(student, gen, case):
    """next_token_probs: ValueError for a negative temperature, top_k < 1, top_p outside (0, 1] (and none for valid ones)"""
    logits = distinct_logits(2, 5, gen)
    kwargs = INVALID[case]
    expect_raises(  # only next_token_probs: the contract asks sample_next for no ValueError of its own
        lambda: student.next_token_probs(logits, **kwargs), (ValueError,), f"next_token_probs(logits (2, 5), {_args(kwargs)})",
    )
    # a valid call next to it returns: ValueError on every call would otherwise pass (a stub that raises it earns nothing)
    student.next_token_probs(logits, temperature=0.5, top_k=2, top_p=0.9)


@pytest.mark.grades("next_token_probs")
@pytest.mark.parametrize("k", [1, 3, 6, 9])
def test_top_k_matches_reference(student, reference, gen, k):
    """next_token_probs: top-k keeps exactly the k most probable tokens, renormalised"""
    logits = distinct_logits(5, 7, gen, spread=3.0)
    _compare_probs(student, reference, logits, temperature=0.8, top_k=k)


@pytest.mark.grades("next_token_probs")
def test_top_k_ties_keep_exactly_k(student, gen):
    """next_token_probs: top-k keeps exactly k tokens when there are ties at the boundary"""
    # row r: the k-th and (k+1)-th largest logits are equal
    logits = torch.tensor([[3.0, 2.0, 2.0, 1.0, 0.0],
                           [0.5, 1.5, -1.0, 1.5, 4.0],
                           [1.0, 1.0, 1.0, 1.0, 0.0]], dtype=torch.float64)
    k = 2
    probs = finite(student.next_token_probs(logits, top_k=k), f"next_token_probs(logits (3, 5) with ties, top_k={k})")
    kept = (probs > 0).sum(-1)
    expect_true(
        bool((kept == k).all()),
        f"next_token_probs(logits with ties at the k-th largest, top_k={k}) kept {kept.tolist()} tokens per row; "
        f"exactly {k} should stay. `logits >= kth_largest` keeps every tied token: select k indices instead "
        "(torch.topk, or a sort, and keep the first k).",
        got=kept,
    )
    for row in range(logits.shape[0]):
        keep = probs[row] > 0
        expect_true(
            bool(logits[row][keep].min() >= logits[row][~keep].max()),
            f"next_token_probs(..., top_k={k}), row {row}: a dropped token has a larger logit than a kept one.",
        )
        want = torch.softmax(logits[row][keep], -1)
        expect_close(probs[row][keep], want, f"next_token_probs(..., top_k={k}), row {row}: the kept probabilities",
                     atol=1e-12,
                     hint="Renormalise over the kept tokens.")


# Greedy is the argmax, not a limit: tied maxima (the first wins, as torch.argmax), maxima closer than any "tiny
# temperature" resolves, logits so large that logits / 1e-8 overflows. top_k and top_p cannot change the argmax.
TIED = torch.tensor([[1.0, 3.0, 0.0, 3.0, -2.0, 3.0],                          # tied maxima at 1, 3, 5
                     [5.0, 5.0, 1.0, 0.0, 2.0, 4.0],                           # at 0, 1
                     [0.0, -1.0, 2.0, 2.0, 2.0, 2.0]], dtype=torch.float64)    # at 2, 3, 4, 5
EXTREME = torch.tensor([[0.5, 0.5 + 2e-9, -1.0, 0.25, 0.5, 0.0],               # the maximum 2e-9 above the next
                        [1e300, -1e300, 5e299, 0.0, -3e299, 9.9e299],           # finite, but / 1e-8 overflows
                        [-7.0, -7.0 + 1e-12, -7.0, -9.0, -8.0, -7.5]], dtype=torch.float64)
GREEDY_TIES = {
    "tied maxima": (TIED, {"temperature": 0.0}),
    "tied maxima, top_k=1": (TIED, {"temperature": 0.0, "top_k": 1}),
    "tied maxima, top_k=2": (TIED, {"temperature": 0.0, "top_k": 2}),
    "tied maxima, top_p=0.3": (TIED, {"temperature": 0.0, "top_p": 0.3}),
    "maxima 2e-9 apart, logits of size 1e300": (EXTREME, {"temperature": 0.0}),
}


def _first_argmax(logits):
    rows = logits.tolist()
    return torch.tensor([row.index(max(row)) for row in rows])                 # the first of tied maxima


@pytest.mark.grades("next_token_probs")
@pytest.mark.parametrize("case", list(GREEDY_TIES), ids=list(GREEDY_TIES))
def test_greedy_first_argmax(student, case):
    """next_token_probs: temperature 0 is exactly the first argmax (ties, near-ties, huge logits, with top_k/top_p)"""
    logits, kwargs = GREEDY_TIES[case]
    first = _first_argmax(logits)                                              # (3,)
    want = torch.nn.functional.one_hot(first, logits.shape[-1]).to(torch.float64)
    what = f"next_token_probs(logits (3, 6) with {case.split(',')[0]}, {_args(kwargs)})"
    expect_close(
        student.next_token_probs(logits, **kwargs), want, what, atol=0,  # exactly one-hot
        hint=f"Temperature 0 is greedy: probability 1 on the argmax, the FIRST one when maxima tie (torch.argmax), "
        f"whatever top_k and top_p say (they cannot remove the argmax). Expected the tokens {first.tolist()}. "
        "A tiny temperature (softmax(logits / 1e-8)) is not greedy: it splits the mass between tied or nearly tied "
        "maxima and overflows to NaN for large logits. Filtering with top_k first may keep another of the tied "
        "tokens. Special-case T = 0 with argmax before anything else.",
    )


@pytest.mark.grades("sample_next")
@pytest.mark.parametrize("case", list(GREEDY_TIES), ids=list(GREEDY_TIES))
def test_sample_next_greedy_first_argmax(student, seed, case):
    """sample_next: temperature 0 returns the first argmax of each row (ties, near-ties, huge logits)"""
    logits, kwargs = GREEDY_TIES[case]
    first = _first_argmax(logits)                                              # (3,)
    got = student.sample_next(logits, generator=student.helper("seeded_generator", seed), **kwargs)
    expect_close(
        token_ids(got, f"sample_next(logits (3, 6), {_args(kwargs)})", 6), first,
        f"sample_next(logits (3, 6) with {case.split(',')[0]}, {_args(kwargs)}): the tokens", atol=0,
        hint="Temperature 0: return the argmax of each row (the first of tied maxima), without drawing.",
    )


# Uniform rows: every probability, every running total and the threshold are exact binary fractions, so a token
# whose preceding mass equals top_p exactly is met exactly on every machine. The contract keeps a token while the
# mass BEFORE it is below top_p: that token is dropped. Which of the tied tokens stay is unspecified; how many is not.
EXACT_THRESHOLD = {
    "4 equal tokens, top_p=0.5": (4, {"top_p": 0.5}, 2),
    "8 equal tokens, temperature=2, top_p=0.625": (8, {"temperature": 2.0, "top_p": 0.625}, 5),
    "8 equal tokens, top_k=4, top_p=0.75": (8, {"top_k": 4, "top_p": 0.75}, 3),
}


def _kept_sorted(probs):
    """Per row: [number kept, then the probabilities in decreasing order] (of finite values: see finite())."""
    kept = (probs > 0).sum(-1).double()                                        # (rows,)
    return torch.cat([kept[:, None], probs.sort(dim=-1, descending=True).values], dim=-1)


@pytest.mark.grades("next_token_probs")
@pytest.mark.parametrize("case", list(EXACT_THRESHOLD), ids=list(EXACT_THRESHOLD))
def test_top_p_exact_threshold(student, case):
    """next_token_probs: top-p drops the token whose preceding mass equals top_p exactly"""
    V, kwargs, n_kept = EXACT_THRESHOLD[case]
    logits = torch.zeros(2, V, dtype=torch.float64)                            # (2, V) every token equally likely
    what = f"next_token_probs(logits (2, {V}) all equal, {_args(kwargs)})"
    probs = finite(student.next_token_probs(logits, **kwargs), what)
    want = torch.zeros(2, V, dtype=torch.float64)
    want[:, :n_kept] = 1.0 / n_kept
    got = _kept_sorted(probs) if tuple(probs.shape) == (2, V) else probs
    hint = (f"Here the sorted probabilities are exact binary fractions and the mass of the first {n_kept} tokens is "
            f"exactly top_p={kwargs['top_p']}: keep a token when the mass of the tokens BEFORE it is below top_p "
            f"(strictly), so exactly {n_kept} tokens stay, each 1/{n_kept}. `before <= top_p` (or a cumulative mass "
            "`> top_p` shifted right by one, as in the classic top_k_top_p_filtering) keeps one token too many.")
    most = int(got[:, 0].max()) if got is not probs else 0                     # the most tokens a row kept
    if "top_k" in kwargs and most > kwargs["top_k"]:                            # more than top-k can leave: not top-p's
        hint = (f"{most} tokens kept after top_k={kwargs['top_k']}: top-k runs before top-p and keeps exactly k "
                f"tokens even when all {V} are tied (which ones is unspecified); `logits >= kth_largest` keeps every "
                "tied token. Select k indices (torch.topk, or a sort, and keep the first k).")
    expect_close(
        got, _kept_sorted(want), f"{what}: [number of tokens kept, then the probabilities in decreasing order] per row",
        atol=1e-12,  # float64 round-off of 1 / n_kept
        hint=hint,
    )


@pytest.mark.grades("next_token_probs")
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


@pytest.mark.grades("next_token_probs")
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


@pytest.mark.grades("sample_next")
@pytest.mark.parametrize("case", list(SINGLE), ids=list(SINGLE))
def test_single_token_exact(student, gen, seed, case):
    """sample_next: when the filtered distribution has one token, every draw is that token"""
    kwargs = SINGLE[case]
    logits = distinct_logits(400, 6, gen, spread=3.0)                          # 400 different rows
    want = logits.argmax(-1)                                                    # (400,)
    generator = student.helper("seeded_generator", seed)
    got = token_ids(student.sample_next(logits, generator=generator, **kwargs),
                    f"sample_next(400 rows of logits (400, 6), {_args(kwargs)})", 6)
    bad = int((got.reshape(-1)[: want.numel()] != want).sum()) if got.numel() == want.numel() else want.numel()
    if bad and got.shape == want.shape:  # sample_next alone: the one token your own next_token_probs leaves is right
        own = _own_probs(student, logits, kwargs)
        kept = own.argmax(-1) if own is not None and bool(((own > 0).sum(-1) == 1).all()) else None
        if kept is not None and torch.equal(got, kept) and _reads_its_rows(student, logits, kept):
            bad = 0
    expect_true(
        got.shape == want.shape and bad == 0,
        f"sample_next(400 rows of logits, {_args(kwargs)}): {bad} of 400 draws were not the only token left "
        "after filtering (the most probable one). Draw from the FILTERED distribution (next_token_probs), not "
        "from softmax(logits); and keep the token that crosses top_p, even when it is the first one.",
        got=float(bad > 0),
    )


def _own_probs(student, logits, kwargs):
    """The student's own next_token_probs(logits, **kwargs) when it is a distribution per row (finite, >= 0, sums
    to 1), else None: sample_next is judged against it too, so that a filtering mistake pays in its own tests."""
    try:
        probs = finite(student.next_token_probs(logits, **kwargs), "next_token_probs")
    except (Feedback, RuntimeError, TypeError, ValueError):
        return None
    ok = probs.shape == logits.shape and bool((probs >= 0).all()) and bool(((probs.sum(-1) - 1).abs() < 1e-9).all())
    return probs if ok else None


def _reads_its_rows(student, logits, kept):
    """A sampler that always gives the same token proves nothing: where the own kept token is one for every row,
    the same sample_next must also give each row's argmax at temperature 0."""
    if int(kept.unique().numel()) > 1:
        return True
    try:
        greedy = token_ids(student.sample_next(logits, temperature=0.0), "sample_next(temperature=0)", logits.shape[-1])
    except Feedback:
        return False
    return greedy.shape == kept.shape and torch.equal(greedy, logits.argmax(-1))


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
    counts = torch.bincount(tokens.reshape(-1).long(), minlength=probs.numel()).double()  # ids checked in range
    freq = counts / tokens.numel()
    bound = SIGMAS * torch.sqrt(probs * (1 - probs) / tokens.numel()) + 1.0 / tokens.numel()
    flags = torch.where(freq > probs + bound, 1.0, torch.where(freq < probs - bound, -1.0, 0.0))
    flags = torch.where((probs == 0) & (counts > 0), 2.0, flags)
    return flags.tolist(), freq


@pytest.mark.grades("sample_next")
@pytest.mark.parametrize("case", list(FREQUENCY_CASES), ids=list(FREQUENCY_CASES))
def test_sample_frequencies(student, reference, gen, seed, case):
    """sample_next: frequencies of 20000 seeded draws match the exact distribution"""
    kwargs = FREQUENCY_CASES[case]
    row = distinct_logits(1, 7, gen, spread=4.0)                                # (1, 7)
    logits = row.expand(N_DRAWS, 7).contiguous()                                # the same row 20000 times
    probs = reference.next_token_probs(row, **kwargs)[0]                        # (7,) exact
    tokens = token_ids(student.sample_next(logits, generator=student.helper("seeded_generator", seed), **kwargs),
                       f"sample_next(logits ({N_DRAWS}, 7), {_args(kwargs)})", 7)
    expect_true(
        tokens.numel() == N_DRAWS,
        f"sample_next(logits ({N_DRAWS}, 7), ...): expected one token per row ({N_DRAWS}), got shape {tuple(tokens.shape)}.",
    )
    flags, freq = _frequency_failures(tokens, probs)
    own = _own_probs(student, row, kwargs) if any(flags) else None
    if own is not None and int((own[0] > 0).sum()) >= 2 and not any(_frequency_failures(tokens, own[0])[0]):
        flags = [0.0] * len(flags)  # sample_next alone: exact draws of your own next_token_probs (a real sampler)
    expect_true(
        not any(flags),
        f"sample_next(the same logits in {N_DRAWS} rows, {_args(kwargs)}): the frequencies of your draws are "
        f"{fmt(freq)}, the exact probabilities {fmt(probs)}"
        + (" (a dropped token was drawn)" if 2.0 in flags else "")
        + f". Allowed: {SIGMAS:g} standard deviations sqrt(p(1-p)/N) per token, and exactly 0 for a dropped token. "
        "Draw with torch.multinomial(next_token_probs(...), 1, generator=generator), one draw per row.",
        got=flags,
    )


ROWS = 4000  # draws of one distribution per call: 6 sigmas per token tell it from a uniform draw (TV 0.22)


def _delayed_draws_differ(sample_next, make_gen, logits, seed):
    """(1.0 if a generator seeded with ``seed`` draws other tokens when another generator was seeded (seed + 7)
    between its seeding and the draw than a fresh one seeded with ``seed`` and used at once, else 0.0; the fresh
    draws)."""
    fresh = torch.as_tensor(sample_next(logits, temperature=1.3, generator=make_gen(seed)))
    g = make_gen(seed)
    make_gen(seed + 7)                                                         # must change nothing: g has its own state
    delayed = torch.as_tensor(sample_next(logits, temperature=1.3, generator=g))
    return float(fresh.shape != delayed.shape or not torch.equal(fresh, delayed)), fresh


@pytest.mark.grades("sample_next")
def test_generator_reproducible(student, reference, seed):
    """sample_next: draws only from the generator (the global random state changes nothing)"""
    logits = torch.linspace(-1.0, 1.0, 6, dtype=torch.float64).repeat(ROWS, 1)  # (ROWS, 6)
    # Generators are built in the worker (they cannot cross the process boundary); nothing here trusts them to be
    # honest: only the tokens are compared, and they agree only if every draw came from the generator's own state.
    make_gen = lambda s: student.helper("seeded_generator", s)  # noqa: E731
    sample = lambda *a, **k: token_ids(student.sample_next(*a, **k), f"sample_next(logits ({ROWS}, 6), ...)", 6)  # noqa: E731
    got, fresh = _delayed_draws_differ(sample, make_gen, logits, seed)
    # reproducible draws pay only when they are draws of the right distribution (a fixed token or a uniform
    # randint from the generator is reproducible too)
    probs = reference.next_token_probs(logits[:1], temperature=1.3)[0]
    flags, freq = _frequency_failures(fresh, probs) if fresh.numel() == ROWS else ([2.0], None)
    own = _own_probs(student, logits[:1], {"temperature": 1.3}) if any(flags) and freq is not None else None
    if own is not None and int((own[0] > 0).sum()) >= 2 and not any(_frequency_failures(fresh, own[0])[0]):
        flags = [0.0] * len(flags)  # draws of your own next_token_probs: its mistake pays in its own tests
    expect_true(
        not any(flags),
        f"sample_next(logits ({ROWS}, 6), temperature=1.3, generator=g): the frequencies of your draws are "
        f"{fmt(freq) if freq is not None else tuple(fresh.shape)}, the exact probabilities {fmt(probs)}. (This test "
        "checks that the draws come from the generator, and pays only when they follow the distribution too.)",
        got=flags,
    )
    expect_true(
        got == 0.0,
        f"sample_next(logits ({ROWS}, 6), temperature=1.3, generator=g): g = torch.Generator().manual_seed(s), then another "
        "generator seeded with s + 7, then the draw with g, gave other tokens than a fresh generator seeded with s used "
        "at once: your draws do not come (only) from the generator you are given. Pass generator=generator to "
        "torch.multinomial (or torch.rand), and use no other source of randomness.",
        got=got,
    )
    a = sample(logits, generator=make_gen(seed))
    b = sample(logits, generator=make_gen(seed + 100))
    expect_true(
        not torch.equal(a, b),
        f"sample_next(logits ({ROWS}, 6), generator=...): two different seeds gave identical tokens: draw with the generator.",
    )
