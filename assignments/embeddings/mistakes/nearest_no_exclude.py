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
PATCH = [('lengths = np.linalg.norm(E, axis=1) * np.linalg.norm(v)\n'
  'sims = E @ v / np.where(lengths > 0, lengths, 1.0)\n'
  'skip = set(exclude)\n'
  'order = np.argsort(-sims, kind="stable")\n'
  'return [vocab[i] for i in order if vocab[i] not in skip][:n]\n',
  'sims = E @ v / (np.linalg.norm(E, axis=1) * np.linalg.norm(v))\n'
  'return [vocab[i] for i in np.argsort(-sims)[:n]]\n')]
