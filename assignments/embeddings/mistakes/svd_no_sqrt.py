"""svd_embeddings scales U by S instead of sqrt(S)

You multiplied U's columns by the singular values themselves, which over-weights the first directions. The
course's embedding splits S evenly between the two factors of M = (U sqrt(S)) (sqrt(S) Vᵀ): E = U[:, :k] * sqrt(S[:k]).
"""
CAUGHT_BY = [
    "hidden/test_course_results.py::test_bank_neighbours",
    "hidden/test_svd_embeddings.py::test_gram_matches",
]


def svd_embeddings(M, k):
    U, S, _ = np.linalg.svd(np.asarray(M, dtype=np.float64), full_matrices=False)
    E = U[:, :k] * S[:k]
    return E / np.linalg.norm(E, axis=1, keepdims=True)
