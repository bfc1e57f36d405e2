"""svd_embeddings uses the right singular vectors (rows of Vᵀ) instead of U

The word vectors are the LEFT singular vectors: in M = U S Vᵀ, row w of U belongs to word w (row w of M). The
rows of Vᵀ describe the columns (contexts); for a symmetric PPMI matrix they coincide up to sign, but not in
general.
"""
CAUGHT_BY = [
    "hidden/test_svd_embeddings.py::test_gram_matches",
    "public/test_embeddings_public.py::test_svd_shape_and_unit_rows",
]
PATCH = [('U, S, _ = np.linalg.svd(np.asarray(M, dtype=np.float64), full_matrices=False)\n'
  'E = U[:, :k] * np.sqrt(S[:k])\n',
  'M = np.asarray(M, dtype=np.float64)\n'
  '_, S, Vt = np.linalg.svd(M, full_matrices=False)\n'
  'E = Vt[:k].T * np.sqrt(S[:k])\n')]
