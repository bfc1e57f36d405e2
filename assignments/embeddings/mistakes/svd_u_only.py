"""svd_embeddings uses U without the singular values

You kept U[:, :k] unscaled, so every direction counts equally, however weak. Scale each column by the square
root of its singular value: E = U[:, :k] * sqrt(S[:k]), then normalise the rows.
"""
CAUGHT_BY = [
    "hidden/test_course_results.py::test_bank_neighbours",
    "hidden/test_svd_embeddings.py::test_gram_matches",
]


def svd_embeddings(M, k):
    U, S, _ = np.linalg.svd(np.asarray(M, dtype=np.float64), full_matrices=False)
    E = U[:, :k]
    return E / np.linalg.norm(E, axis=1, keepdims=True)
