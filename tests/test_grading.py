"""Grading through the CLI, as instructors run it: reference 100, stub 0, valid results."""

from conftest import grade, reference_source, stub_source, write_submission


def test_reference_scores_100(assignment_name, tmp_path):
    path = write_submission(tmp_path / "ref", assignment_name, reference_source(assignment_name))
    document = grade(assignment_name, path, tmp_path)
    failed = [(t["name"], t["output"][:300]) for t in document["tests"] if t["status"] != "passed"]
    assert document["score"] == 100, failed


def test_untouched_stub_scores_0_and_says_what_is_unfinished(assignment_name, tmp_path):
    path = write_submission(tmp_path / "stub", assignment_name, stub_source(assignment_name))
    document = grade(assignment_name, path, tmp_path)
    assert document["score"] == 0
    assert document["tests"], "the stub must still get one entry per test"
    assert any("not implemented yet" in t["output"] for t in document["tests"])
    assert sum(t["max_score"] for t in document["tests"]) == 100
