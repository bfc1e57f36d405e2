"""Hidden tests for cooccurrence: exact counts on the course's corpus, random corpora and edge cases."""

import numpy as np
import pytest
from support_embeddings import random_corpus, rng_for, shuffled_vocab

from autograder.checks import expect_close

pytestmark = pytest.mark.grades("cooccurrence")  # the function these tests grade (summary, dashboard, pytest -m)

HINT = (
    "For the word at position i, count the words at positions j with 0 < |i - j| <= window (both sides, "
    "never i itself), and only inside the same sentence; C[w, c] uses the row/column order of vocab."
)


def _check(student, reference, corpus, vocab, window, what):
    got = student.cooccurrence(corpus, vocab, window)
    want = reference.cooccurrence(corpus, vocab, window)
    # exact: counts are small integers, and sums of them are exact in floating point
    expect_close(got, want, what, atol=0.0, hint=HINT)


def test_course_counts(student, reference):
    """cooccurrence: the course's corpus, window 6"""
    corpus = reference.course_corpus()
    vocab = reference.build_vocab(corpus)
    _check(student, reference, corpus, vocab, 6,
           "cooccurrence(course_corpus(), build_vocab(...), 6) (200 sentences, 36 words)")


@pytest.mark.parametrize("window", [1, 2, 3, 5, 50])
def test_random_corpora(student, reference, seed, window):
    """cooccurrence: random sentences with repeated words, shuffled vocab"""
    rng = rng_for(seed, window)
    corpus = random_corpus(rng)
    vocab = shuffled_vocab(rng, corpus)
    lengths = [len(s) for s in corpus]
    _check(student, reference, corpus, vocab, window,
           f"cooccurrence on 12 random sentences of lengths {lengths}, vocab {vocab} (not sorted, "
           f"one unused word), window {window}")


EDGE_CASES = {
    # beside a two-word sentence, so that an all-zero answer is not right by accident
    "one-word sentences": ([["tea"], ["ink", "owl"], ["tea"]], ["ink", "owl", "tea"], 3),
    "window longer than the sentence": ([["tea", "ink", "owl"]], ["ink", "owl", "tea"], 10),
    "a word repeated (window 1)": ([["tea", "tea", "tea"]], ["tea"], 1),
    "a word repeated (window 2)": ([["tea", "tea", "tea", "ink"]], ["ink", "tea"], 2),
}


@pytest.mark.parametrize("name", list(EDGE_CASES))
def test_edge_cases(student, reference, name):
    """cooccurrence: short sentences, long windows and repeated words"""
    corpus, vocab, window = EDGE_CASES[name]
    _check(student, reference, corpus, vocab, window,
           f"{name}: cooccurrence({corpus}, {vocab}, window={window})")


def test_sentence_boundaries(student, reference):
    """cooccurrence: never counts across sentence boundaries"""
    corpus = [["tea", "ink"], ["owl", "sun"], ["map"]]
    vocab = ["ink", "map", "owl", "sun", "tea"]
    got = student.cooccurrence(corpus, vocab, 4)
    want = reference.cooccurrence(corpus, vocab, 4)
    # exact: integer counts
    expect_close(
        got, want, f"cooccurrence({corpus}, {vocab}, 4)", atol=0.0,
        hint="Each sentence is counted on its own: the last word of one sentence is not a neighbour of the "
        "first word of the next (here only tea-ink and owl-sun co-occur).",
    )
    want_total = 4.0
    total = float(np.asarray(got, dtype=float).sum())
    expect_close(total, want_total, f"the sum of all counts of cooccurrence({corpus}, {vocab}, 4)", atol=0.0,
                 hint="Two 2-word sentences give 2 ordered pairs each; the 1-word sentence gives none.")
