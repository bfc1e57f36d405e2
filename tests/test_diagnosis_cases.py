"""Names that are the student's mistake, and points where they belong (issue 24's cases), graded whole.

Each case grades a realistic wrong file through the CLI with every test (not only the tests a mistake
declares), and checks what the student reads: the mistake named where it reproduces the student's outputs,
no other mistake named for it, and the summary saying which function a downstream failure comes from.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import grade, install_copy, reference_source, validate_results, write_submission

from autograder.catalogue import read_catalogue, submission_source
from autograder.checks import FLOAT32_HINT
from autograder.config import load_assignment
from autograder.grading.feedback_text import NO_MATCH
from autograder.grading.seam_messages import DTYPE_CLASH_ADVICE
from autograder.release import gradescope_sim

pytestmark = pytest.mark.proof  # whole-suite gradings: `make proofs`

# A nucleus written as the running total "at or below p": every token whose mass before it reaches p is dropped
# with the crossing token, as top_p_excludes_crossing does (exactly so, except where a sum rounds past 1.0).
CUMSUM_NUCLEUS = """

_reference_next_token_probs = next_token_probs


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0 or top_p is None or not 0 < top_p <= 1:
        return _reference_next_token_probs(logits, temperature, top_k, top_p)
    probs = _reference_next_token_probs(logits, temperature, top_k, None)
    sorted_probs, order = probs.sort(dim=-1, descending=True, stable=True)
    keep_sorted = sorted_probs.cumsum(dim=-1) <= top_p
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    probs = torch.where(keep, probs, torch.zeros_like(probs))
    return probs / probs.sum(dim=-1, keepdim=True)
"""


def _named(document: dict) -> set[str]:
    return {m for t in document["tests"] for m in t["extra_data"].get("mistakes", [])}


def test_a_cumsum_nucleus_is_named_and_sample_next_points_at_next_token_probs(tmp_path):
    source = reference_source("decoding") + CUMSUM_NUCLEUS
    document = grade("decoding", write_submission(tmp_path / "nucleus", "decoding", source), tmp_path)
    assert document["score"] < 100
    assert _named(document) == {"top_p_excludes_crossing"}, _named(document)
    lines = [line for line in document["output"].splitlines() if line.startswith("- sample_next:")]
    assert not lines or "passed" in lines[0] or "fails because `next_token_probs` is wrong" in lines[0], lines


def test_an_unshifted_loss_is_named_as_such_and_nothing_else(tmp_path):
    assignment = load_assignment("transformer")
    entry = next(e for e in read_catalogue(assignment, "mistake") if e.name == "no_target_shift")
    path = write_submission(tmp_path / "unshifted", "transformer", submission_source(assignment, entry))
    document = grade("transformer", path, tmp_path)
    named = _named(document)
    assert "no_target_shift" in named and "checkpoint_on_train_loss" not in named, named


def _catalogued(assignment_name: str, mistake: str, tmp_path) -> dict:
    assignment = load_assignment(assignment_name)
    entry = next(e for e in read_catalogue(assignment, "mistake") if e.name == mistake)
    path = write_submission(tmp_path / mistake, assignment_name, submission_source(assignment, entry))
    return grade(assignment_name, path, tmp_path)


@pytest.mark.parametrize(
    ("assignment_name", "mistake", "also_true"),
    [
        # was "matches none of the classic mistakes" on a whole grading. Its code (no max, no guard) also gives NaN
        # on fully blocked rows, as fully_blocked_nan says: subtracting the max alone would still leave that.
        ("attention", "softmax_no_max", {"fully_blocked_nan"}),
        ("decoding", "top_k_no_renormalise", set()),  # the same
        ("decoding", "logits_after_temperature", set()),  # was told "a cached step must compute what the prefix computes"
        ("decoding", "positions_restart_at_zero", set()),  # was summarised as "each call starts from an empty cache"
    ],
)
def test_a_catalogued_mistake_graded_whole_is_named_and_nothing_false(assignment_name, mistake, also_true, tmp_path):
    document = _catalogued(assignment_name, mistake, tmp_path)
    assert document["score"] < 100
    named = _named(document)
    assert mistake in named and named <= {mistake} | also_true, named


def test_a_crash_in_attention_costs_no_softmax_point(tmp_path):
    crash = """

def scaled_dot_product_attention(q, k, v, mask=None):
    raise RuntimeError("not finished")
"""
    path = write_submission(tmp_path / "crash", "attention", reference_source("attention") + crash)
    document = grade("attention", path, tmp_path)
    lost = {t["name"] for t in document["tests"] if t["score"] < t["max_score"]}
    assert any(name.startswith("scaled_dot_product_attention") for name in lost), lost
    assert not any(name.startswith("softmax") for name in lost), lost  # test_sdpa_by_hand is not softmax's


# word_language_model's generate: eval() and no_grad() called, but it samples instead of taking the argmax.
SAMPLING_GENERATE = """

def generate(model, prompt, n_new):
    model.eval()
    out = prompt
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for _ in range(n_new):
            logits = model(out[:, -model.max_len:])[:, -1]
            out = torch.cat([out, torch.multinomial(logits.softmax(dim=-1), 1, generator=generator)], dim=1)
    return out
"""


def _output_of(document: dict, test: str) -> str:
    return "\n".join(t["output"] for t in document["tests"] if t["extra_data"]["test"].endswith(test))


def test_a_sampling_generate_that_calls_eval_is_not_told_to_call_eval(tmp_path):
    source = reference_source("transformer") + SAMPLING_GENERATE
    document = grade("transformer", write_submission(tmp_path / "sampling", "transformer", source), tmp_path)
    said = _output_of(document, "::test_generate_eval_mode")
    assert "call model.eval() first" not in said, said
    assert document["score"] < 100

    assignment = load_assignment("transformer")
    entry = next(e for e in read_catalogue(assignment, "mistake") if e.name == "generate_train_mode")
    path = write_submission(tmp_path / "train_mode", "transformer", submission_source(assignment, entry))
    said = _output_of(grade("transformer", path, tmp_path), "::test_generate_eval_mode")
    assert "greedy decoding gives with the model left in train mode" in said, said


# A student's own attention file with three bugs in three functions (issue 32: it was told "matches none" on 39
# of its failing tests, right after hints that named the mistake): no 1/sqrt(d_k), the causal mask's triangle
# below the diagonal instead of above, and padding from `> length` instead of `>= length`.
THREE_BUGS = """
import math

import torch


def softmax(x, dim=-1):
    m = x.max(dim=dim, keepdim=True).values
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)  # an all -inf slice: exp(-inf) = 0
    e = torch.exp(x - m)
    total = e.sum(dim=dim, keepdim=True)
    return e / torch.where(total == 0, torch.ones_like(total), total)


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.matmul(q, k.transpose(-2, -1))
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = softmax(scores, dim=-1)
    return torch.matmul(weights, v), weights


def causal_mask(n):
    return torch.tril(torch.ones(n, n, dtype=torch.bool), diagonal=-1)


def padding_mask(lengths, n):
    return torch.arange(n)[None, :] > lengths[:, None]
"""
THREE_BUGS_HAS = {"no_scaling", "causal_transposed", "padding_off_by_one"}


def test_a_student_file_with_three_bugs_is_told_each_through_the_gradescope_entry(installed_tree, tmp_path):
    parent = Path(tempfile.mkdtemp(prefix="kit-tree-"))  # like Gradescope's /autograder: 0755 parents
    try:
        parent.chmod(0o755)
        root = install_copy(installed_tree, parent / "autograder", {"attention.py": THREE_BUGS.encode()})
        gradescope_sim.run_autograder(root)
        document = json.loads((root / "results" / "results.json").read_text())
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    validate_results(document)
    lost = {t["extra_data"]["function"] for t in document["tests"] if t["score"] < t["max_score"]}
    assert lost == {"scaled_dot_product_attention", "causal_mask", "padding_mask"}, lost  # softmax is right
    assert _named(document) == THREE_BUGS_HAS, _named(document)  # each bug named, nothing else
    # every failing test names what reproduces its values there, never "matches none" (before: 5 tests said it)
    unnamed = [t["name"] for t in document["tests"] if t["score"] < t["max_score"] and not t["extra_data"]["mistakes"]]
    assert not unnamed, unnamed
    assert not [t["name"] for t in document["tests"] if NO_MATCH in t["output"]]
    by_test = {t["extra_data"]["test"]: t["extra_data"]["mistakes"] for t in document["tests"] if t["score"] < t["max_score"]}
    # the padding test runs the reference's causal mask and attention (a test's points rest on the function it
    # grades, 2026-12-05): the padding mistake alone explains it, where both masks together once did
    assert by_test.get("hidden/test_masks.py::test_padding_and_causal") == ["padding_off_by_one"], by_test


# Float32 slips (issue 32): bentrevett's scale as a float32 tensor, hyperwords' float32 PPMI, and AllenNLP-style
# `.float()` casts before a layer. The formula is right in each; the feedback must say float32, not a formula.
BENTREVETT_SCALE = """

def attend(query, enc):
    scale = torch.sqrt(torch.FloatTensor([enc.shape[-1]]))  # bentrevett's scale: a float32 tensor
    scores = torch.bmm(enc, query.unsqueeze(2)).squeeze(2) / scale
    weights = torch.softmax(scores, dim=1)
    return torch.bmm(weights.unsqueeze(1), enc).squeeze(1), weights
"""


def _failed(document: dict, function: str) -> list[dict]:
    return [t for t in document["tests"] if t["score"] < t["max_score"] and t["extra_data"]["function"] == function]


def test_a_float32_constant_or_table_is_told_as_float32_rounding_not_as_a_formula(tmp_path):
    seq2seq = reference_source("seq2seq") + BENTREVETT_SCALE
    document = grade("seq2seq", write_submission(tmp_path / "scale", "seq2seq", seq2seq), tmp_path)
    attend = _failed(document, "attend")
    # said whole once, then pointed to (issue 50: a paragraph repeated on every case collapses)
    assert attend and FLOAT32_HINT in attend[0]["output"], [t["output"] for t in attend]
    assert all(
        FLOAT32_HINT in t["output"] or "(As in “attend:" in t["output"] or "(Otherwise as in its case [" in t["output"]
        for t in attend
    ), [t["output"] for t in attend]
    assert not any("check the 1/sqrt(h)" in t["output"] or NO_MATCH in t["output"] for t in attend)
    assert not _named(document)

    hyperwords = reference_source("embeddings").replace("dtype=np.float64)", "dtype=np.float32)", 1)
    document = grade("embeddings", write_submission(tmp_path / "ppmi32", "embeddings", hyperwords), tmp_path)
    ppmi = _failed(document, "ppmi")
    assert ppmi and FLOAT32_HINT in ppmi[0]["output"] and not any(NO_MATCH in t["output"] for t in ppmi)
    assert all(
        FLOAT32_HINT in t["output"] or "(As in “ppmi:" in t["output"] or "(Otherwise as in its case [" in t["output"]
        for t in ppmi
    )
    assert _named(document) == {"ppmi_float32"}  # hyperwords' form is catalogued: named beside the float32 hint


def test_a_float_cast_that_meets_float64_weights_is_told_as_a_dtype_clash(tmp_path):
    source = reference_source("seq2seq").replace(
        "logits = self.out(torch.cat([state, context], dim=1))", "logits = self.out(torch.cat([state, context], dim=1).float())"
    )
    assert ".float())" in source
    document = grade("seq2seq", write_submission(tmp_path / "cast", "seq2seq", source), tmp_path)
    step = _failed(document, "AttnSeq2Seq.step")
    # the advice whole on the first; a later test naming the same mistake points back to it
    assert step and DTYPE_CLASH_ADVICE in step[0]["output"], [t["output"][:600] for t in step]
    assert all(DTYPE_CLASH_ADVICE in t["output"] or "The same likely mistake as in" in t["output"] for t in step)
    assert _named(document) == {"step_casts_to_float32"}  # AllenNLP's form is catalogued
