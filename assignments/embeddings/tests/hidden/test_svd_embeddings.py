"""Hidden tests for svd_embeddings, compared through the Gram matrix E Eᵀ (column signs are arbitrary)."""

import numpy as np
import pytest
import torch
from support_embeddings import as_array, course_pipeline, random_corpus, rng_for, svd_well_posed

from autograder.checks import FLOAT32_HINT, Feedback, expect_close, expect_shape, expect_true, float32_values

pytestmark = pytest.mark.grades("svd_embeddings")  # the function these tests grade (summary, dashboard, pytest -m)

HINT = (
    "With U, S, Vt = np.linalg.svd(M): E = U[:, :k] * np.sqrt(S[:k]) (the FIRST k columns of U, the ones with "
    "the largest singular values, scaled by the square root), then each row divided by its length. "
    "(Compared through E @ E.T, so the signs of your columns do not matter.)"
)


def _matrix(reference, seed, name):
    """(M, k) with a unique answer: redrawn until the k-th singular value is clearly separated."""
    rng = rng_for(seed)
    if name == "the course's PPMI, k=8":
        return course_pipeline(reference)[3], 8
    for _ in range(200):
        if name == "PPMI of a random corpus, k=3":
            corpus = random_corpus(rng, n_sentences=20)
            vocab = sorted({w for s in corpus for w in s})
            M, k = reference.ppmi(reference.cooccurrence(corpus, vocab, 2)), 3
            if (M.sum(axis=1) == 0).any():
                continue
        elif name == "non-symmetric (7, 7), k=2":
            M, k = rng.random((7, 7)), 2
        elif name == "rectangular (6, 9), k=4":
            M, k = rng.random((6, 9)), 4
        else:  # "rectangular (9, 5), k=3"
            M, k = rng.random((9, 5)), 3
        if svd_well_posed(M, k):
            return M, k
    raise RuntimeError(f"could not draw a well-posed matrix for {name}")


CASES = ["the course's PPMI, k=8", "PPMI of a random corpus, k=3", "non-symmetric (7, 7), k=2",
         "rectangular (6, 9), k=4", "rectangular (9, 5), k=3"]


@pytest.mark.parametrize("name", CASES)
def test_gram_matches(student, reference, seed, name):
    """svd_embeddings: E Eᵀ matches the reference"""
    M, k = _matrix(reference, seed, name)
    got = student.svd_embeddings(M, k)
    what = f"svd_embeddings(M, {k}) for {name} (M of shape {M.shape})"
    want = reference.svd_embeddings(M, k)
    float32 = False
    try:
        expect_shape(got, (M.shape[0], k), what)
        E = as_array(got)
        # 1e-8: the top-k subspace is well separated (checked when drawing M), so any SVD or
        # eigen-solver in float64 reproduces E Eᵀ to ~1e-12; the mistakes differ by > 1e-2
        gram, want_gram = torch.from_numpy(E @ E.T), torch.from_numpy(want @ want.T)
        # E in float32's own numbers and E Eᵀ off by float32's rounding, which a float32 SVD magnifies by the
        # matrix's conditioning (measured up to 2e-5 here; every catalogued mistake is off by more than 1e-2): the
        # formula is right, the precision is not (the handout says the feedback tells)
        float32 = float32_values(torch.from_numpy(E), torch.from_numpy(want)) and float((gram - want_gram).abs().max()) < 1e-4
        expect_close(gram, want_gram, f"E @ E.T where E = {what}", atol=1e-8, hint=FLOAT32_HINT if float32 else HINT)
    except Feedback as exc:
        failure = Feedback(str(exc), got=got)  # diagnose on E itself, not on the Gram matrix
        failure.float32 = getattr(exc, "float32", False) or float32
        raise failure from None


def _drawn(rng, draw, k):
    """A matrix from ``draw(rng)`` whose top-k subspace is unique (so E Eᵀ is), redrawn until it is."""
    for _ in range(200):
        M = draw(rng)
        if svd_well_posed(M, k):
            return M
    raise RuntimeError("could not draw a well-posed matrix")


def _expect_values(reference, M, k, got, what):
    """A property test (unit rows, the shape) pays only when the same call's E Eᵀ is right too: full-rank unit
    rows are no SVD. 1e-4: float32's precision is test_gram_matches's to charge; every mistake is off by > 1e-2."""
    E, want = as_array(got), reference.svd_embeddings(M, k)
    try:
        expect_close(torch.from_numpy(E @ E.T), torch.from_numpy(want @ want.T), f"E @ E.T where E = {what}",
                     atol=1e-4, hint="(This test checks a property, and pays only when the values of the same call are "
                     "right too.) " + HINT)
    except Feedback as exc:
        raise Feedback(str(exc), got=got) from None  # diagnose on E itself, not on the Gram matrix


def test_unit_rows(student, reference, seed):
    """svd_embeddings: every row has length 1"""
    rng = rng_for(seed)
    M = _drawn(rng, lambda rng: rng.random((8, 8)) * 3.0, 3)
    got = student.svd_embeddings(M, 3)
    what = "svd_embeddings(M, 3) for a random (8, 8) matrix"
    expect_shape(got, (8, 3), what)
    norms = np.linalg.norm(as_array(got), axis=1)
    try:
        # 1e-10: dividing by the norm in float64 leaves lengths 1 within a few ulps
        expect_close(norms, np.ones(8), f"the row lengths of {what}", atol=1e-10,
                     hint="Divide each row of U[:, :k] * sqrt(S[:k]) by its length "
                     "(np.linalg.norm(E, axis=1, keepdims=True)), so cosine similarity is a plain dot product.")
    except Feedback as exc:
        failure = Feedback(str(exc), got=got)  # diagnose on E itself, not on its row lengths
        failure.float32 = getattr(exc, "float32", False)
        raise failure from None
    _expect_rank(got, 3, what)
    _expect_values(reference, M, 3, got, what)


def _expect_rank(got, k, what):
    """k independent columns: unit rows alone are also met by a constant answer (every row e_1)."""
    rank = int(np.linalg.matrix_rank(as_array(got), tol=1e-6))
    expect_true(rank == k, f"{what}: your embeddings span {rank} dimension(s), not {k}. The k columns are the "
                "k strongest directions of M (U[:, :k] * sqrt(S[:k])), independent of each other.", got=got)


@pytest.mark.parametrize("k", [2, 5])  # not 1: a positive M's first column has one sign, so any +-1 column passes
def test_shape(student, reference, seed, k):
    """svd_embeddings: shape (V, k)"""
    rng = rng_for(seed, k)
    M = _drawn(rng, lambda rng: rng.random((5, 5)) + np.eye(5), k)
    got = student.svd_embeddings(M, k)
    try:
        expect_shape(got, (5, k), f"svd_embeddings(M, {k}) for a (5, 5) matrix")
    except Feedback as exc:
        raise Feedback(str(exc) + " The rows are words, the columns the k strongest directions: U[:, :k].",
                       got=got) from None
    expect_true(np.isfinite(as_array(got)).all(), f"svd_embeddings(M, {k}) for a (5, 5) matrix: your result has "
                "NaN or inf entries.", got=got)
    _expect_rank(got, k, f"svd_embeddings(M, {k}) for a (5, 5) matrix")
    _expect_values(reference, M, k, got, f"svd_embeddings(M, {k}) for a (5, 5) matrix")
