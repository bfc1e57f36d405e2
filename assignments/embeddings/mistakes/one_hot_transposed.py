"""one_hot returns the transposed matrix (vocab_size, n)

Each ROW is one word's one-hot vector: the shape is (len(indices), vocab_size), so that one_hot(ids, V) @ W
(W of shape (V, d)) gives the (n, d) lookup W[ids].
"""
CAUGHT_BY = [
    "hidden/test_one_hot.py::test_embedding_lookup",
    "hidden/test_one_hot.py::test_values",
    "public/test_embeddings_public.py::test_one_hot_example",
]


def one_hot(indices, vocab_size):
    return np.eye(vocab_size)[:, list(indices)]
