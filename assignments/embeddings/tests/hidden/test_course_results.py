"""Hidden tests: the course's measured results, through the student's whole pipeline.

corpus -> cooccurrence(window 6) -> ppmi -> svd_embeddings(k=8); the course printed king~prince 1.0,
king~queen 0.997 and, with the stop words skipped, "bank" nearest to river (0.55) and money (0.39).
Near-ties (king/prince, queen/princess) are never compared by order.
"""


import pytest
from support_embeddings import ROYAL_WORDS, as_array, as_words, expect_number

from autograder.checks import expect_close, expect_true


def _student_embeddings(student):
    corpus = student.course_corpus()
    vocab = list(student.build_vocab(corpus))
    C = student.cooccurrence(corpus, vocab, 6)
    P = student.ppmi(C)
    E = as_array(student.svd_embeddings(P, 8))
    return vocab, E


PIPELINE = "your pipeline cooccurrence(window=6) -> ppmi -> svd_embeddings(k=8) on the course's corpus"


@pytest.mark.grades("svd_embeddings")
def test_course_similarities(student):
    """svd_embeddings: the course's king~prince 1.0 and king~queen 0.997"""
    vocab, E = _student_embeddings(student)
    idx = {w: i for i, w in enumerate(vocab)}
    king_prince = float(E[idx["king"]] @ E[idx["prince"]])
    king_queen = float(E[idx["king"]] @ E[idx["queen"]])
    # 1e-6: king and prince have identical contexts, so their vectors coincide up to rounding
    expect_number(king_prince, 1.0, f"cosine(king, prince) from {PIPELINE}", atol=1e-6,
                 hint="king and prince appear in identical sentences, so every step should give them identical rows.")
    # 2e-3: the course printed 0.997 (0.9967 to four digits)
    expect_number(king_queen, 0.9967, f"cosine(king, queen) from {PIPELINE}", atol=2e-3,
                 hint="The shared royal context dominates and gender is a small direction, so the course measured "
                 "0.997. Check each step: counts on both sides without the word itself, natural-log PPMI clipped "
                 "at 0, the top-8 singular directions scaled by sqrt(S), unit rows.")


@pytest.mark.grades("nearest")
def test_bank_neighbours(student):
    """nearest: 'bank' is nearest to river and money, and far from every royal word"""
    vocab, E = _student_embeddings(student)
    idx = {w: i for i, w in enumerate(vocab)}
    stop = tuple(student.COURSE_STOP_WORDS)
    bank = E[idx["bank"]]
    got = student.nearest(E, vocab, bank, 2, exclude=stop + ("bank",))
    words = as_words(got) or []
    expect_true(sorted(words) == ["money", "river"],
                f"nearest(E, vocab, E['bank'], 2, exclude=COURSE_STOP_WORDS + ('bank',)) with E from {PIPELINE}: "
                f"expected river and money, got {words if words else got}. One vector for 'bank' mixes its two "
                "senses, so its nearest words come from both sentences.", got=got)
    sims = {w: float(E[idx[w]] @ bank) for w in ("river", "money") + ROYAL_WORDS}
    # 0.01: the course printed 0.55 and 0.39 (0.5454 and 0.3905)
    expect_close([sims["river"], sims["money"]], [0.5454, 0.3905],
                 f"cosine(bank, river) and cosine(bank, money) from {PIPELINE}", atol=0.01,
                 hint="The course measured about 0.55 and 0.39.")
    above = {w: round(s, 3) for w, s in sims.items() if w in ROYAL_WORDS and s >= 0}
    expect_true(not above, f"cosine(bank, royal word) from {PIPELINE}: every royal word should be below 0 (the course "
                f"measured about -0.02 to -0.04), but {above} are not.")
