"""The first line a student reads is the diagnosis (issue 50): each function's summary line leads with the named
mistake, else float32 rounding, else the failing check's own advice, then the evidence, each cut only at a word."""

from autograder.checks import FLOAT32_HINT
from autograder.grading.feedback_text import function_summary
from autograder.grading.record import TestRecord

EVIDENCE = "the attention output for q (2, 4, 6): values differ from the expected ones (max error 1.47e-08, tolerance 1e-10)."


def _failed(message: str, hint: str = "", mistakes: tuple[str, ...] = ()) -> TestRecord:
    return TestRecord(
        key="public/test_a.py::test_x",
        nodeid="x",
        name="sdpa: x",
        function="scaled_dot_product_attention",
        max_score=1.0,
        visibility="visible",
        kind="wrong",
        message=message + (" " + hint if hint else ""),
        hint=hint,
        diagnosis="named" if mistakes else "",
        mistakes=list(mistakes),
    )


def _line(test: TestRecord, titles: dict[str, str] | None = None) -> str:
    return function_summary([test], titles=titles or {}).splitlines()[1]


def test_a_named_mistake_comes_first_then_the_evidence():
    line = _line(_failed(EVIDENCE, mistakes=("no_scaling",)), {"no_scaling": "scores not divided by sqrt(d_k)"})
    assert "failed; most likely: scores not divided by sqrt(d_k); first failure: the attention output" in line


def test_float32_rounding_is_the_cause_said_first():
    line = _line(_failed(EVIDENCE, hint=FLOAT32_HINT))
    assert "failed; most likely float32 rounding only, not a formula error" in line
    assert line.index("float32") < line.index("first failure: the attention output")
    assert "Your result differs" not in line, "the evidence is the check's own words, without the advice again"


def test_the_checks_own_advice_leads_where_nothing_is_named():
    hint = "Divide the scores by sqrt(d_k), the key dimension. A wrong scale changes every weight."
    line = _line(_failed(EVIDENCE, hint=hint))
    assert "failed; likely cause: Divide the scores by sqrt(d_k), the key dimension; first failure:" in line


def test_a_long_message_is_cut_at_a_word_only():
    line = _line(_failed("word " * 200))
    evidence = line.split("first failure: ", 1)[1]
    assert evidence.endswith("…") and evidence[:-1].split(" ")[-1] == "word"
