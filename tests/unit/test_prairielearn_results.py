"""The PrairieLearn renderer: a grading's record in PrairieLearn's results schema (no grading)."""

import json

from autograder.grading.record import GradingRecord, NamedMistake, TestRecord
from autograder.platforms.prairielearn_results import (
    HELD_BACK,
    PL_MAX_BYTES,
    cut_at_sentence,
    prairielearn_document,
    write_prairielearn_results,
)


def failure_document(problem, kind="grader-error"):
    return GradingRecord(kind=kind, problem=problem)


def _test(name, score, max_score, visibility="visible", output="", key="public/test_a.py::test_a"):
    status = "passed" if score == max_score else "failed"
    function = name.split(":")[0]
    return TestRecord(
        key, key, name, function, max_score, score, status, visibility, "passed" if status == "passed" else "wrong", output
    )


def _graded(tests, kind="graded", load_error=""):
    return GradingRecord(kind=kind, tests=tests, load_error=load_error)


def assert_schema(doc: dict) -> None:
    """PrairieLearn's results.json as pl-external-grader-results reads it."""
    assert isinstance(doc["gradable"], bool) and isinstance(doc["message"], str) and isinstance(doc["output"], str)
    assert isinstance(doc["score"], float) and 0.0 <= doc["score"] <= 1.0
    for test in doc["tests"]:
        assert set(test) == {"name", "description", "points", "max_points", "message", "output"}
        assert all(isinstance(test[k], str) for k in ("name", "description", "message", "output"))
        assert 0 <= test["points"] <= test["max_points"]
    if not doc["gradable"]:
        assert doc["format_errors"] and all(isinstance(e, str) for e in doc["format_errors"])


def test_a_graded_document_keeps_the_points_names_and_words():
    tests = [
        _test("f: public", 20, 20),
        _test("f: wrong", 0, 20, output="the values differ. Likely mistake: No scaling."),
        _test("g: hidden ok", 40, 40, "after_published", key="hidden/test_g.py::test_g"),
        _test("g: hidden bad", 0, 20, "after_published", output="secret expected values", key="hidden/test_g.py::test_h"),
    ]
    doc = prairielearn_document(_graded(tests))
    assert_schema(doc)
    assert doc["gradable"] is True and doc["score"] == 0.6
    assert [(t["name"], t["points"], t["max_points"]) for t in doc["tests"]] == [(t.name, t.score, t.max_score) for t in tests]
    assert doc["message"] == "60.00 / 100 points."
    assert "once grades are published" not in doc["output"], "PrairieLearn never publishes hidden feedback"
    assert doc["tests"][1]["output"] == tests[1].message and doc["tests"][1]["message"] == "Failed."
    assert doc["tests"][2]["output"] == "" and doc["tests"][3]["output"] == HELD_BACK
    assert "secret" not in json.dumps(doc)
    assert doc["tests"][3]["description"] == "hidden test (hidden/test_g.py::test_h)"


def test_the_score_is_a_fraction_within_0_and_1():
    assert prairielearn_document(_graded([_test("f", 100, 100)]))["score"] == 1.0
    assert prairielearn_document(_graded([_test("f", 130, 130)]))["score"] == 1.0
    assert prairielearn_document(_graded([_test("f", 0, 100)]))["score"] == 0.0
    assert prairielearn_document(_graded([_test("f", 12.5, 50)]))["score"] == 0.125


def test_an_upload_that_cannot_be_graded_costs_no_attempt():
    doc = prairielearn_document(failure_document("Score 0: the upload is empty: submit your attention.py.", kind="ungradable"))
    assert_schema(doc)
    assert doc["gradable"] is False and doc["tests"] == []
    assert doc["format_errors"][0].startswith("The upload is empty: submit your attention.py.")
    assert "does not use up an attempt" in doc["format_errors"][0]


def test_a_syntax_error_is_not_gradable_but_another_import_error_is_graded():
    document = _graded(
        [_test("f", 0, 100, output="could not run")],
        kind="import-error",
        load_error="attention.py could not be imported: SyntaxError",
    )
    syntax = prairielearn_document(document, syntax_error=True)
    assert syntax["gradable"] is False and syntax["format_errors"][0].startswith(
        "attention.py could not be imported"
    )  # the file name as uploaded
    other = prairielearn_document(document, syntax_error=False)
    assert other["gradable"] is True and other["score"] == 0.0 and len(other["tests"]) == 1


def test_a_grader_failure_or_an_unfinished_grading_is_not_the_students_attempt():
    for kind in ("grader-error", "unfinished"):
        doc = prairielearn_document(failure_document("The grader hit an internal error.", kind=kind))
        assert_schema(doc)
        assert doc["gradable"] is False and "internal error" in doc["format_errors"][0]


def test_outputs_are_cut_at_a_sentence_end():
    text = "First sentence here. " * 50
    cut = cut_at_sentence(text, 300)
    assert len(cut) <= 300 and "more characters not shown" in cut
    assert cut.split("\n[...")[0].endswith("here.")
    assert cut_at_sentence("short.", 300) == "short."


def test_the_results_file_stays_under_1_mb_whatever_the_outputs(tmp_path):
    sentence = "It differs, é. "
    tests = [_test(f"f: case {i}", 0, 1, output=sentence * 200) for i in range(3000)]
    document = _graded(tests, kind="graded")
    document.notes = [sentence * 2000]
    path = tmp_path / "results" / "results.json"
    write_prairielearn_results(path, prairielearn_document(document))
    assert path.stat().st_size < PL_MAX_BYTES
    written = json.loads(path.read_text())
    assert_schema(written)
    kept = [t for t in written["tests"] if t["output"]]
    assert kept and all(t["output"].split("\n[...")[0].endswith(".") for t in kept)


def test_a_failed_test_names_the_catalogued_mistake_as_the_catalogue_titles_it():
    public = _test("f: worked example", 0, 20, output="values differ")
    hidden = _test("f: hidden", 0, 80, "after_published", key="hidden/test_f.py::test_f")
    for test in (public, hidden):
        test.mistakes, test.diagnosis = ["no_scaling"], "named"
    record = _graded([public, hidden])
    record.named = {"no_scaling": NamedMistake("No scaling: scores are q·k, not q·k / sqrt(d_k).", "Divide by sqrt(d_k).")}
    doc = prairielearn_document(record)
    assert doc["tests"][0]["message"] == "Failed. Likely mistake: No scaling: scores are q·k, not q·k / sqrt(d_k)."
    assert doc["tests"][1]["message"] == "Failed.", "hidden tests name causes only with hidden_summary = causes"
