"""cosine_similarity returns the plain dot product

a·b grows with the vectors' lengths; cosine similarity divides it by |a| |b| so that only the angle counts.
(For the unit rows of svd_embeddings the two coincide, which is why this can look right on the course's vectors.)
"""
CAUGHT_BY = [
    "hidden/test_cosine_similarity.py::test_angles",
    "hidden/test_cosine_similarity.py::test_random_vectors",
    "public/test_embeddings_public.py::test_cosine_example",
]
PATCH = [('a = np.asarray(a, dtype=np.float64)\n'
  'b = np.asarray(b, dtype=np.float64)\n'
  'return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))\n',
  'return float(np.dot(a, b))\n')]
