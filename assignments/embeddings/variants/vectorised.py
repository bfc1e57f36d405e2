"""Vectorised NumPy: np.add.at for the counts, np.errstate + np.where for PPMI, eigh of M Mᵀ for the SVD

A correct solution in a different style: no Python loop over word pairs, and the left singular vectors found
as eigenvectors of M Mᵀ (eigenvalues S², sorted increasing by eigh, so reversed here).
"""


def one_hot(indices, vocab_size):
    return (np.asarray(indices)[:, None] == np.arange(vocab_size)[None, :]).astype(np.float64)


def cooccurrence(corpus, vocab, window):
    index = {w: i for i, w in enumerate(vocab)}
    C = np.zeros((len(vocab), len(vocab)))
    for sentence in corpus:
        ids = np.array([index[w] for w in sentence], dtype=np.int64)     # (L,)
        pos = np.arange(len(ids))                                        # (L,)
        dist = np.abs(pos[:, None] - pos[None, :])                       # (L, L)
        near = (dist > 0) & (dist <= window)                             # (L, L) neighbour pairs
        rows, cols = np.nonzero(near)
        np.add.at(C, (ids[rows], ids[cols]), 1.0)                        # repeated pairs accumulate
    return C


def ppmi(C):
    C = np.asarray(C, dtype=np.float64)
    total = C.sum()
    row = C.sum(axis=1, keepdims=True)
    col = C.sum(axis=0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log(C * total / (row * col))                            # P(w,c) / (P(w) P(c)) = C N / (r c)
    return np.where(C > 0, np.maximum(pmi, 0.0), 0.0)


def svd_embeddings(M, k):
    M = np.asarray(M, dtype=np.float64)
    evals, evecs = np.linalg.eigh(M @ M.T)                               # increasing eigenvalues S**2
    order = np.argsort(evals)[::-1][:k]
    S = np.sqrt(np.clip(evals[order], 0.0, None))                        # (k,)
    E = evecs[:, order] * np.sqrt(S)                                     # (V, k)
    return E / np.linalg.norm(E, axis=1, keepdims=True)


def cosine_similarity(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.dot(a / np.linalg.norm(a), b / np.linalg.norm(b)))


def nearest(E, vocab, vector, n, exclude=()):
    E = np.asarray(E, dtype=np.float64)
    unit = E / np.linalg.norm(E, axis=1, keepdims=True)
    sims = unit @ (np.asarray(vector, dtype=np.float64) / np.linalg.norm(vector))
    mask = np.isin(np.asarray(vocab, dtype=object), list(exclude))
    sims = np.where(mask, -np.inf, sims)
    return [vocab[i] for i in np.argsort(-sims, kind="stable")[:n]]


def analogy(E, vocab, a, b, c, n=1):
    E = np.asarray(E, dtype=np.float64)
    row = {w: E[i] for i, w in enumerate(vocab)}
    return nearest(E, vocab, row[b] - row[a] + row[c], n, exclude=[a, b, c])
