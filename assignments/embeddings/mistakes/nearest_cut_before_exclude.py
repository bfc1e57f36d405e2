"""nearest keeps the first n words, then removes the excluded ones (too few words)

Taking the top n and only then dropping excluded words leaves fewer than n words whenever an excluded word
was among them. Skip the excluded words first, then keep the first n.
"""
CAUGHT_BY = [
    "hidden/test_analogy.py::test_excludes_inputs",
    "hidden/test_analogy.py::test_matches_reference",
    "hidden/test_course_results.py::test_bank_neighbours",
    "hidden/test_nearest.py::test_exclude",
    "hidden/test_nearest.py::test_matches_reference",
    "hidden/test_nearest.py::test_n_respected",
    "public/test_embeddings_public.py::test_nearest_example",
    "public/test_embeddings_public.py::test_course_results",
]


def nearest(E, vocab, vector, n, exclude=()):
    E = np.asarray(E, dtype=np.float64)
    v = np.asarray(vector, dtype=np.float64)
    sims = E @ v / (np.linalg.norm(E, axis=1) * np.linalg.norm(v))
    top = [vocab[i] for i in np.argsort(-sims)[:n]]
    return [w for w in top if w not in set(exclude)]
