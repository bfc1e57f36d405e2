"""Issue 50: the summary by function says where a failure comes from without going in a circle, and names a
function that is not written yet or missing instead of calling its written callers unwritten."""

from autograder.grading.feedback_text import function_summary
from autograder.grading.record import GradingRecord, TestRecord
from autograder.grading.seam_messages import stopped_in


def _test(function, what, passed=False, uses=(), kind=None, unwritten=""):
    return TestRecord(
        key=f"hidden/test.py::{function}_{what}",
        nodeid=f"{function}_{what}",
        name=f"{function}: {what}",
        function=function,
        max_score=2,
        score=2 if passed else 0,
        status="passed" if passed else "failed",
        visibility="visible",
        message=f"{what} failed",
        kind=kind or ("passed" if passed else "wrong"),
        uses=list(uses),
        unwritten=unwritten,
    )


def _line(text: str, function: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"- {function}:"))


def test_fix_first_names_a_function_whose_own_tests_fail_and_never_goes_in_a_circle():
    # decoding's case: forward's tests run the cache; one of KVCache's tests runs forward, another fails alone
    tests = [
        _test("forward", "cached steps equal recomputation", uses=["KVCache"]),
        _test("KVCache", "update appends"),
        _test("KVCache", "after each forward step the cache holds every position", uses=["forward"]),
    ]
    text = function_summary(tests)
    assert "fix it first" in _line(text, "forward") and "`KVCache`" in _line(text, "forward")
    assert "fix " not in _line(text, "KVCache"), text  # forward's failures all run KVCache: not forward's own
    # each fails a test of its own that does not run the other: neither comes first
    both = [*tests, _test("forward", "logits without a cache")]
    text = function_summary(both)
    assert "fix " not in _line(text, "forward") and "fix " not in _line(text, "KVCache"), text
    # three functions in a ring, each failing alone too: no line sends the student round it
    ring = [
        _test("a", "x", uses=["b"]),
        _test("a", "alone"),
        _test("b", "x", uses=["c"]),
        _test("b", "alone"),
        _test("c", "x", uses=["a"]),
        _test("c", "alone"),
    ]
    text = function_summary(ring)
    assert all("fix " not in _line(text, f) for f in "abc"), text


def test_a_function_is_told_to_fix_another_first_only_when_that_ones_own_tests_fail():
    tests = [
        _test("generate", "greedy tokens", uses=["forward"]),
        _test("forward", "through generate only", uses=["generate"]),
        _test("forward", "logits", passed=True),
    ]
    text = function_summary(tests)  # forward fails only where generate runs too: no evidence forward is wrong
    assert "fix " not in _line(text, "generate"), text


def test_a_missing_function_is_named_as_missing_and_its_written_callers_are_not_called_unwritten():
    missing = [
        _test("TinyCausalLM", "logits", kind="raised", unwritten="sinusoidal_positions"),
        _test("lm_loss", "shifted targets", uses=["TinyCausalLM"], kind="raised", unwritten="sinusoidal_positions"),
        _test("TransformerBlock", "matches torch", passed=True),
    ]
    text = function_summary(missing)
    assert _line(text, "sinusoidal_positions").startswith("- sinusoidal_positions: missing: your file does not define it")
    assert "`TinyCausalLM`, `lm_loss`" in _line(text, "sinusoidal_positions")
    assert "which your file does not define" in _line(text, "lm_loss")
    assert "fix it first" not in _line(text, "lm_loss"), text  # TinyCausalLM is not the cause: the missing name is
    unwritten = [
        _test("TinyCausalLM", "logits", kind="not-implemented", unwritten="sinusoidal_positions"),
        _test("lm_loss", "shifted targets", uses=["TinyCausalLM"], kind="not-implemented", unwritten="sinusoidal_positions"),
    ]
    text = function_summary(unwritten)
    assert "- TinyCausalLM: not implemented yet" not in text and "- lm_loss: not implemented yet" not in text, text
    assert "its tests stop in your `sinusoidal_positions`, not implemented yet" in _line(text, "TinyCausalLM")
    assert _line(text, "sinusoidal_positions").startswith("- sinusoidal_positions: not implemented yet")
    # the function's own NotImplementedError: still "not implemented yet"
    stub = [_test("softmax", "rows sum to 1", kind="not-implemented", unwritten="softmax")]
    assert "- softmax: not implemented yet" in function_summary(stub)


def test_where_a_failure_stopped_is_read_from_the_error_and_kept_in_the_results():
    name_error = {"type": "NameError", "message": "name 'sinusoidal_positions' is not defined", "where": []}
    not_written = {
        "type": "NotImplementedError",
        "message": "sinusoidal_positions is not implemented yet",
        "where": [
            "line 148, in __init__: self.positions = sinusoidal_positions(64, 32)",
            "line 44, in sinusoidal_positions: raise",
        ],
    }
    assert stopped_in(name_error) == "sinusoidal_positions" and stopped_in(not_written) == "sinusoidal_positions"
    assert stopped_in({"type": "ValueError", "message": "name 'x' is not defined"}) == ""
    record = GradingRecord(tests=[_test("TinyCausalLM", "logits", kind="raised", unwritten="sinusoidal_positions")])
    document = {
        "tests": [
            {"name": t.name, "score": t.score, "max_score": t.max_score, "extra_data": record.test_extra(t)} for t in record.tests
        ]
    }
    assert GradingRecord.from_results(document).tests[0].unwritten == "sinusoidal_positions"
