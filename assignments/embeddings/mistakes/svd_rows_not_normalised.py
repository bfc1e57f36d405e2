"""svd_embeddings does not normalise the rows

Your rows are not unit length. The contract divides each row of U[:, :k] * sqrt(S[:k]) by its length, so that
frequent and rare words are compared by direction only and cosine similarity is a plain dot product.
"""
CAUGHT_BY = [
    "hidden/test_course_results.py::test_course_similarities",
    "hidden/test_svd_embeddings.py::test_gram_matches",
    "hidden/test_svd_embeddings.py::test_unit_rows",
    "public/test_embeddings_public.py::test_svd_shape_and_unit_rows",
]
PATCH = [('E = U[:, :k] * np.sqrt(S[:k])\nreturn E / np.linalg.norm(E, axis=1, keepdims=True)\n',
  'return U[:, :k] * np.sqrt(S[:k])\n')]
