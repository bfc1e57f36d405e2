"""Assignment `embeddings`: word vectors from counting, with nothing hidden.

"You shall know a word by the company it keeps." You build static word
embeddings the classical way, in NumPy:

    corpus --cooccurrence--> counts C --ppmi--> PPMI --svd_embeddings--> E (V, k)

and then use them: cosine similarity, nearest words, and the analogy
king - man + woman ~ queen.

Conventions used throughout:

* ``vocab`` is a list of distinct words; row/column ``i`` of every (V, ...)
  matrix belongs to ``vocab[i]``. ``build_vocab`` gives the sorted vocabulary.
* A corpus is a list of sentences, each a list of words (strings).
* Arrays are NumPy float arrays (float64 is best); scalars are Python floats.

The code outside the TODOs (the course's templated corpus, ``build_vocab``,
``word_index`` and ``COURSE_STOP_WORDS``) is provided: use it as is.
"""

import numpy as np

# --- Provided: the course's templated corpus ----------------------------------------

#: The six templates of the Week 9 notebook; ``{}`` is filled with each listed word.
COURSE_TEMPLATES = [
    ("the {} wore a crown and he ruled the kingdom", ["king", "prince"]),
    ("the {} wore a crown and she ruled the kingdom", ["queen", "princess"]),
    ("the {} went to the market and he sold bread", ["man", "boy"]),
    ("the {} went to the market and she sold bread", ["woman", "girl"]),
    ("we sat on the {} of the river near the water", ["bank"]),
    ("she kept her money at the {} to get a loan", ["bank"]),
]

#: The course's stop words. They stay IN the corpus (their counts shape the
#: vectors); they are only skipped when listing a word's neighbours, e.g.
#: ``nearest(E, vocab, v, 2, exclude=COURSE_STOP_WORDS + ("bank",))``.
COURSE_STOP_WORDS = ("the", "a", "of", "at", "to", "on", "we", "she", "he", "and",
                     "her", "near", "get", "kept", "sat", "went")

#: The course's settings: counts within 6 words either side, 8 dimensions.
COURSE_WINDOW = 6
COURSE_DIM = 8


def course_corpus(copies=20):
    """The course's corpus: every template filled with each of its words, ``copies`` times.

    Returns a list of 200 tokenised sentences (lists of words) for copies=20.
    Stop words are kept in the sentences (see ``COURSE_STOP_WORDS``).
    """
    return [template.format(word).split()
            for template, words in COURSE_TEMPLATES
            for word in words
            for _ in range(copies)]


def build_vocab(corpus):
    """The sorted list of the distinct words of ``corpus`` (36 words for the course's corpus)."""
    return sorted({word for sentence in corpus for word in sentence})


def word_index(vocab):
    """Map each word to its row: ``{word: i}``."""
    return {word: i for i, word in enumerate(vocab)}


# --- Your work -----------------------------------------------------------------


def one_hot(indices, vocab_size):
    """One-hot rows: a float array (n, vocab_size) with a single 1 per row.

    indices: a sequence of n >= 1 ints in [0, vocab_size); row r has its 1 in
    column ``indices[r]``. Every pair of distinct one-hot vectors is orthogonal,
    and ``one_hot(ids, V) @ W`` equals the lookup ``W[ids]`` (an embedding layer).
    """
    # TODO(one_hot): replace this line with your implementation.
    raise NotImplementedError("one_hot is not implemented yet")


def cooccurrence(corpus, vocab, window):
    """Co-occurrence counts: a float array (V, V) in ``vocab`` order.

    ``C[w, c]`` is the number of times word c appears within ``window``
    positions either side of an occurrence of word w in the SAME sentence,
    never counting w's own position (a word repeated inside the window does
    count: positions differ). For a word at position i the neighbours are the
    positions j with 0 < |i - j| <= window inside the sentence; a window larger
    than the sentence simply reaches its ends.
    """
    # TODO(cooccurrence): replace this line with your implementation.
    raise NotImplementedError("cooccurrence is not implemented yet")


def ppmi(C):
    """Positive pointwise mutual information of a count matrix C (V, V) -> (V, V).

    With ``total = C.sum()``, ``P(w, c) = C[w, c] / total``, ``P(w)`` the row
    sums / total and ``P(c)`` the column sums / total:

        PPMI[w, c] = max(ln(P(w, c) / (P(w) P(c))), 0)      (natural log)

    and PPMI[w, c] = 0 wherever C[w, c] = 0 (including empty rows, and an
    all-zero C). The result is never NaN or inf and no warning is raised.
    """
    # TODO(ppmi): replace this line with your implementation.
    raise NotImplementedError("ppmi is not implemented yet")


def svd_embeddings(M, k):
    """k-dimensional word vectors from a matrix M (V, D), one unit-length row per word -> (V, k).

    With the SVD ``M = U S Vᵀ`` (singular values in decreasing order), the
    embedding is the first k columns of U, each scaled by the square root of
    its singular value, ``U[:, :k] * sqrt(S[:k])``; then every row is divided
    by its length. (The signs of U's columns are arbitrary; the grader compares
    ``E @ E.T``, which does not depend on them.)
    """
    # TODO(svd_embeddings): replace this line with your implementation.
    raise NotImplementedError("svd_embeddings is not implemented yet")


def cosine_similarity(a, b):
    """Cosine of the angle between two 1-D vectors: ``a·b / (|a| |b|)``, a Python float."""
    # TODO(cosine_similarity): replace this line with your implementation.
    raise NotImplementedError("cosine_similarity is not implemented yet")


def nearest(E, vocab, vector, n, exclude=()):
    """The n words whose rows of E are most cosine-similar to ``vector``, most similar first.

    E: (V, d), rows in ``vocab`` order, not necessarily unit length.
    vector: (d,). exclude: words that must not appear in the answer (e.g. the
    query word itself, or stop words). Returns a list of n words (strings);
    excluded words are skipped, so the list still has n words.
    """
    # TODO(nearest): replace this line with your implementation.
    raise NotImplementedError("nearest is not implemented yet")


def analogy(E, vocab, a, b, c, n=1):
    """The analogy "a is to b as c is to ?": the n words nearest to ``E[b] - E[a] + E[c]``, excluding a, b, c.

    E.g. ``analogy(E, vocab, "man", "king", "woman")`` asks for king - man + woman.
    Returns a list of n words, most similar first (see ``nearest``).
    """
    # TODO(analogy): replace this line with your implementation.
    raise NotImplementedError("analogy is not implemented yet")
