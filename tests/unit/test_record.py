"""The grading record survives its own serialisation: what a results file holds reads back as the same data."""

from __future__ import annotations

from autograder.grading.record import GradingRecord, TestRecord
from autograder.grading.results import failure_document, results_document


def _record(**changes) -> GradingRecord:
    test = TestRecord(key="test_x", nodeid="test_x", name="x", function="f", max_score=2.0, score=0.0, status="failed")
    return GradingRecord(tests=[test], **changes)


def test_links_are_a_count_and_read_back_as_one():
    # grade-all read links back as a list: an upload with a symbolic link crashed the gradebook (TypeError)
    document = results_document(_record(links=3))
    assert document["extra_data"]["links"] == 3
    again = GradingRecord.from_results(document)
    assert again.links == 3 and [t.key for t in again.tests] == ["test_x"]


def test_a_failure_document_keeps_the_links_counted_before_it():
    document = failure_document("too many files", extra={"links": 2}, kind="ungradable")
    assert GradingRecord.from_results(document).links == 2
    assert GradingRecord.from_results(failure_document("x", extra={"links": ["a", "b"]})).links == 2  # one rule: as_count


def test_links_of_an_older_results_file_held_as_a_list_read_as_their_count():
    assert GradingRecord.from_results({"extra_data": {"links": ["a", "b"]}, "tests": []}).links == 2
    assert GradingRecord.from_results({"extra_data": {"links": "x"}, "tests": []}).links == 0


def test_the_functions_a_test_ran_survive_the_results_file():
    from autograder.grading.record import GradingRecord, TestRecord

    t = TestRecord(key="k", nodeid="k", name="causal_mask: x", function="causal_mask", max_score=1, uses=["softmax"])
    document = {"tests": [{"name": t.name, "max_score": 1, "score": 0, "extra_data": GradingRecord.test_extra(t)}]}
    assert GradingRecord.from_results(document).tests[0].uses == ["softmax"]
