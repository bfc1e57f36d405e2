"""svd_embeddings scales U by S instead of sqrt(S)

You multiplied U's columns by the singular values themselves, which over-weights the first directions. The
course's embedding splits S evenly between the two factors of M = (U sqrt(S)) (sqrt(S) Vᵀ): E = U[:, :k] * sqrt(S[:k]).
"""
CAUGHT_BY = [
    "hidden/test_svd_embeddings.py::test_gram_matches",
]
PATCH = [('E = U[:, :k] * np.sqrt(S[:k])\n', 'E = U[:, :k] * S[:k]\n')]
