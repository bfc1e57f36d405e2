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
PATCH = [('lengths = np.linalg.norm(E, axis=1) * np.linalg.norm(v)\n'
  'sims = E @ v / np.where(lengths > 0, lengths, 1.0)\n'
  'skip = set(exclude)\n'
  'order = np.argsort(-sims, kind="stable")\n'
  'return [vocab[i] for i in order if vocab[i] not in skip][:n]\n',
  'sims = E @ v / (np.linalg.norm(E, axis=1) * np.linalg.norm(v))\n'
  'top = [vocab[i] for i in np.argsort(-sims)[:n]]\n'
  'return [w for w in top if w not in set(exclude)]\n')]
