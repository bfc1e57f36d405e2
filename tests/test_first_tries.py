"""Issue 50: a student's first try, graded whole, loses points only in the functions that hold its mistakes.

Each first try is the reference with the edits the issue's new student made, graded through the grader's CLI on
every test (a process of its own, as the release grades its catalogue). The function a test grades is its
``pytest.mark.grades`` marker, which results.json carries as the test's ``extra_data.function``. Each case
asserts that every test of a function without a mistake keeps all its points, that the summary never calls a
written function "not implemented yet", and that it never sends the student round a "fix X first" circle.
"""

from __future__ import annotations

import re

import pytest
from conftest import KIT, reference_source, validate_results

from autograder.config import load_assignment
from autograder.release.catalogue_grading import grade_sources

# Whole gradings through the CLI (10-20 s each): `make proofs`, kept out of `make test`.
pytestmark = pytest.mark.proof


def _edit(source: str, *edits: tuple[str, str]) -> str:
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


def graded_whole(assignment: str, source: str) -> dict:
    """``source`` graded on every test through the CLI: its results.json."""
    document = grade_sources(load_assignment(assignment, KIT), {"first_try": source}, jobs_n=1)["first_try"]
    assert document["_exit_code"] == 0, document
    validate_results({k: v for k, v in document.items() if k != "_exit_code"})
    return document


def points_by_function(document: dict) -> dict[str, tuple[float, float]]:
    """function graded -> (score, max score), over every test (parametrized cases included)."""
    out: dict[str, tuple[float, float]] = {}
    for test in document["tests"]:
        function = test["extra_data"]["function"]
        score, most = out.get(function, (0.0, 0.0))
        out[function] = (score + test["score"], most + test["max_score"])
    return out


def summary_lines(document: dict) -> dict[str, str]:
    """function -> its line of the summary by function."""
    return {m.group(1): m.group(0) for m in re.finditer(r"^- (\w+): .*$", document["output"], re.MULTILINE)}


def assert_only_these_lose(document: dict, wrong: set[str]) -> None:
    points = points_by_function(document)
    for function, (score, most) in points.items():
        if function not in wrong:
            assert score == most, (function, points, document["output"])
    for function in wrong:
        assert points[function][0] < points[function][1], (function, points)


def assert_no_circle_and_nothing_unwritten(document: dict) -> None:
    lines = summary_lines(document)
    sends = {f: set(re.findall(r"`(\w+)`", line)) for f, line in lines.items() if "fix " in line}
    for function, others in sends.items():
        for other in others:
            assert function not in sends.get(other, set()), (function, other, document["output"])
    for line in lines.values():
        assert "not implemented yet" not in line, line


def decoding_first_try() -> str:
    """A nucleus mask left in sorted order, and a KVCache.update that puts the new positions before the stored ones."""
    return _edit(
        reference_source("decoding"),
        ("keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)", "keep = keep_sorted"),
        (
            "self.keys[layer] = torch.cat([self.keys[layer], k], dim=1)",
            "self.keys[layer] = torch.cat([k, self.keys[layer]], dim=1)",
        ),
        (
            "self.values[layer] = torch.cat([self.values[layer], v], dim=1)",
            "self.values[layer] = torch.cat([v, self.values[layer]], dim=1)",
        ),
    )


def test_decoding_first_try_charges_the_nucleus_and_the_cache_only():
    document = graded_whole("decoding", decoding_first_try())
    assert_only_these_lose(document, {"next_token_probs", "KVCache"})  # forward, generate, sample_next keep 26.5
    assert_no_circle_and_nothing_unwritten(document)
    sample_next = [t["output"] for t in document["tests"] if t["extra_data"]["function"] == "sample_next"]
    assert not any("filtering after sampling" in text for text in sample_next), sample_next


def transformer_train_first_try() -> str:
    """Gradients clipped before backward() (so never: no_grad_clipping's effect) and model.train() called once,
    before the loop: from the second epoch on, the validation's model.eval() leaves the loop training in eval mode."""
    return _edit(
        reference_source("transformer"),
        (
            "            loss.backward()\n            nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n",
            "            nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n            loss.backward()\n",
        ),
        ("    for epoch in range(epochs):\n        model.train()\n", "    model.train()\n    for epoch in range(epochs):\n"),
    )


def test_transformer_train_first_try_charges_train_only_and_names_eval_mode():
    document = graded_whole("transformer", transformer_train_first_try())
    assert_only_these_lose(document, {"train"})
    assert_no_circle_and_nothing_unwritten(document)
    train = {t["extra_data"]["test"]: t["output"] for t in document["tests"] if t["extra_data"]["function"] == "train"}
    weighted = train["hidden/test_train.py::test_train_loss_weighted_by_batch_size"]
    assert "EVAL mode" in weighted and "weighted by their sizes" not in weighted, weighted  # the cause, not weighting
    best = train["hidden/test_train.py::test_best_epoch_and_weights"]
    assert "val < best" not in best and "LOWEST VALIDATION" not in best, best  # strict-< checkpointing is right


def test_transformer_without_sinusoidal_positions_names_it_missing():
    source = reference_source("transformer")
    start = source.index("def sinusoidal_positions(")
    source = source[:start] + source[source.index("# ----", start) :]  # the pasted function forgotten
    document = graded_whole("transformer", source)
    lines = summary_lines(document)
    assert lines["sinusoidal_positions"].startswith("- sinusoidal_positions: missing: your file does not define it"), lines
    assert_no_circle_and_nothing_unwritten(document)
    for caller in ("TinyCausalLM", "lm_loss", "generate", "train"):
        assert "not implemented yet" not in lines[caller], lines[caller]
    # lm_loss's and generate's hidden tests run the grader's probe model, never the student's TinyCausalLM
    points = {t["extra_data"]["test"]: (t["score"], t["max_score"]) for t in document["tests"]}
    for key, (score, most) in points.items():
        if key.startswith(("hidden/test_loss.py", "hidden/test_generate.py", "hidden/test_block.py")):
            assert score == most, (key, points)
