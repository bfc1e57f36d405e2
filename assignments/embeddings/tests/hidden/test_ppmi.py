"""Hidden tests for ppmi: the formula (natural log, clipped at 0) and zero counts."""

import numpy as np
import pytest
from support_embeddings import as_array, random_corpus, random_counts, rng_for

from autograder.checks import expect_close, expect_true

pytestmark = pytest.mark.grades("ppmi")  # the function these tests grade (summary, dashboard, pytest -m)

HINT = (
    "PPMI[w, c] = max(ln(P(w, c) / (P(w) P(c))), 0) with P(w, c) = C[w, c] / C.sum(), P(w) = row sum / C.sum() "
    "and P(c) = column sum / C.sum(); natural log (np.log), negative values clipped to 0."
)


def _counts(reference, seed, name):
    rng = rng_for(seed)
    if name == "random 5x5 non-symmetric counts":
        return random_counts(rng, (5, 5))
    if name == "random 9x9 non-symmetric counts":
        return random_counts(rng, (9, 9), zero_fraction=0.25)
    if name == "random 6x6 symmetric counts":
        return random_counts(rng, (6, 6), symmetric=True)
    if name == "counts of a random corpus":
        corpus = random_corpus(rng, n_sentences=15)
        return reference.cooccurrence(corpus, sorted({w for s in corpus for w in s}), 2)
    corpus = reference.course_corpus()
    return reference.cooccurrence(corpus, reference.build_vocab(corpus), 6)


def _expect_no_warnings(student, C, what):
    """The contract's "no warning raised": the warnings of the same call, recorded in the worker."""
    said = student.helper("warnings_of", "ppmi", C)
    expect_true(
        not said,
        f"{what}: your ppmi raised {said[0] if said else ''}{f' (and {len(said) - 1} more)' if len(said) > 1 else ''}. "
        "The contract asks for no warnings: a division or log of 0 is a defect even when the entry is fixed "
        "afterwards. Compute only where C > 0 (np.divide(..., where=C > 0) / np.log(..., where=...)) or wrap "
        "that line in `with np.errstate(divide='ignore', invalid='ignore'):`.",
        got=said,
    )


def _expect_finite(got, what, C=None):
    a = as_array(got)
    bad = ~np.isfinite(a)
    why = ("Where a count is 0 the PPMI is 0; a word with no counts at all gives 0/0 = NaN in P(w, c) / (P(w) P(c)) "
           "unless you handle it (e.g. np.divide(..., out=np.ones_like(C), where=C > 0) before the log).")
    if C is not None and a.shape == np.shape(C) and (bad & (np.asarray(C) > 0)).any():
        why = ("Some are where the count is positive: a count divided by a marginal of 0. P(w) is the row sums "
               "(axis=1) and P(c) the COLUMN sums (axis=0), both nonzero wherever a count is; the row sums for "
               "P(c) (or the column sums for P(w)) divide by an empty word's 0.")
    expect_true(
        not bad.any(),
        f"{what}: your result has {int(bad.sum())} NaN/inf entries (the first at index "
        f"{tuple(int(i) for i in np.argwhere(bad)[0]) if bad.any() else ()}). {why}",
        got=got,
    )


@pytest.mark.parametrize("name", ["random 5x5 non-symmetric counts", "random 9x9 non-symmetric counts",
                                  "random 6x6 symmetric counts", "counts of a random corpus",
                                  "the course's counts (window 6)"])
def test_matches_reference(student, reference, seed, name):
    """ppmi: matches the formula on count matrices"""
    C = _counts(reference, seed, name)
    got = student.ppmi(C)
    what = f"ppmi(C) for {name}, shape {C.shape}"
    _expect_finite(got, what, C)
    # 1e-10: the same float64 formula computed in a different order differs by ~1e-15
    expect_close(got, reference.ppmi(C), what, atol=1e-10, hint=HINT)


def test_zero_counts(student, reference, seed):
    """ppmi: 0 where a count is 0, even for a word with no counts at all"""
    rng = rng_for(seed)
    C = random_counts(rng, (6, 6))
    C[2, :] = 0.0  # a word that never occurs as a centre word
    C[:, 4] = 0.0  # a word that never occurs as a context
    got = student.ppmi(C)
    what = "ppmi(C) for a (6, 6) count matrix whose row 2 and column 4 are all zero"
    _expect_finite(got, what, C)
    a = as_array(got)
    expect_true(a.shape == C.shape and np.all(a[C == 0] == 0),
                f"{what}: expected exactly 0 wherever C is 0, got nonzero values there. A pair never seen "
                "together has no evidence of association: its PPMI is 0.", got=got)
    # 1e-10: same formula, different evaluation order
    expect_close(got, reference.ppmi(C), what, atol=1e-10, hint=HINT)
    _expect_no_warnings(student, C, what)


def test_all_zero_matrix(student, reference):
    """ppmi: an all-zero count matrix gives all zeros (and counts beside an empty row still count)"""
    C = np.zeros((4, 4))
    got = student.ppmi(C)
    what = "ppmi(np.zeros((4, 4)))"
    _expect_finite(got, what)
    # exact: nothing was counted, so every entry is 0
    expect_close(got, np.zeros((4, 4)), what, atol=0.0,
                 hint="With C.sum() == 0 there are no probabilities to compute: return zeros of C's shape.")
    # the same guard must not zero real counts: one empty word beside two that co-occur
    C = np.array([[0.0, 0.0, 0.0], [0.0, 2.0, 1.0], [0.0, 1.0, 3.0]])
    # 1e-12: a few float64 logs of small counts
    expect_close(student.ppmi(C), reference.ppmi(C), "ppmi([[0, 0, 0], [0, 2, 1], [0, 1, 3]])", atol=1e-12,
                 hint="Only the empty word's row and column are 0; the other entries are max(ln(P(w,c)/(P(w)P(c))), 0).")
    _expect_no_warnings(student, np.zeros((4, 4)), what)
    _expect_no_warnings(student, C, "ppmi([[0, 0, 0], [0, 2, 1], [0, 1, 3]])")
