"""Grader-side helpers for the hidden `embeddings` tests (never shipped to students).

Random inputs come from ``np.random.default_rng(seed)`` so each test is
reproducible and shifts with ``AG_SEED``. Inputs whose answer is not unique
(near-tied similarities, nearly equal singular values at the cut-off k) are
redrawn, so a correct solution passes under every seed and every BLAS.
"""

from __future__ import annotations

import numpy as np
import torch

from autograder.checks import FLOAT32_HINT, Feedback, checkpoint, describe, distinct_digits, float32_sized

#: A small vocabulary for random corpora: few words, so sentences repeat words.
RANDOM_WORDS = ["cat", "dog", "sun", "tea", "map", "ink", "owl"]

#: Royal words of the course's corpus (their cosine with "bank" is below 0).
ROYAL_WORDS = ("king", "queen", "prince", "princess", "crown", "kingdom", "ruled", "wore")


def rng_for(seed: int, salt: int = 0) -> np.random.Generator:
    return np.random.default_rng([seed, salt])


def random_corpus(rng: np.random.Generator, n_sentences: int = 12, max_len: int = 9, words=RANDOM_WORDS):
    """Random sentences of length 1..max_len over a few words (so words repeat inside sentences)."""
    words = list(words)
    lengths = rng.integers(1, max_len + 1, size=n_sentences)
    lengths[0] = 1  # always at least one single-word sentence
    return [[words[i] for i in rng.integers(0, len(words), size=int(n))] for n in lengths]


def shuffled_vocab(rng: np.random.Generator, corpus, extra=("zebra",)):
    """The corpus's words plus an unused word, in a random (not sorted) order."""
    vocab = sorted({w for s in corpus for w in s} | set(extra))
    return [vocab[i] for i in rng.permutation(len(vocab))]


def random_counts(rng: np.random.Generator, shape, zero_fraction: float = 0.4, symmetric: bool = False) -> np.ndarray:
    """Integer-valued float counts with some zeros; non-symmetric unless asked."""
    C = rng.integers(1, 9, size=shape).astype(np.float64)
    C[rng.random(shape) < zero_fraction] = 0.0
    if symmetric:
        C = C + C.T
    # every row and column gets at least one count, so the matrix has no empty row
    for i in range(shape[0]):
        if C[i].sum() == 0:
            C[i, rng.integers(0, shape[1])] = 1.0
    for j in range(shape[1]):
        if C[:, j].sum() == 0:
            C[rng.integers(0, shape[0]), j] = 1.0
    return C


def svd_well_posed(M: np.ndarray, k: int) -> bool:
    """True when the top-k embedding of M is unique: a clear gap after the k-th singular
    value and no word whose top-k part is nearly zero (normalising it would amplify noise)."""
    U, S, _ = np.linalg.svd(M, full_matrices=False)
    if k < len(S) and (S[k - 1] - S[k]) < 1e-3 * S[0]:
        return False
    E = U[:, :k] * np.sqrt(S[:k])
    norms = np.linalg.norm(E, axis=1)
    return bool(norms.min() > 1e-2 * norms.max())


def cosines(E: np.ndarray, v: np.ndarray) -> np.ndarray:
    E = np.asarray(E, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    return E @ v / (np.linalg.norm(E, axis=1) * np.linalg.norm(v))


def ranking_is_clear(E: np.ndarray, v: np.ndarray, n_top: int, gap: float = 1e-4) -> bool:
    """True when the n_top best cosines are separated from each other and from the rest by ``gap``."""
    s = np.sort(cosines(E, v))[::-1]
    n_top = min(n_top + 1, len(s))
    return bool(np.all(np.diff(s[:n_top]) < -gap))


def random_embeddings(rng: np.random.Generator, V: int, d: int) -> np.ndarray:
    """Rows of very different lengths, so ranking by dot product differs from cosine."""
    E = rng.standard_normal((V, d))
    return E * 10.0 ** rng.uniform(-1, 1, size=(V, 1))


def course_pipeline(reference):
    """(corpus, vocab, C, PPMI, E) of the course's corpus, computed with the reference."""
    corpus = reference.course_corpus()
    vocab = reference.build_vocab(corpus)
    C = reference.cooccurrence(corpus, vocab, reference.COURSE_WINDOW)
    P = reference.ppmi(C)
    E = reference.svd_embeddings(P, reference.COURSE_DIM)
    return corpus, vocab, C, P, E


def as_array(x, what: str = "the returned array") -> np.ndarray:
    """A student's array (NumPy, or a torch tensor if they used torch) as float64 NumPy. The contract's
    answers are numbers: True/False (or complex) values fail here, where their kind would be lost."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    raw = np.asarray(x) if not isinstance(x, (str, bytes)) else None
    if raw is not None and raw.dtype.kind in "bc":
        raise Feedback(f"{what}: expected a float array, got {describe(x)}: the values were not compared.", got=x,
                       kind="unreadable")
    return np.asarray(x, dtype=np.float64)


def as_words(x):
    """A student's list of words as a plain list of str (or None if it is not a list of strings)."""
    if isinstance(x, (list, tuple)) and all(isinstance(w, str) for w in x):
        return [str(w) for w in x]
    return None


def expect_number(got, want: float, what: str, atol: float, hint: str = "") -> None:
    """``got`` is one number within ``atol`` of ``want``.

    (A scalar check of our own: ``expect_close`` cannot report a failure on 0-d values, see the report.)
    """
    checkpoint()
    raw = np.asarray(got.detach() if hasattr(got, "detach") else got) if not isinstance(got, (str, bytes)) else None
    if raw is not None and raw.dtype.kind in "bc":  # True/False (or complex) is not the number asked for
        raise Feedback(f"{what}: expected a single real number (a Python float), got {describe(got)}: the value was "
                       "not compared.", got=got, kind="unreadable")
    try:
        value = float(np.asarray(got.detach() if hasattr(got, "detach") else got, dtype=np.float64).reshape(()))
    except (TypeError, ValueError):
        raise Feedback(f"{what}: expected a single number (a Python float), got {describe(got)}.", got=got) from None
    if not abs(value - want) <= atol:  # also fails on NaN
        got64, want64 = torch.tensor([value], dtype=torch.float64), torch.tensor([want], dtype=torch.float64)
        float32 = float32_sized((got64 - want64).abs(), want64, atol, got=got64)
        if float32:
            hint = FLOAT32_HINT  # the formula is right: a float32 computation lost the digits
        shown_want, shown_got = distinct_digits(want, value)
        failure = Feedback(f"{what}: expected {shown_want}, got {shown_got} (difference {abs(value - want):.2g}, "
                       f"tolerance {atol:.2g})." + (f" {hint}" if hint else ""),
                       got=got)
        failure.float32 = float32
        raise failure


def cosine_tolerance(a: np.ndarray, b: np.ndarray, want: float) -> float:
    """How far a correct cosine_similarity may be from a·b / (|a| |b|) on these vectors.

    The contract accepts an epsilon of up to 1e-8 added to the norms. To first order that moves the
    cosine by |cos|·eps·(1/|a| + 1/|b|) (eps on each norm), |cos|·eps/(|a||b|) (on their product) or
    |cos|·eps·(1/2|a|² + 1/2|b|²) (inside the square roots); this allows twice their sum. Measured on
    20,000 inputs drawn as in test_random_vectors (|a|, |b| from 0.003 to 150): the worst error over
    the allowance was 0.49 (eps on each norm), 0.24 (on the product), 0.49 (inside the roots), 0 for
    torch's clamp and 3e-16 for other summation orders. The catalogued mistakes are off by a factor
    |a|, |b| or |a||b| (all far outside).
    """
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return 1e-12 + 2e-8 * abs(want) * (1 / na + 1 / nb + 1 / (na * nb) + 0.5 / na**2 + 0.5 / nb**2)
