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


def nearest(E, vocab, vector, n, exclude=()):
    scores = np.asarray(E, dtype=np.float64) @ np.asarray(vector, dtype=np.float64)
    return [vocab[i] for i in np.argsort(-scores) if vocab[i] not in set(exclude)][:n]
