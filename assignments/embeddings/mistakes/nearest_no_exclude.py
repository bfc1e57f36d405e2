"""nearest ignores `exclude` (so analogy answers with one of its own query words).

The words in `exclude` must be skipped. In an analogy, E[b] - E[a] + E[c] is usually closest to b or c itself,
so without the exclusion "king - man + woman" answers "king" instead of queen.
"""
CAUGHT_BY = [
    "hidden/test_nearest.py::test_matches_reference",
    "hidden/test_nearest.py::test_exclude",
    "hidden/test_nearest.py::test_n_respected",
    "hidden/test_analogy.py::test_matches_reference",
    "hidden/test_analogy.py::test_excludes_inputs",
    "hidden/test_course_results.py::test_bank_neighbours",
    "public/test_embeddings_public.py::test_cosine_and_nearest",
]


def nearest(E, vocab, vector, n, exclude=()):
    E = np.asarray(E, dtype=np.float64)
    v = np.asarray(vector, dtype=np.float64)
    sims = E @ v / (np.linalg.norm(E, axis=1) * np.linalg.norm(v))
    return [vocab[i] for i in np.argsort(-sims)[:n]]
