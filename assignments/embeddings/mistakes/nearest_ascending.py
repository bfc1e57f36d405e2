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
PATCH = [('lengths = np.linalg.norm(E, axis=1) * np.linalg.norm(v)\n'
  'sims = E @ v / np.where(lengths > 0, lengths, 1.0)\n'
  'skip = set(exclude)\n'
  'order = np.argsort(-sims, kind="stable")\n'
  'return [vocab[i] for i in order if vocab[i] not in skip][:n]\n',
  'sims = E @ v / (np.linalg.norm(E, axis=1) * np.linalg.norm(v))\n'
  'return [vocab[i] for i in np.argsort(sims) if vocab[i] not in set(exclude)][:n]\n')]
