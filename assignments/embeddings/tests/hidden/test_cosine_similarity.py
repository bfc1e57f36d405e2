"""Hidden tests for cosine_similarity."""

import numpy as np
import pytest
from support_embeddings import cosine_tolerance, expect_number, rng_for

pytestmark = pytest.mark.grades("cosine_similarity")  # the function these tests grade (summary, dashboard, pytest -m)

HINT = "cosine(a, b) = a·b / (|a| |b|): divide the dot product by the lengths of BOTH vectors."


@pytest.mark.parametrize("dim", [2, 8, 50])
def test_random_vectors(student, seed, dim):
    """cosine_similarity: random vectors of different lengths"""
    rng = rng_for(seed, dim)
    for _ in range(3):
        a = rng.standard_normal(dim) * 10.0 ** rng.uniform(-1, 1)
        b = rng.standard_normal(dim) * 10.0 ** rng.uniform(-1, 1)
        want = float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))
        got = student.cosine_similarity(a, b)
        # float64 round-off is 3e-16; an epsilon up to 1e-8 on the norms is allowed (cosine_tolerance)
        expect_number(got, want, f"cosine_similarity(a, b) for two random vectors of length {dim} "
                     f"(|a| = {np.linalg.norm(a):.3g}, |b| = {np.linalg.norm(b):.3g})",
                     atol=cosine_tolerance(a, b, want), hint=HINT)


def test_angles(student, seed):
    """cosine_similarity: 1 for parallel, -1 for opposite, 0 for orthogonal vectors"""
    rng = rng_for(seed)
    a = rng.standard_normal(6) * 5.0
    c = rng.standard_normal(6)
    c -= (c @ a) / (a @ a) * a  # orthogonal to a
    for b, want, what in [(3.0 * a, 1.0, "a and 3a"), (-0.5 * a, -1.0, "a and -a/2"), (c, 0.0, "orthogonal a and c")]:
        got = student.cosine_similarity(a, b)
        # exact up to rounding, plus the allowed epsilon on the norms (cosine_tolerance; about 4e-9 here)
        expect_number(got, want, f"cosine_similarity for {what} (|a| = {np.linalg.norm(a):.3g})",
                     atol=max(cosine_tolerance(a, b, want), 1e-12),
                     hint=HINT + " Cosine ignores lengths: it only measures the angle.")
