"""Mistake-aware feedback: a submission with two classic mistakes in different functions is told both,
in words, without hidden inputs or reference code, and the score is the same as without diagnosis."""

import json

import numpy as np
import pytest
import torch
from conftest import KIT, run_cli, write_submission

from autograder.catalogue import combined_source, read_catalogue
from autograder.config import load_assignment


@pytest.mark.proof  # whole-suite gradings (10 s and more): `make proofs`
def test_two_mistakes_in_different_functions_are_both_named(tmp_path):
    assignment = load_assignment("attention", KIT)
    catalogue = {e.name: e for e in read_catalogue(assignment, "mistake")}
    first, second = catalogue["softmax_no_max"], catalogue["causal_blocks_diagonal"]
    source = combined_source(assignment, [first, second])
    upload = write_submission(tmp_path / "s", "attention", source)
    scores = {}
    for flag in ([], ["--no-diagnosis"]):
        results = tmp_path / f"r{len(flag)}.json"
        proc = run_cli("grade", "attention", str(upload), "--results", str(results), *flag)
        assert proc.returncode == 0, proc.stderr
        document = json.loads(results.read_text())
        scores[bool(flag)] = [t["score"] for t in document["tests"]]
        if not flag:
            named = {m for t in document["tests"] for m in t["extra_data"]["mistakes"]}
            assert {first.name, second.name} <= named, named
            text = "\n".join(t["output"] for t in document["tests"])
            assert first.title in text and second.title in text
            assert "BEGIN SOLUTION" not in text
    assert scores[True] == scores[False], "diagnosis must never change a score"


def test_observations_compare_safely():
    """Whatever the student's code returned, comparing it with a mistake's result is a yes or a no."""
    from autograder.checks import RETURNED, Outcome
    from autograder.diagnosis.diagnoser import Diagnoser

    close = Diagnoser._close
    weird = [RETURNED, Outcome.raised("ValueError", "x"), ["a", "b"], "a", 3, None, {"k": 1}, np.zeros(3), torch.ones(2, 2)]
    for a in weird:
        for b in weird:
            assert close(a, b) in (True, False)
    assert close(Outcome.raised("ValueError", "bad  shape\n(2, 3)"), Outcome.raised("ValueError", "bad shape (2, 3)"))
    assert not close(Outcome.raised("ValueError", "x"), Outcome.raised("TypeError", "x"))
    assert close(["king", "queen"], ("king", "queen")) and not close(["king", "queen"], ["queen", "king"])
    assert close(torch.tensor([1.0, 2.0]), np.array([1.0, 2.0 + 1e-7]))


def _named(tmp_path, assignment_name: str, *mistakes: str) -> tuple[set[str], str]:
    """Grade the reference with the given catalogued mistakes appended; (mistakes named, all feedback)."""
    assignment = load_assignment(assignment_name, KIT)
    catalogue = {e.name: e for e in read_catalogue(assignment, "mistake")}
    source = combined_source(assignment, [catalogue[m] for m in mistakes])
    upload = write_submission(tmp_path / "s", assignment_name, source)
    results = tmp_path / "r.json"
    proc = run_cli("grade", assignment_name, str(upload), "--results", str(results))
    assert proc.returncode == 0, proc.stderr
    document = json.loads(results.read_text())
    named = {m for t in document["tests"] for m in t["extra_data"]["mistakes"]}
    return named, "\n".join(t["output"] for t in document["tests"])


def test_a_mistake_contradicted_by_a_passed_test_is_not_named(tmp_path):
    """A stable softmax that returns NaN on fully blocked rows passes every +-1e4 test: it did not skip the
    max subtraction, so only the NaN rows are named."""
    named, text = _named(tmp_path, "attention", "fully_blocked_nan")
    assert "fully_blocked_nan" in named
    assert "softmax_no_max" not in named and "subtracting the maximum" not in text, named


def test_attention_calling_torch_softmax_is_not_told_its_softmax_does(tmp_path):
    named, text = _named(tmp_path, "attention", "sdpa_calls_torch_softmax")
    assert "sdpa_calls_torch_softmax" in named and "uses_torch_softmax" not in named, named
    assert "Your softmax calls torch.softmax" not in text


def test_the_keep_mask_convention_is_named(tmp_path):
    named, _ = _named(tmp_path, "attention", "causal_returns_keep_mask")
    assert "causal_returns_keep_mask" in named and "causal_blocks_diagonal" not in named, named


def test_an_assignment_without_a_catalogue_still_grades(tmp_path):
    """Diagnosis is a layer: with no mistakes/, variants/ or corpus/, a wrong submission loses the
    same points and simply gets no mistake named."""
    import shutil

    from autograder.catalogue import submission_source
    from autograder.grading.grade import grade_submission

    kit = tmp_path / "kit"
    shutil.copytree(
        KIT / "assignments" / "embeddings",
        kit / "assignments" / "embeddings",
        ignore=shutil.ignore_patterns("mistakes", "variants", "corpus", "__pycache__"),
    )
    shutil.copytree(KIT / "solutions" / "embeddings", kit / "solutions" / "embeddings")
    bare = load_assignment("embeddings", kit)
    full = load_assignment("embeddings", KIT)
    mistake = next(e for e in read_catalogue(full, "mistake") if e.name == "ppmi_no_clip")
    upload = write_submission(tmp_path / "s", "embeddings", submission_source(full, mistake))
    without = grade_submission(bare, upload).document
    with_catalogue = grade_submission(full, upload).document
    assert 0 < without["score"] < 100
    assert without["score"] == with_catalogue["score"]
    assert not [m for t in without["tests"] for m in t["extra_data"].get("mistakes", [])]
    assert mistake.name in {m for t in with_catalogue["tests"] for m in t["extra_data"].get("mistakes", [])}


@pytest.mark.proof  # whole-suite gradings (10 s and more): `make proofs`
def test_an_upstream_softmax_mistake_is_not_also_told_as_an_attention_one(tmp_path):
    """A softmax without the max subtraction also gives NaN on attention's fully blocked rows, and a softmax
    calling torch.softmax makes attention call it too: the softmax mistake explains those failures and more,
    so attention's own mistakes (`fully_blocked_nan`, `sdpa_calls_torch_softmax`) are not named beside it."""
    for mistake in ("softmax_no_max", "uses_torch_softmax"):
        (tmp_path / mistake).mkdir()
        named, _ = _named(tmp_path / mistake, "attention", mistake)
        assert named == {mistake}, named


def _graded(tmp_path, assignment_name: str, source: str) -> dict:
    upload = write_submission(tmp_path / "s", assignment_name, source)
    results = tmp_path / "r.json"
    proc = run_cli("grade", assignment_name, str(upload), "--results", str(results))
    assert proc.returncode == 0, proc.stderr
    return json.loads(results.read_text())


def test_a_mistake_counts_only_where_the_students_code_runs_the_function_it_changes(tmp_path):
    """d2l's shape (an outside grader's find): the graded softmax is exp / sum, and the attention keeps a stable
    softmax of its own. The attention tests never run the graded softmax, so they neither rule `softmax_no_max`
    out (passed) nor name a softmax mistake; the softmax tests name `softmax_no_max`, not `fully_blocked_nan`
    (whose "x - max = NaN" the code never computes). Before, the softmax failures were "resembles"."""
    import re

    assignment = load_assignment("attention", KIT)
    reference = assignment.solution.read_text()
    own = re.sub(r"(?<![\w.])softmax\(", "_own_softmax(", reference)  # the attention calls a stable copy
    plain = "\n\ndef softmax(x, dim=-1):\n    e = torch.exp(x)\n    return e / e.sum(dim=dim, keepdim=True)\n"
    document = _graded(tmp_path, "attention", own + plain)
    failed = [t for t in document["tests"] if t["score"] < t["max_score"]]
    assert failed and {t["extra_data"]["function"] for t in failed} == {"softmax"}, [t["name"] for t in failed]
    named = {m for t in failed for m in t["extra_data"]["mistakes"]}
    assert named == {"softmax_no_max"}, named
    assert all(t["extra_data"]["diagnosis"] == "named" for t in failed), [t["extra_data"] for t in failed]


def test_a_mistake_that_fails_a_case_the_student_passed_is_not_named(tmp_path):
    """sglang's shape (an outside grader's find): the nucleus measured on the mass before top-k. On 8 equal tokens
    with top_k=4, top_p=0.75 it keeps 4 tokens, as `top_p_keeps_at_threshold` does; but it passes the threshold
    cases without top-k, which that mistake fails: not named (it was)."""
    assignment = load_assignment("decoding", KIT)
    source = assignment.solution.read_text()
    edits = [
        ("probs = torch.softmax(logits / temperature, dim=-1)", "probs = raw = torch.softmax(logits / temperature, dim=-1)"),
        (
            "before = sorted_probs.cumsum(dim=-1) - sorted_probs",
            "before = raw.gather(-1, order).cumsum(-1) - raw.gather(-1, order)",
        ),
    ]
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    document = _graded(tmp_path, "decoding", source)
    threshold = [t for t in document["tests"] if t["extra_data"]["test"].endswith("::test_top_p_exact_threshold")]
    assert any(t["score"] == 0 for t in threshold) and any(t["score"] == t["max_score"] for t in threshold)
    named = {m for t in document["tests"] if t["extra_data"]["diagnosis"] == "named" for m in t["extra_data"]["mistakes"]}
    assert "top_p_keeps_at_threshold" not in named, named


def test_an_integer_dtype_slip_matches_the_integer_mistake_whatever_its_width():
    """The book's one_hot returns int32; the catalogued `one_hot_int` writes int64: the same slip (it was "matches
    none"). Floats stay exact: a float16 result is not the float32 mistake."""
    from autograder.diagnosis.diagnoser import Diagnoser

    d = object.__new__(Diagnoser)
    expected = np.eye(3)
    assert d._matches(np.eye(3, dtype=np.int32), np.eye(3, dtype=np.int64), expected)
    assert d._matches(torch.eye(3, dtype=torch.int16), torch.eye(3, dtype=torch.int64), torch.eye(3, dtype=torch.float64))
    assert not d._matches(np.eye(3, dtype=np.float16), np.eye(3, dtype=np.float32), expected)
    assert not d._matches(np.eye(3), np.eye(3, dtype=np.int64), expected)  # the student's float64 is right
