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
