"""svd_embeddings slices the first k ROWS of U instead of its first k columns

U[:k] keeps k words (rows), not k directions (columns): the result has the wrong shape (k, V) instead of (V, k)
whenever k < V. The singular directions are U's columns: U[:, :k].
"""
CAUGHT_BY = [
    "hidden/test_course_results.py::test_course_similarities",
    "hidden/test_svd_embeddings.py::test_gram_matches",
    "hidden/test_svd_embeddings.py::test_shape",
    "hidden/test_svd_embeddings.py::test_unit_rows",
    "public/test_embeddings_public.py::test_course_results",
    "public/test_embeddings_public.py::test_svd_shape_and_unit_rows",
]
PATCH = [('U, S, _ = np.linalg.svd(np.asarray(M, dtype=np.float64), full_matrices=False)\n'
  'E = U[:, :k] * np.sqrt(S[:k])\n',
  'U, S, _ = np.linalg.svd(np.asarray(M, dtype=np.float64))\nE = U[:k] * np.sqrt(S)\n')]
