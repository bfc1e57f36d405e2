"""Hidden tests for one_hot: values, dtype and the embedding-lookup identity."""

import numpy as np
import pytest
from support_embeddings import as_array, rng_for

from autograder.checks import expect_close, expect_shape, expect_true

pytestmark = pytest.mark.grades("one_hot")  # the function these tests grade (summary, dashboard, pytest -m)

CASES = {
    "one word, vocabulary of 1": ([0], 1),
    "5 words of 7, in random order": None,  # drawn from the seed
    "repeated indices": None,
}


def _case(name, seed):
    if CASES[name] is not None:
        return CASES[name]
    rng = rng_for(seed)
    if name == "repeated indices":
        return [int(i) for i in rng.integers(0, 4, size=9)], 4
    return [int(i) for i in rng.permutation(7)[:5]], 7


@pytest.mark.parametrize("name", list(CASES))
def test_values(student, reference, seed, name):
    """one_hot: one 1 per row, in the column of the index"""
    indices, V = _case(name, seed)
    got = student.one_hot(indices, V)
    want = reference.one_hot(indices, V)
    # exact: every entry is 0 or 1
    expect_close(
        got, want, f"one_hot({indices}, {V})", atol=0.0,
        hint=f"Row r must have its single 1 in column indices[r]; the shape is (len(indices), vocab_size) = {want.shape}, "
        "not transposed.",
    )


def test_float_dtype(student):
    """one_hot: returns a float array"""
    got = student.one_hot([1, 0, 2], 3)
    dtype = getattr(got, "dtype", None)
    kind = np.dtype(str(dtype).replace("torch.", "")).kind if dtype is not None else None
    expect_true(
        kind == "f",
        f"one_hot([1, 0, 2], 3): expected a float array (e.g. float64), got {dtype if dtype is not None else type(got).__name__}. "
        "One-hot rows are multiplied by a float weight matrix (the embedding layer), so build them with "
        "np.zeros((n, vocab_size)) (float64 by default), not an integer array.",
        got=got,
    )
    # exact: the dtype counts only for the right rows (an empty float array is no one-hot code)
    expect_close(got, np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]), "one_hot([1, 0, 2], 3)",
                 atol=0.0, hint="Row r has its 1 in column indices[r].")


def test_embedding_lookup(student, seed):
    """one_hot: distinct words are orthogonal and one_hot @ W is the lookup W[ids]"""
    rng = rng_for(seed)
    V, d = 6, 4
    ids = [3, 0, 5, 3]
    W = rng.standard_normal((V, d))
    got = student.one_hot(ids, V)
    expect_shape(got, (len(ids), V), f"one_hot({ids}, {V})")
    X = as_array(got)
    expect_close(
        X @ W, W[ids], f"one_hot({ids}, {V}) @ W for a (6, 4) weight matrix W", atol=1e-12,
        hint="The embedding layer is a table lookup: multiplying one-hot rows by W must pick rows ids of W.",
    )
    dots = X @ X.T
    expect_close(
        dots, (np.array(ids)[:, None] == np.array(ids)[None, :]).astype(float),
        f"dot products between the rows of one_hot({ids}, {V})", atol=1e-12,
        hint="Every pair of distinct one-hot vectors is orthogonal (dot product 0); each has length 1.",
    )
