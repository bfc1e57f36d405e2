"""Grading through the CLI, as instructors run it: the stub scores 0 with valid results.
(Every assignment's stub, do-nothing and reference gradings are proved by the release self-check,
`make release`; the reference's 100 also in the simulated Gradescope tree.)"""

from conftest import grade, stub_source, write_submission


def test_untouched_stub_scores_0_and_says_what_is_unfinished(tmp_path):
    path = write_submission(tmp_path / "stub", "multihead", stub_source("multihead"))
    document = grade("multihead", path, tmp_path)
    assert document["score"] == 0
    assert document["tests"], "the stub must still get one entry per test"
    assert any("not implemented yet" in t["output"] for t in document["tests"])
    assert abs(sum(t["max_score"] for t in document["tests"]) - 100) < 1e-6
    kinds = [t["extra_data"]["kind"] for t in document["tests"]]
    assert kinds.count("not-implemented") > len(kinds) / 2, kinds
    assert document["extra_data"]["kind"] == "graded"


def test_correct_code_that_prints_the_graders_words_scores_100_and_raises_no_flag(tmp_path):
    """Flags are outcome kinds set where they happen: a debug print that reads like a crash, an exit or an
    attack changes nothing (it was flagged `attack crash` when flags were read from the text)."""
    from conftest import reference_source

    from autograder.cohort.flags import submission_flags

    noisy = reference_source("attention").replace(
        "def softmax(",
        'print("the process was killed; exited with status 1; not run (skipped); '
        "interfered with the grader's channel; (a link)\")\n\n\ndef softmax(",
        1,
    )
    noisy += (
        "\n\n_print_once = print\n\n\ndef causal_mask(n, _original=causal_mask):\n"
        '    _print_once("did not finish within the time limit; the process stopped")\n    return _original(n)\n'
    )
    document = grade("attention", write_submission(tmp_path / "noisy", "attention", noisy), tmp_path)
    assert document["score"] == 100
    assert submission_flags(document) == []
    assert {t["extra_data"]["kind"] for t in document["tests"]} == {"passed"}
