"""one_hot returns the transposed matrix (vocab_size, n)

Each ROW is one word's one-hot vector: the shape is (len(indices), vocab_size), so that one_hot(ids, V) @ W
(W of shape (V, d)) gives the (n, d) lookup W[ids].
"""
CAUGHT_BY = [
    "hidden/test_one_hot.py::test_embedding_lookup",
    "hidden/test_one_hot.py::test_values",
    "public/test_embeddings_public.py::test_one_hot_example",
]
PATCH = [('ids = np.asarray(indices, dtype=np.int64).reshape(-1)\n'
  'out = np.zeros((ids.shape[0], vocab_size))\n'
  'out[np.arange(ids.shape[0]), ids] = 1.0\n'
  'return out\n',
  'return np.eye(vocab_size)[:, list(indices)]\n')]
