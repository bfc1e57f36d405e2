"""svd_embeddings takes the LAST k columns of U

np.linalg.svd returns the singular values in DECREASING order, so the strongest directions are the first
columns: U[:, :k], S[:k]. (np.linalg.eigh is the one that sorts increasing.) U[:, -k:] keeps the weakest ones.
"""
CAUGHT_BY = [
    "hidden/test_course_results.py::test_course_similarities",
    "hidden/test_svd_embeddings.py::test_gram_matches",
    "public/test_embeddings_public.py::test_course_results",
]
PATCH = [('E = U[:, :k] * np.sqrt(S[:k])\n', 'E = U[:, -k:] * np.sqrt(S[-k:])\n')]
