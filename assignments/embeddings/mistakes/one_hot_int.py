"""one_hot returns an integer array

One-hot rows are multiplied by a float weight matrix (one_hot @ W is the embedding lookup), so they should be
floats: np.zeros((n, vocab_size)) is float64 by default; np.zeros(..., dtype=int) is not.
"""
CAUGHT_BY = [
    "hidden/test_one_hot.py::test_float_dtype",
]
PATCH = [('ids = np.asarray(indices, dtype=np.int64).reshape(-1)\n'
  'out = np.zeros((ids.shape[0], vocab_size))\n'
  'out[np.arange(ids.shape[0]), ids] = 1.0\n',
  'out = np.zeros((len(indices), vocab_size), dtype=np.int64)\nout[np.arange(len(indices)), indices] = 1\n')]
