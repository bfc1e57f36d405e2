"""nearest ranks by dot product instead of cosine similarity

E @ v favours long rows (frequent words get long vectors in many embeddings) whatever their direction.
Divide by the row lengths and by |v| to rank by cosine. (The unit rows of svd_embeddings hide this mistake;
rows of other lengths do not.)
"""
CAUGHT_BY = [
    "hidden/test_nearest.py::test_cosine_not_dot",
    "hidden/test_nearest.py::test_matches_reference",
    "public/test_embeddings_public.py::test_nearest_example",
]
PATCH = [('E = np.asarray(E, dtype=np.float64)\n'
  'v = np.asarray(vector, dtype=np.float64)\n'
  'lengths = np.linalg.norm(E, axis=1) * np.linalg.norm(v)\n'
  'sims = E @ v / np.where(lengths > 0, lengths, 1.0)\n'
  'skip = set(exclude)\n'
  'order = np.argsort(-sims, kind="stable")\n'
  'return [vocab[i] for i in order if vocab[i] not in skip][:n]\n',
  'scores = np.asarray(E, dtype=np.float64) @ np.asarray(vector, dtype=np.float64)\n'
  'return [vocab[i] for i in np.argsort(-scores) if vocab[i] not in set(exclude)][:n]\n')]
