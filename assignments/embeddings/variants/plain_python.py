"""Plain Python: dictionaries, Counter and loops, NumPy only for the SVD

A correct solution that a student who avoids NumPy tricks might write: counts in a Counter of word pairs,
PPMI entry by entry with math.log, cosine with sums, nearest with sorted().
"""

import math
from collections import Counter


def one_hot(indices, vocab_size):
    rows = []
    for i in indices:
        row = [0.0] * vocab_size
        row[i] = 1.0
        rows.append(row)
    return np.array(rows)


def cooccurrence(corpus, vocab, window):
    pairs = Counter()
    for sentence in corpus:
        for i, w in enumerate(sentence):
            for offset in range(1, window + 1):
                for j in (i - offset, i + offset):
                    if 0 <= j < len(sentence):
                        pairs[(w, sentence[j])] += 1
    return np.array([[float(pairs[(w, c)]) for c in vocab] for w in vocab])


def ppmi(C):
    C = np.asarray(C, dtype=np.float64)
    V, D = C.shape
    total = float(C.sum())
    rows = [float(C[i].sum()) for i in range(V)]
    cols = [float(C[:, j].sum()) for j in range(D)]
    out = np.zeros((V, D))
    for i in range(V):
        for j in range(D):
            if C[i, j] > 0:
                out[i, j] = max(math.log((C[i, j] / total) / ((rows[i] / total) * (cols[j] / total))), 0.0)
    return out


def svd_embeddings(M, k):
    U, S, _ = np.linalg.svd(np.asarray(M, dtype=np.float64))
    rows = []
    for i in range(U.shape[0]):
        row = [U[i, j] * math.sqrt(S[j]) for j in range(k)]
        length = math.sqrt(sum(x * x for x in row))
        rows.append([x / length for x in row])
    return np.array(rows)


def cosine_similarity(a, b):
    a, b = [float(x) for x in a], [float(x) for x in b]
    dot = sum(x * y for x, y in zip(a, b))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def nearest(E, vocab, vector, n, exclude=()):
    scored = [(cosine_similarity(E[i], vector), w) for i, w in enumerate(vocab) if w not in exclude]
    scored.sort(key=lambda pair: -pair[0])
    return [w for _, w in scored[:n]]


def analogy(E, vocab, a, b, c, n=1):
    i = {w: r for r, w in enumerate(vocab)}
    target = [E[i[b]][d] - E[i[a]][d] + E[i[c]][d] for d in range(len(E[0]))]
    return nearest(E, vocab, target, n, exclude=(a, b, c))
