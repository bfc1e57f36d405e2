"""Hidden tests for analogy: b - a + c, the query words excluded, and the course's king - man + woman."""

import numpy as np
import pytest
from support_embeddings import as_words, cosines, course_pipeline, random_embeddings, ranking_is_clear, rng_for

from autograder.checks import expect_true

pytestmark = pytest.mark.grades("analogy")  # the function these tests grade (summary, dashboard, pytest -m)

VOCAB = ["w%02d" % i for i in range(15)]
HINT = ("'a is to b as c is to ?' asks for the words nearest to E[b] - E[a] + E[c] (king - man + woman for "
        "a=man, b=king, c=woman), skipping a, b and c themselves.")


def _draw(seed, salt, n, unit_rows=False):
    """Random E and distinct a, b, c whose target has a clear ranking, and where a, b or c would
    rank among the top n if they were not excluded (so forgetting to exclude them shows).
    With unit_rows every row has length 1, so a ranking by dot product is the ranking by cosine."""
    rng = rng_for(seed, salt)
    for _ in range(500):
        E = random_embeddings(rng, len(VOCAB), 6)
        if unit_rows:
            E = E / np.linalg.norm(E, axis=1, keepdims=True)
        a, b, c = (int(i) for i in rng.choice(len(VOCAB), size=3, replace=False))
        target = E[b] - E[a] + E[c]
        if not ranking_is_clear(E, target, n + 3):
            continue
        top = np.argsort(-cosines(E, target))[:n]
        if {a, b, c} & set(top.tolist()):
            return E, VOCAB[a], VOCAB[b], VOCAB[c]
    raise RuntimeError("could not draw an analogy without near-ties")


@pytest.mark.parametrize("n", [1, 3])
def test_matches_reference(student, reference, seed, n):
    """analogy: the words nearest to E[b] - E[a] + E[c]"""
    E, a, b, c = _draw(seed, n, n)
    want = reference.analogy(E, VOCAB, a, b, c, n=n)
    got = student.analogy(E, VOCAB, a, b, c, n=n)
    words = as_words(got)
    expect_true(words == want, f"analogy(E, vocab, a={a!r}, b={b!r}, c={c!r}, n={n}) with random E of shape "
                f"{E.shape}: expected {want}, got {words if words is not None else got}. " + HINT, got=got)


def test_excludes_inputs(student, seed):
    """analogy: never answers with a, b or c"""
    # unit rows: this test grades the exclusion, so a ranking mistake (dot product for cosine) that the
    # tests above charge is not charged again here; a fixed answer that avoids a, b and c still fails
    E, a, b, c = _draw(seed, 11, 3, unit_rows=True)
    got = student.analogy(E, VOCAB, a, b, c, n=3)
    words = as_words(got) or []
    expect_true(len(words) == 3 and not {a, b, c} & set(words),
                f"analogy(E, vocab, {a!r}, {b!r}, {c!r}, n=3): expected 3 words, none of them {a!r}, {b!r} or {c!r}; "
                f"got {words if words else got}. The target E[b] - E[a] + E[c] is usually closest to b or c "
                "itself, so they must be excluded (nearest(..., exclude=(a, b, c))).", got=got)
    index = {w: i for i, w in enumerate(VOCAB)}
    sims = cosines(E, E[index[b]] - E[index[a]] + E[index[c]])
    best = next(VOCAB[i] for i in np.argsort(-sims) if VOCAB[i] not in (a, b, c))
    expect_true(words[0] == best,
                f"analogy(E, vocab, {a!r}, {b!r}, {c!r}, n=3): the first answer is {words[0]!r}, but the word "
                f"closest to E[b] - E[a] + E[c] by cosine similarity, as nearest ranks (a, b, c excluded), is {best!r}.",
                got=got)


def test_course_analogy(student, reference):
    """analogy: king - man + woman is queen and princess on the course's corpus"""
    _, vocab, _, _, E = course_pipeline(reference)
    got = student.analogy(E, vocab, "man", "king", "woman", n=2)
    words = as_words(got) or []
    # queen and princess have (almost) identical contexts: their order is a near-tie, so compare as a set
    expect_true(sorted(words) == ["princess", "queen"],
                f"analogy(E, vocab, 'man', 'king', 'woman', n=2) with the course's 8-dimensional embeddings (from the "
                f"reference pipeline): expected queen and princess (in either order), got {words if words else got}. "
                + HINT, got=got)
