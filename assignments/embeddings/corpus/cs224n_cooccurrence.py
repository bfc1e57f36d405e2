"""CS224N assignment 1's compute_co_occurrence_matrix: a word-to-index dict, then for every word of every document a window range(max(0, i - w), min(len(doc), i + w + 1)) skipping its own position

Source: the Stanford CS224N "Exploring Word Vectors" assignment (a1/exploring_word_vectors.ipynb,
function ``compute_co_occurrence_matrix``), as found in many public solution repositories, e.g.
astergu/AI-Catchup, ML-Courses/Stanford/CS224N_NLP_with_Deep_Learning/assignments/Lecture1/README.md
(no licence stated). Written after its formulation, not copied (the search tools' terms keep
public code out of this repository's commits): ``word2ind`` from the word list, a zero (V, V)
matrix, and for each document, each centre index i, each j in the clipped window with j != i,
``M[word2ind[centre], word2ind[doc[j]]] += 1``.
Changes for the contract: the vocabulary is the caller's ``vocab`` (the assignment's
``distinct_words`` is the reference's ``build_vocab``), not recomputed; the window is the
contract's ``window`` argument (the assignment's default is 4); the matrix is float (the
assignment leaves the dtype to numpy's zeros, float too); the assignment's <START>/<END> tokens
are not added (sentences are given as they are). Only cooccurrence is redefined; everything else
comes from the reference.
"""
BUG = ("if i != j:", "if True:")  # counts each word as its own neighbour
BUG_NAMES = ["cooc_own_position"]


def cooccurrence(corpus, vocab, window):
    word2ind = {word: i for i, word in enumerate(vocab)}
    M = np.zeros((len(vocab), len(vocab)))  # noqa: F821
    for doc in corpus:
        for i, centre in enumerate(doc):
            for j in range(max(0, i - window), min(len(doc), i + window + 1)):
                if i != j:
                    M[word2ind[centre], word2ind[doc[j]]] += 1
    return M
