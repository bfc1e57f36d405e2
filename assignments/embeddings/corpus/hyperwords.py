"""Levy, Goldberg and Dagan's hyperwords: PMI as counts times reciprocal row sums times reciprocal column sums times the total, log of the counted cells, negatives set to 0; SVD vectors U * s**eig with eig = 0.5, rows normalised; similarity and closest words by dot products of normalised rows (heapq.nlargest)

Source: the hyperwords package (Omer Levy; read in its GitHub fork Ivanopolo/hyperwords):
hyperwords/counts2pmi.py ``calc_pmi``, hyperwords/representations/explicit.py
``PositiveExplicit`` (log of the stored cells, ``data[data < 0] = 0``),
hyperwords/representations/embedding.py ``SVDEmbedding`` (``np.power(s, eig) * ut.T``, then
``normalize``) and ``Embedding.similarity`` / ``closest`` (no licence file in the stored
snapshot). Written after its formulation, not copied (the search tools' terms keep public code
out of this repository's commits).
Changes for the contract: dense NumPy arrays instead of scipy sparse matrices, so "the stored
cells" are the cells with a positive count (the sparse matrix stores only those); no context
distribution smoothing (cds = 1) and no shift (neg = 1), the contract's plain PPMI; a zero row
or column sum gets reciprocal 0 instead of inf (the sparse code never meets one; the contract
wants no warning); the SVD is np.linalg.svd of the matrix instead of sparsesvd, keeping the
first k singular vectors, with eig = 0.5 (the contract's sqrt scaling); ``normalize`` leaves an
all-zero row at zero instead of dividing by 0; cosine_similarity normalises both vectors and
takes their dot product (the source's similarity of normalised rows); nearest normalises E's
rows and the vector, scores every row with one matrix product and takes
``heapq.nlargest(n + len(exclude), ...)`` before dropping excluded words (the source has no
exclusion). one_hot, cooccurrence and analogy come from the reference.
"""

import heapq

BUG = ("eig = 0.5", "eig = 1.0")  # U * S instead of U * sqrt(S)
BUG_NAMES = ["svd_no_sqrt"]


def _reciprocal(x):
    out = np.zeros_like(x)  # noqa: F821
    np.divide(1.0, x, out=out, where=x != 0)  # noqa: F821
    return out


def _normalize(m):
    norm = np.sqrt(np.sum(m * m, axis=-1))  # noqa: F821
    return m / np.where(norm > 0, norm, 1.0)[..., np.newaxis]  # noqa: F821


def ppmi(C):
    counts = np.asarray(C, dtype=float)  # noqa: F821
    sum_w = counts.sum(axis=1)
    sum_c = counts.sum(axis=0)
    sum_total = sum_c.sum()
    pmi = counts * _reciprocal(sum_w)[:, None]  # multiply_by_rows
    pmi = pmi * _reciprocal(sum_c)[None, :]  # multiply_by_columns
    pmi = pmi * sum_total  # e^PMI
    stored = counts > 0
    pmi[stored] = np.log(pmi[stored])  # noqa: F821
    pmi[pmi < 0] = 0
    return pmi


def svd_embeddings(M, k):
    u, s, vt = np.linalg.svd(np.asarray(M, dtype=float), full_matrices=False)  # noqa: F821
    ut, s = u[:, :k].T, s[:k]
    eig = 0.5
    m = np.power(s, eig) * ut.T  # noqa: F821
    return _normalize(m)


def cosine_similarity(a, b):
    return float(_normalize(np.asarray(a, dtype=float)).dot(_normalize(np.asarray(b, dtype=float))))  # noqa: F821


def nearest(E, vocab, vector, n, exclude=()):
    m = _normalize(np.asarray(E, dtype=float))  # noqa: F821
    scores = m.dot(_normalize(np.asarray(vector, dtype=float)))  # noqa: F821
    best = heapq.nlargest(n + len(exclude), zip(scores, vocab))
    return [word for _, word in best if word not in exclude][:n]
