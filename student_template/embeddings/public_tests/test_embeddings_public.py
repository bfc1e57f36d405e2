"""Public tests for embeddings.py: small hand-checked examples and the course's results.

Run them with `pytest` in this folder. They are a fast subset of the grader's tests; passing them
does not guarantee full marks (the hidden tests also use random corpora and edge cases).
"""

import math

import numpy as np
import pytest
import torch

from autograder.checks import (
    FLOAT32_HINT,
    Feedback,
    checkpoint,
    distinct_digits,
    expect_close,
    expect_shape,
    expect_true,
    float32_sized,
)


def _expect_number(got, want, what, atol, hint=""):
    """``got`` is a single number within ``atol`` of ``want``."""
    checkpoint()  # a check of the test's own: numbered like the kit's (the diagnosis looks at the same one)
    try:
        value = float(np.asarray(got, dtype=np.float64).reshape(()))
    except (TypeError, ValueError):
        raise Feedback(f"{what}: expected a single number (a Python float), got {type(got).__name__}.", got=got) from None
    if not abs(value - want) <= atol:
        got64, want64 = torch.tensor([value], dtype=torch.float64), torch.tensor([want], dtype=torch.float64)
        float32 = float32_sized((got64 - want64).abs(), want64, atol, got=got64)
        if float32:
            hint = FLOAT32_HINT  # the formula is right: a float32 computation lost the digits
        shown_want, shown_got = distinct_digits(want, value)
        failure = Feedback(f"{what}: expected {shown_want}, got {shown_got} (tolerance {atol:.0e}). {hint}", got=got)
        failure.float32 = float32
        raise failure


@pytest.mark.grades("one_hot")
def test_one_hot_example(student):
    """one_hot: one_hot([2, 0], 3) is [[0, 0, 1], [1, 0, 0]]"""
    got = student.one_hot([2, 0], 3)
    # exact: entries are 0 or 1
    expect_close(got, np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]), "one_hot([2, 0], 3)", atol=0.0,
                 hint="Row r has its 1 in column indices[r]; shape (len(indices), vocab_size).")


@pytest.mark.grades("cooccurrence")
def test_cooccurrence_example(student):
    """cooccurrence: a hand-counted example with a repeated word and two sentences"""
    corpus = [["a", "b", "a", "c"], ["c", "b"]]
    vocab = ["a", "b", "c"]
    got = student.cooccurrence(corpus, vocab, 1)
    # sentence 1, window 1: a-b, b-a, b-a, a-b, a-c, c-a; sentence 2: c-b, b-c
    want = np.array([[0.0, 2.0, 1.0],
                     [2.0, 0.0, 1.0],
                     [1.0, 1.0, 0.0]])
    # exact: integer counts
    expect_close(got, want, f"cooccurrence({corpus}, {vocab}, window=1)", atol=0.0,
                 hint="Count neighbours on both sides within the window, not the word's own position, and never "
                 "across the two sentences.")


@pytest.mark.grades("ppmi")
def test_ppmi_example(student):
    """ppmi: a 2x2 example with a zero count"""
    C = np.array([[2.0, 1.0], [1.0, 0.0]])
    got = student.ppmi(C)
    # total 4; P(w) = P(c) = [3/4, 1/4]; PMI[0,0] = ln((2/4) / (9/16)) < 0 -> 0;
    # PMI[0,1] = PMI[1,0] = ln((1/4) / (3/16)) = ln(4/3); C[1,1] = 0 -> 0
    want = np.array([[0.0, math.log(4 / 3)], [math.log(4 / 3), 0.0]])
    # 1e-12: a few float64 operations
    expect_close(got, want, "ppmi([[2, 1], [1, 0]])", atol=1e-12,
                 hint="max(ln(P(w,c) / (P(w) P(c))), 0) with the natural log; 0 where the count is 0.")


@pytest.mark.grades("svd_embeddings")
def test_svd_shape_and_unit_rows(student):
    """svd_embeddings: shape (V, k) and unit-length rows"""
    M = np.array([[3.0, 1.0, 0.0, 1.0], [1.0, 2.0, 1.0, 0.0], [0.0, 1.0, 4.0, 1.0],
                  [1.0, 0.0, 1.0, 1.0], [2.0, 2.0, 0.0, 0.0]])
    got = student.svd_embeddings(M, 2)
    expect_shape(got, (5, 2), "svd_embeddings(M, 2) for a (5, 4) matrix")
    # 1e-10: dividing by the norm leaves lengths 1 within a few ulps
    expect_close(np.linalg.norm(np.asarray(got, dtype=float), axis=1), np.ones(5),
                 "the row lengths of svd_embeddings(M, 2)", atol=1e-10, hint="Divide each row by its length.")
    rank = int(np.linalg.matrix_rank(np.asarray(got, dtype=float), tol=1e-6))
    expect_true(rank == 2, f"svd_embeddings(M, 2): your 5 rows span {rank} dimension(s), not 2: the two columns "
                "are the two strongest directions of M, independent of each other.")


@pytest.mark.grades("cosine_similarity")
def test_cosine_example(student):
    """cosine_similarity: cosine([3, 4], [4, 3]) is 24/25"""
    # 1e-8: a few float64 operations (1e-16), plus an epsilon of up to 1e-8 on the norms, which the
    # contract allows: x / (|x| + 1e-8) moves this cosine by 4e-9 (by 2e-9 inside the square roots)
    _expect_number(student.cosine_similarity(np.array([3.0, 4.0]), np.array([4.0, 3.0])), 24 / 25,
                 "cosine_similarity([3, 4], [4, 3])", atol=1e-8, hint="a·b / (|a| |b|) = 24 / (5 * 5).")
    _expect_number(student.cosine_similarity(np.array([2.0, 0.0]), np.array([0.0, 7.0])), 0.0,
                 "cosine_similarity([2, 0], [0, 7])", atol=1e-12, hint="Orthogonal vectors have cosine 0.")


@pytest.mark.grades("nearest")
def test_nearest_example(student):
    """nearest: ranks by cosine, most similar first, skipping excluded words"""
    E = np.array([[10.0, 10.0], [1.0, 0.0], [0.0, -3.0], [0.8, 0.1]])
    vocab = ["long", "aligned", "opposite", "close"]
    got = list(student.nearest(E, vocab, np.array([1.0, 0.0]), 2, exclude=("aligned",)))
    expect_true(got == ["close", "long"],
                f"nearest(E, vocab, [1, 0], 2, exclude=('aligned',)) with rows long=[10, 10], aligned=[1, 0], "
                f"opposite=[0, -3], close=[0.8, 0.1]: expected ['close', 'long'] (cosines 0.99 and 0.71; 'aligned' "
                f"is excluded), got {got}. Rank by cosine (not dot product), highest first, skip excluded words "
                "before keeping n.")


@pytest.mark.grades("analogy")
def test_course_results(student):
    """analogy: the course's results (king~queen 0.997, king - man + woman, 'bank')"""
    corpus = student.course_corpus()
    vocab = student.build_vocab(corpus)
    E = student.svd_embeddings(student.ppmi(student.cooccurrence(corpus, vocab, 6)), 8)
    idx = student.word_index(vocab)
    # 2e-3: the course printed 0.997
    _expect_number(student.cosine_similarity(E[idx["king"]], E[idx["queen"]]), 0.9967, "cosine(king, queen)",
                 atol=2e-3, hint="The course measured 0.997 with window 6 and k = 8.")
    got = sorted(student.analogy(E, vocab, "man", "king", "woman", n=2))
    expect_true(got == ["princess", "queen"], f"analogy(E, vocab, 'man', 'king', 'woman', n=2): expected queen and "
                f"princess (in either order: they are a near-tie), got {got}.")
    stop = tuple(student.COURSE_STOP_WORDS) + ("bank",)
    got = sorted(student.nearest(E, vocab, E[idx["bank"]], 2, exclude=stop))
    expect_true(got == ["money", "river"], f"nearest to 'bank' (stop words skipped): expected river and money, got {got}.")
