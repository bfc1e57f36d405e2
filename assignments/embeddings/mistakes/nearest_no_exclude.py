"""nearest ignores `exclude` (so analogy answers with one of its own query words)

The words in `exclude` must be skipped (the query word itself, stop words...). In an analogy the target
E[b] - E[a] + E[c] is usually closest to b or c itself, so without the exclusion the "answer" is often just one
of the three words you asked about.
"""
CAUGHT_BY = [
    "hidden/test_analogy.py::test_excludes_inputs",
    "hidden/test_analogy.py::test_matches_reference",
    "hidden/test_course_results.py::test_bank_neighbours",
    "hidden/test_nearest.py::test_exclude",
    "hidden/test_nearest.py::test_matches_reference",
    "public/test_embeddings_public.py::test_nearest_example",
    "public/test_embeddings_public.py::test_course_results",
]


def nearest(E, vocab, vector, n, exclude=()):
    E = np.asarray(E, dtype=np.float64)
    v = np.asarray(vector, dtype=np.float64)
    sims = E @ v / (np.linalg.norm(E, axis=1) * np.linalg.norm(v))
    return [vocab[i] for i in np.argsort(-sims)[:n]]
