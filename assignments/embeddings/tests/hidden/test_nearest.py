"""Hidden tests for nearest: cosine ranking, most similar first, exclude and n."""

import numpy as np
import pytest
from support_embeddings import as_words, cosines, random_embeddings, ranking_is_clear, rng_for

from autograder.checks import expect_true

pytestmark = pytest.mark.grades("nearest")  # the function these tests grade (summary, dashboard, pytest -m)

VOCAB = ["w%02d" % i for i in range(14)]


def _draw(seed, salt, n_top):
    """Random E with rows of very different lengths and a query with a clear ranking of its n_top best."""
    rng = rng_for(seed, salt)
    for _ in range(500):
        E = random_embeddings(rng, len(VOCAB), 5)
        v = rng.standard_normal(5) * 3.0
        if ranking_is_clear(E, v, n_top):
            return E, v
    raise RuntimeError("could not draw a query without near-ties")


def _expect_words(got, want, what, hint):
    words = as_words(got)
    expect_true(words is not None, f"{what}: expected a list of words (strings), got {type(got).__name__}"
                f"{'' if not isinstance(got, (list, tuple)) else ' of ' + ', '.join(sorted({type(w).__name__ for w in got}))}.",
                got=got)
    expect_true(words == want, f"{what}: expected {want}, got {words}. {hint}", got=got)


@pytest.mark.parametrize("exclude", [0, 2], ids=["no exclude", "exclude 2 words"])
def test_matches_reference(student, reference, seed, exclude):
    """nearest: the most cosine-similar words, most similar first"""
    E, v = _draw(seed, exclude, 5 + exclude)
    order = [VOCAB[i] for i in np.argsort(-cosines(E, v))]
    skip = tuple(order[:exclude][::-1])
    want = reference.nearest(E, VOCAB, v, 4, exclude=skip)
    got = student.nearest(E, VOCAB, v, 4, exclude=skip)
    _expect_words(got, want, f"nearest(E, vocab, v, 4, exclude={skip}) with E of shape {E.shape}, rows of "
                  "lengths between 0.1 and 10",
                  "Rank by cosine similarity (divide E @ v by the row lengths and |v|), highest first, skipping "
                  "excluded words.")


def test_exclude(student, reference, seed):
    """nearest: excluded words never appear, and the next words take their place"""
    E, v = _draw(seed, 7, 6)
    order = [VOCAB[i] for i in np.argsort(-cosines(E, v))]
    skip = (order[0], order[2])
    want = reference.nearest(E, VOCAB, v, 3, exclude=skip)
    got = student.nearest(E, VOCAB, v, 3, exclude=skip)
    words = as_words(got) or []
    expect_true(not set(words) & set(skip),
                f"nearest(E, vocab, v, 3, exclude={skip}): your answer {words} contains excluded words. "
                "Skip every word in exclude (the query words in an analogy, stop words...).", got=got)
    _expect_words(got, want, f"nearest(E, vocab, v, 3, exclude={skip}) with E of shape {E.shape}",
                  "The excluded words are skipped and the next most similar words fill the list.")


@pytest.mark.parametrize("n", [1, 3, 12])
def test_n_respected(student, seed, n):
    """nearest: returns exactly n words"""
    E, v = _draw(seed, 20 + n, 3)
    order = [VOCAB[i] for i in np.argsort(-cosines(E, v))]
    if order[2] == next(w for w in VOCAB if w not in order[:2]):  # vocabulary order would be right by luck
        v = -v
        order = [VOCAB[i] for i in np.argsort(-cosines(E, v))]
    skip = (order[1], order[0])
    got = student.nearest(E, VOCAB, v, n, exclude=skip)
    words = as_words(got)
    count = len(got) if isinstance(got, (list, tuple)) else None
    expect_true(words is not None and count == n,
                f"nearest(E, vocab, v, {n}, exclude={skip}) with {len(VOCAB)} words: expected a list of {n} words, "
                f"got {count if count is not None else type(got).__name__}{' words' if count is not None else ''}. "
                "Remove the excluded words BEFORE keeping the first n, so the list still has n words.", got=got)
    expect_true(words[0] == order[2],
                f"nearest(E, vocab, v, {n}, exclude={skip}): the first word is {words[0]!r}, but the most "
                f"cosine-similar word that is not excluded is {order[2]!r}. Rank by cosine, most similar first.",
                got=got)


def test_most_similar_first(student, seed):
    """nearest: a word's own vector finds the word itself first"""
    E, _ = _draw(seed, 30, 1)
    rng = rng_for(seed, 31)
    i = int(rng.integers(0, len(VOCAB)))
    v = E[i] * 2.5
    got = student.nearest(E, VOCAB, v, 3)
    words = as_words(got) or []
    sims = cosines(E, v)
    expect_true(bool(words) and words[0] == VOCAB[i],
                f"nearest(E, vocab, 2.5 * E[{i}], 3): the most similar word to {VOCAB[i]}'s own vector is "
                f"{VOCAB[i]} (cosine 1), but your list starts with {words[0] if words else 'nothing'}"
                f"{' (cosine %.3f)' % sims[VOCAB.index(words[0])] if words and words[0] in VOCAB else ''}. "
                "Sort from the most similar to the least (np.argsort(-sims)).", got=got)


def test_cosine_not_dot(student):
    """nearest: ranks by cosine, not by dot product"""
    E = np.array([[10.0, 10.0], [1.0, 0.0], [0.0, -3.0], [0.8, 0.1]])
    vocab = ["long", "aligned", "opposite", "close"]
    v = np.array([1.0, 0.0])
    got = student.nearest(E, vocab, v, 2)
    _expect_words(got, ["aligned", "close"],
                  "nearest(E, vocab, [1, 0], 2) with E rows long=[10, 10], aligned=[1, 0], opposite=[0, -3], "
                  "close=[0.8, 0.1]",
                  "'long' has the largest dot product (10) but its angle is 45 degrees (cosine 0.71); cosine "
                  "similarity divides by the row lengths, so 'aligned' (1.0) and 'close' (0.99) come first.")
