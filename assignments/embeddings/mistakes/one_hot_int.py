"""one_hot returns an integer array

One-hot rows are multiplied by a float weight matrix (one_hot @ W is the embedding lookup), so they should be
floats: np.zeros((n, vocab_size)) is float64 by default; np.zeros(..., dtype=int) is not.
"""
CAUGHT_BY = [
    "hidden/test_one_hot.py::test_float_dtype",
]


def one_hot(indices, vocab_size):
    out = np.zeros((len(indices), vocab_size), dtype=np.int64)
    out[np.arange(len(indices)), indices] = 1
    return out
