"""cosine_similarity divides by the length of only one vector

Your cosine changes when the second vector is scaled. cos(a, b) = a·b / (|a| |b|): divide by BOTH lengths,
so the result only measures the angle and lies in [-1, 1].
"""
CAUGHT_BY = [
    "hidden/test_cosine_similarity.py::test_angles",
    "hidden/test_cosine_similarity.py::test_random_vectors",
    "public/test_embeddings_public.py::test_cosine_example",
]
PATCH = [('return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))\n',
  'return float(a @ b / np.linalg.norm(a))\n')]
