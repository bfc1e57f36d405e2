"""What a student reads first: the summary by function, collapsed repeats, bounded outputs."""

from autograder.grading.feedback_text import (
    ALTERNATIVES,
    NO_MATCH,
    OUTPUT_LIMIT_TOTAL,
    TOGETHER,
    explanation,
    feedback_texts,
    function_summary,
)
from autograder.grading.record import GradingRecord, NamedMistake, TestRecord
from autograder.grading.results import results_document


def _test(name, score, max_score, visibility="after_published", output="", diagnoses=(), kind=None):
    return TestRecord(
        key=f"hidden/test.py::{name[:5]}",
        nodeid=name,
        name=name,
        function=name.split(":")[0].split()[0].rstrip(",") if ":" in name else "other",
        max_score=max_score,
        score=score,
        status="passed" if score == max_score else "failed",
        message=output,
        visibility=visibility,
        mistakes=list(diagnoses),
        diagnosis="named" if diagnoses else "",
        kind=kind or ("passed" if score == max_score else "wrong"),
    )


LONG = NamedMistake("The same mistake", "the same long explanation " * 10)


HIDDEN_LOSS = [
    _test("scaled_dot_product_attention: the worked example", 2, 2, "visible"),
    _test("scaled_dot_product_attention: fully blocked rows give zeros [float32]", 0, 7, output="NaN in row 1"),
    _test("scaled_dot_product_attention: fully blocked rows give zeros [float64]", 0, 7, output="NaN in row 1"),
    _test("softmax: rows sum to 1", 5, 5),
]


def test_hidden_losses_are_named_with_points_and_category_but_no_details():
    text = function_summary(HIDDEN_LOSS)
    assert (
        "- scaled_dot_product_attention: public tests passed; -14 in hidden tests that check: fully blocked rows give zeros\n"
        in (text + "\n")
    )
    assert "- softmax: passed" in text
    assert "NaN in row 1" not in text  # the hidden test's own feedback waits for publication


def test_the_instructor_sets_how_much_of_the_hidden_losses_is_shown():
    assert "hidden" not in function_summary(HIDDEN_LOSS, "off").split(":", 1)[1]
    assert "-14 in hidden tests\n" in function_summary(HIDDEN_LOSS, "points") + "\n"
    causes = function_summary(
        [_test("softmax: stable for large scores", 0, 4, diagnoses=["softmax_no_max"])],
        "causes",
        {"softmax_no_max": "softmax without subtracting the maximum"},
    )
    assert "(likely: softmax without subtracting the maximum)" in causes


def test_public_failures_give_the_most_likely_cause_and_stubs_say_not_implemented():
    named = [_test("softmax: example", 0, 2, "visible", "values differ", ["softmax_dim0"])]
    assert "most likely: softmax over the wrong dimension" in function_summary(
        named, titles={"softmax_dim0": "softmax over the wrong dimension"}
    )
    unnamed = [_test("softmax: example", 0, 2, "visible", "softmax: row 3 sums to 0.73, not 1\nmore")]
    # no catalogued mistake explains it: the first failing check's words, not called the likely cause
    assert "first failure: softmax: row 3 sums to 0.73, not 1" in function_summary(unnamed)
    stub = [
        _test(
            "softmax: example",
            0,
            2,
            "visible",
            "softmax raised NotImplementedError: softmax is not implemented yet",
            kind="not-implemented",
        )
    ]
    assert "- softmax: not implemented yet" in function_summary(stub + [_test("softmax: large", 0, 3)])
    # the kind decides, not the words: a message that quotes NotImplementedError is still a wrong value
    quoted = [_test("softmax: example", 0, 2, "visible", "values differ; NotImplementedError", kind="wrong")]
    assert "not implemented" not in function_summary(quoted)


def test_repeated_explanations_point_back_but_never_into_a_later_visibility():
    tests = [
        _test("f: hidden one", 0, 1, "after_published", "first", ["m"]),
        _test("f: public one", 0, 1, "visible", "second", ["m"]),
        _test("f: hidden two", 0, 1, "after_published", "third", ["m"]),
    ]
    texts = feedback_texts(GradingRecord(tests=tests, named={"m": LONG}))
    long = "Likely mistake: The same mistake. " + LONG.explanation.strip()
    assert long in texts[0] and long in texts[1]  # a visible test never points into a hidden one
    assert texts[2] == "third\n\n(The same likely mistake as in “f: public one” above, explained there.)"


def test_only_explanations_are_pointed_to_and_only_where_they_can_be_read_whole():
    unmatched = [_test(f"f: t{i}", 0, 1, "visible", f"check {i}") for i in range(3)]
    for t in unmatched:
        t.diagnosis = "none"
    texts = feedback_texts(GradingRecord(tests=unmatched))
    # a hedge is said once and pointed to after (issue 50: repeated paragraphs, hedged ones too, collapse)
    assert NO_MATCH in texts[0] and all("(As in “f: t0” above.)" in text for text in texts[1:])
    assert not any("same likely mistake" in text for text in texts)
    # a check's long words give way to the diagnosis, which is read whole: the next test points to it
    words = " ".join(f"value{i}" for i in range(1000))
    cut = [_test("f: long", 0, 1, "visible", words, ["m"]), _test("f: next", 0, 1, "visible", "short", ["m"])]
    texts = feedback_texts(GradingRecord(tests=cut, named={"m": LONG}))
    assert texts[0].startswith("value0 value1") and "more characters cut" in texts[0] and len(texts[0]) <= 4000
    assert texts[0].endswith("Likely mistake: The same mistake. " + LONG.explanation.strip())
    assert texts[1] == "short\n\n(The same likely mistake as in “f: long” above, explained there.)"
    # what the student printed is cut first: it never takes the diagnosis's room (the reviewer's case)
    cut[0].printed = "hello world\n" * 50
    texts = feedback_texts(GradingRecord(tests=cut, named={"m": LONG}))
    assert texts[0].endswith("Likely mistake: The same mistake. " + LONG.explanation.strip()) and len(texts[0]) <= 4000
    short = [_test("f: one", 0, 1, "visible", "short words", ["m"])]
    short[0].printed = "hello world\n" * 5
    (text,) = feedback_texts(GradingRecord(tests=short, named={"m": LONG}))
    assert text.endswith("Your code printed:\n" + "hello world\n" * 5) and LONG.explanation.strip() in text
    # an explanation too long to be read whole is never pointed to: each test shows what fits of it
    longer = NamedMistake(title="The same mistake", explanation=words)
    texts = feedback_texts(GradingRecord(tests=cut, named={"m": longer}))
    assert all("same likely mistake" not in text and "Likely mistake: The same mistake. value0" in text for text in texts)


def test_feedback_wording_of_checks():
    import pytest
    import torch

    from autograder.checks import Feedback, expect_close

    want = torch.tensor([[4, 1, 2, 0, 6, 0, 5, 3, 1, 1]], dtype=torch.float64)
    got = want.clone()
    got[0, 7] = 8
    with pytest.raises(Feedback) as info:
        expect_close(got, want, "tokens", atol=0)
    text = str(info.value)
    assert "compared exactly" in text and "0e+00" not in text
    assert "entries 4 to 9" in text and "8" in text.split("got")[-1]  # the first difference is shown, with its neighbours


def test_summary_lines_are_cut_at_a_word():
    from autograder.grading.feedback_text import bound_line

    cut = bound_line("softmax: " + "word " * 100, 60)
    assert cut.endswith("…") and cut[:-1].split()[-1] == "word"


def test_outputs_are_bounded_and_the_summary_comes_first():
    tests = [_test(f"softmax: case {i}", 0, 1, "visible", f"case {i}: " + "x" * 20000) for i in range(30)]
    document = results_document(GradingRecord(tests=tests, notes=["A note."], execution_time=1.0))
    assert sum(len(t["output"]) for t in document["tests"]) <= OUTPUT_LIMIT_TOTAL + 30 * 60
    assert document["output"].startswith("0.00 / 30 points.\n\nSummary by function:\n- softmax: 30 of 30 public tests failed")
    assert document["output"].endswith("A note.")


def test_a_function_failing_only_because_of_another_says_which():
    tests = [
        _test("sample_next: frequencies match [top_p=0.75]", 0, 3.5, diagnoses=["top_p_excludes_crossing"]),
        _test("next_token_probs: top-p keeps the crossing token", 0, 4, diagnoses=["top_p_excludes_crossing"]),
    ]
    text = function_summary(tests, changes={"top_p_excludes_crossing": {"next_token_probs"}})
    assert "- sample_next: -3.5 in hidden tests that check: frequencies match; fails because `next_token_probs` is wrong" in text
    assert "next_token_probs: -4 in hidden tests that check: top-p keeps the crossing token\n" in text + "\n"
    # without a named mistake for every failure, nothing is claimed
    unnamed = [tests[0], _test("sample_next: draws", 0, 1)]
    assert "fails because" not in function_summary(unnamed, changes={"top_p_excludes_crossing": {"next_token_probs"}})


def test_two_mistakes_that_give_the_same_values_are_offered_as_alternatives():
    named = {"a": NamedMistake("Last epoch's weights", "Restore the best."), "b": NamedMistake("No copy", "Deep-copy it.")}
    one, both = explanation(["a"], named), explanation(["a", "b"], named)
    assert one == "Likely mistake: Last epoch's weights. Restore the best."
    assert both.splitlines() == [ALTERNATIVES, "- Last epoch's weights. Restore the best.", "- No copy. Deep-copy it."]
    assert explanation(["unknown"], named) == ""


def test_mistakes_that_only_together_give_the_values_are_named_together_by_title():
    named = {"a": NamedMistake("No scaling", "Divide by sqrt(d_k)."), "b": NamedMistake("Mask transposed", "Use triu.")}
    assert explanation(["a", "b"], named, together=True) == TOGETHER.format(titles="No scaling; Mask transposed")
    t = _test("causal_mask: future independence", 0, 2, diagnoses=["a", "b"])
    t.diagnosis = "together"
    record = GradingRecord(tests=[t], named=named)
    assert TOGETHER.format(titles="No scaling; Mask transposed") in feedback_texts(record)[0]
    assert t.diagnoses == ["a", "b"]


def test_a_failure_that_ran_another_failing_function_says_where_to_look_first():
    """A correct function's test fails because it ran the student's wrong `scaled_dot_product_attention` (issue 32's
    three-bug file: no catalogued mistake, alone or together, reproduced it, so no "fails because"): the
    summary and the test say which other function the failing tests ran, without calling the mask wrong."""
    sdpa = _test("scaled_dot_product_attention: worked example", 0, 2, "visible", "values differ")
    mask = _test("causal_mask: with it, later tokens change nothing", 0, 4, output="outputs changed")
    mask.uses = ["scaled_dot_product_attention", "softmax"]
    soft = _test("softmax: rows sum to 1", 5, 5)
    line = function_summary([sdpa, mask, soft]).split("- causal_mask: ")[1].splitlines()[0]
    assert line.endswith(
        "its failing tests also run your `scaled_dot_product_attention`, which fails tests of its own: fix it first"
    )
    assert "softmax`" not in line  # it ran softmax too, which passes: not a suspect
    texts = feedback_texts(GradingRecord(tests=[sdpa, mask, soft]))
    assert "This test also runs your `scaled_dot_product_attention`, which fails tests of its own" in texts[1]
    assert "also runs" not in texts[0] + texts[2]
    # the other function passing: nothing said
    sdpa_ok = _test("scaled_dot_product_attention: worked example", 2, 2, "visible")
    assert "also run" not in function_summary([sdpa_ok, mask, soft])
    # hidden tests whose categories are not shown ("points"): where they ran is not shown either
    assert "also run" not in function_summary([sdpa, mask, soft], "points")
    # a name already proven ("fails because") is not repeated as a suspect
    mask.mistakes, mask.diagnosis = ["sdpa_softmax_over_queries"], "named"
    proven = function_summary([sdpa, mask, soft], changes={"sdpa_softmax_over_queries": {"scaled_dot_product_attention"}})
    assert "fails because `scaled_dot_product_attention` is wrong" in proven and "also run" not in proven


def test_a_stub_that_another_unwritten_function_stops_says_so():
    sdpa = _test("scaled_dot_product_attention: worked example", 0, 2, "visible", "not yet", kind="not-implemented")
    mask = _test("causal_mask: later tokens change nothing", 0, 4, output="not yet", kind="not-implemented")
    mask.uses = ["scaled_dot_product_attention"]
    text = function_summary([sdpa, mask])
    assert (
        "- causal_mask: not implemented yet (or its tests run your `scaled_dot_product_attention`, not written yet either)"
        in text
    )
    assert "- scaled_dot_product_attention: not implemented yet\n" in text + "\n"


def test_a_class_whose_methods_fail_is_named_as_the_class():
    step = _test("AttnSeq2Seq.step: logits equal the reference's", 0, 6, output="values differ")
    train = _test("train_copy: a short run gives the reference's losses", 0, 9, output="losses differ")
    train.uses = ["AttnSeq2Seq"]
    other = _test("AttnSeq2Seq.forward: teacher-forced logits", 0, 6, output="values differ")
    other.uses = []  # a test of the class's own method: its class is its own (scoring drops it from uses)
    text = function_summary([step, train, other])
    assert (
        "- train_copy: -9 in hidden tests that check: a short run gives the reference's losses; its failing tests "
        "also run your `AttnSeq2Seq`, which fails tests of its own: fix it first" in text
    )
    assert "also run" not in text.split("- AttnSeq2Seq.forward")[1]


def test_three_suspects_read_as_a_list():
    failing = [_test(f"{f}: example", 0, 1, "visible", "differs") for f in ("cooccurrence", "ppmi", "svd_embeddings")]
    nearest = _test("nearest: bank is near river", 0, 4, output="differs")
    nearest.uses = ["cooccurrence", "ppmi", "svd_embeddings"]
    assert "run your `cooccurrence`, `ppmi` and `svd_embeddings`, which fail tests of their own: fix them first" in (
        function_summary([*failing, nearest])
    )


def test_a_test_of_a_correct_function_drops_its_own_advice_when_another_function_is_wrong():
    """issue 32: with attention's softmax over the queries, the correct causal_mask read "Either the causal mask
    blocks the wrong triangle, or True is not treated as blocked": advice aimed at the wrong function."""
    hint = "Either the causal mask blocks the wrong triangle, or True is not treated as blocked."
    mask = _test("causal_mask: later tokens change nothing", 0, 4, output=f"outputs differ (max error 0.2). {hint}")
    mask.hint = hint
    mask.mistakes, mask.diagnosis = ["sdpa_softmax_over_queries"], "named"
    other = {"sdpa_softmax_over_queries": NamedMistake("Softmax over the queries", "dim=-2", ["scaled_dot_product_attention"])}
    text = feedback_texts(GradingRecord(tests=[mask], named=other))[0]
    assert hint not in text and text.startswith("outputs differ (max error 0.2).")
    assert "Likely mistake: Softmax over the queries" in text
    # the mistake named is the mask's own: its advice stays
    own = {"sdpa_softmax_over_queries": NamedMistake("Transposed mask", "triu", ["causal_mask"])}
    assert hint in feedback_texts(GradingRecord(tests=[mask], named=own))[0]
    # nothing named: the advice stays (the mask may be wrong too)
    mask.mistakes, mask.diagnosis = [], ""
    assert hint in feedback_texts(GradingRecord(tests=[mask], named=other))[0]


def test_a_check_keeps_its_hint_apart():
    import pytest
    import torch

    from autograder.checks import Feedback, expect_close

    with pytest.raises(Feedback) as info:
        expect_close(torch.ones(3), torch.zeros(3), "the output", atol=1e-9, hint="Scale by 1/sqrt(d_k).")
    assert info.value.hint == "Scale by 1/sqrt(d_k)." and str(info.value).endswith(" Scale by 1/sqrt(d_k).")


def test_a_few_failing_tests_are_read_whole_beside_many_passing_ones():
    # 80 tests share the page: the passing ones need no room, so the failing ones keep their values and diagnosis
    values = "expected [" + ", ".join(f"{i / 7:.4f}" for i in range(150)) + "]"
    tests = [_test(f"softmax: case {i}", 1, 1) for i in range(76)]
    tests += [_test(f"softmax: wrong {i}", 0, 1, "visible", values, ["m"]) for i in range(4)]
    texts = feedback_texts(GradingRecord(tests=tests, named={"m": LONG}))
    assert len(values) > OUTPUT_LIMIT_TOTAL // 80  # an equal share would have cut them
    assert texts[76].startswith(values) and "cut" not in texts[76]
    for text in texts[77:]:  # the mistake is explained above: the evidence in one line (issue 50: a page to read)
        assert text.startswith(values[:100]) and len(text) < 400 and "cut" not in text
    assert LONG.explanation.strip() in texts[76]
    # when every test fails at length, each gets an equal share and the whole stays bounded
    many = [_test(f"softmax: wrong {i}", 0, 1, "visible", values * 3, ["m"]) for i in range(80)]
    texts = feedback_texts(GradingRecord(tests=many, named={"m": LONG}))
    assert sum(map(len, texts)) <= OUTPUT_LIMIT_TOTAL + 80 * 60
