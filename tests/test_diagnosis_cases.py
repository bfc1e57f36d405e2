"""Names that are the student's mistake, and points where they belong (issue 24's cases), graded whole.

Each case grades a realistic wrong file through the CLI with every test (not only the tests a mistake
declares), and checks what the student reads: the mistake named where it reproduces the student's outputs,
no other mistake named for it, and the summary saying which function a downstream failure comes from.
"""

from __future__ import annotations

import pytest
from conftest import grade, reference_source, write_submission

from autograder.catalogue import read_catalogue, submission_source
from autograder.config import load_assignment

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
