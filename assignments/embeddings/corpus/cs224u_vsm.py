"""CS224u's vsm.py: PPMI as observed over expected (np.outer of the margins / total), log with the errors silenced, inf set to 0, negatives clipped; LSA by np.linalg.svd; cosine as 1 minus the cosine distance; neighbours sorted by distance

Source: cgpotts/cs224u, vsm.py, functions ``observed_over_expected``, ``pmi``, ``lsa``,
``vector_length``, ``length_norm``, ``cosine`` and ``neighbors`` (Apache-2.0 licence). Written
after its formulation, not copied: the search tools' terms keep public code out of this
repository's commits, so each step below follows the source's order and operations, in the
kit's names (on NumPy arrays instead of pandas DataFrames).
Changes for the contract: ``pmi`` also silences 'invalid' and sets NaN to 0 (the source leaves
NaN for an all-zero row or matrix, where expected is 0; the contract wants 0 and no warning);
``lsa`` keeps ``rowmat[:, :k]`` times the singular values as the source does but takes their
square root (the contract's U sqrt(S)) and then applies the source's ``length_norm`` to every
row; ``cosine`` is scipy's cosine distance in the source, written here with the source's own
``vector_length`` as 1 - u·v / (|u| |v|), and cosine_similarity returns 1 minus it; ``neighbors``
compares a vector (not a word) with every row, skips ``exclude`` and keeps the first n; a zero
row gets distance 1 instead of NaN. one_hot, cooccurrence and analogy come from the reference.
"""
BUG = ("positive=True):", "positive=False):")  # plain PMI: negatives kept
BUG_NAMES = ["ppmi_no_clip"]


def _vector_length(u):
    return np.sqrt(u.dot(u))  # noqa: F821


def _observed_over_expected(df):
    col_totals = df.sum(axis=0)
    total = col_totals.sum()
    row_totals = df.sum(axis=1)
    expected = np.outer(row_totals, col_totals) / total  # noqa: F821
    return df / expected


def _pmi(df, positive=True):
    with np.errstate(divide="ignore", invalid="ignore"):  # noqa: F821
        df = _observed_over_expected(df)
        df = np.log(df)  # noqa: F821
    df[np.isinf(df)] = 0.0  # noqa: F821 - log(0) = 0
    df[np.isnan(df)] = 0.0  # noqa: F821 - 0 / 0 (an empty row): 0
    if positive:
        df[df < 0] = 0.0
    return df


def ppmi(C):
    return _pmi(np.asarray(C, dtype=float))  # noqa: F821


def svd_embeddings(M, k):
    rowmat, singvals, colmat = np.linalg.svd(np.asarray(M, dtype=float), full_matrices=False)  # noqa: F821
    singvals = np.diag(np.sqrt(singvals))  # noqa: F821
    trunc = np.dot(rowmat[:, 0:k], singvals[0:k, 0:k])  # noqa: F821
    return np.array([row / _vector_length(row) for row in trunc])  # noqa: F821


def _cosine(u, v):
    return 1.0 - (np.dot(u, v) / (_vector_length(u) * _vector_length(v)))  # noqa: F821


def cosine_similarity(a, b):
    return float(1.0 - _cosine(np.asarray(a, dtype=float), np.asarray(b, dtype=float)))  # noqa: F821


def nearest(E, vocab, vector, n, exclude=()):
    w = np.asarray(vector, dtype=float)  # noqa: F821
    dists = []
    for x in np.asarray(E, dtype=float):  # noqa: F821
        dists.append(_cosine(w, x) if _vector_length(x) > 0 else 1.0)
    order = np.argsort(np.array(dists), kind="stable")  # noqa: F821 - sort_values: closest first
    return [vocab[i] for i in order if vocab[i] not in exclude][:n]
