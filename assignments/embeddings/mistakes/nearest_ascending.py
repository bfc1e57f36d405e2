"""nearest sorts from the least similar word to the most

np.argsort sorts increasing, so np.argsort(sims) puts the LEAST similar words first. Sort by -sims (or reverse
the order) to list the most similar words first.
"""
CAUGHT_BY = [
    "hidden/test_analogy.py::test_course_analogy",
    "hidden/test_analogy.py::test_matches_reference",
    "hidden/test_course_results.py::test_bank_neighbours",
    "hidden/test_nearest.py::test_cosine_not_dot",
    "hidden/test_nearest.py::test_exclude",
    "hidden/test_nearest.py::test_matches_reference",
    "hidden/test_nearest.py::test_most_similar_first",
    "public/test_embeddings_public.py::test_nearest_example",
    "public/test_embeddings_public.py::test_course_results",
]


def nearest(E, vocab, vector, n, exclude=()):
    E = np.asarray(E, dtype=np.float64)
    v = np.asarray(vector, dtype=np.float64)
    sims = E @ v / (np.linalg.norm(E, axis=1) * np.linalg.norm(v))
    return [vocab[i] for i in np.argsort(sims) if vocab[i] not in set(exclude)][:n]
