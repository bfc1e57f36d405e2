"""Feedback is cut where a reader can stop: a paragraph or a sentence, never a word or a number."""

from autograder.grading.text_limits import cut


def test_short_text_is_kept_whole():
    assert cut("fits.", 100) == "fits."


def test_a_long_text_ends_at_a_sentence_and_says_how_much_is_left_out():
    text = "The scores were not divided by sqrt(d_k). Divide by sqrt(d_k) before the softmax, then fill with -inf. " * 4
    out = cut(text, 200)
    kept = out.split("\n…")[0]
    assert kept.endswith("-inf.") or kept.endswith("sqrt(d_k)."), kept
    left = int(out.rsplit("(", 1)[1].split()[0])
    assert len(kept) + left == len(text.rstrip()) or len(kept) + left == len(text)
    assert len(out) <= 200


def test_no_number_or_word_is_split():
    text = "max error 8.45e-09, tolerance 1e-10, 25 of 25 entries off, the first in row 0 and more words " * 3
    kept = cut(text, 80).split("\n…")[0]
    assert text.startswith(kept) and text[len(kept)] in " \n", kept
