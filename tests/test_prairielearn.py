"""PrairieLearn, tested as it runs: the release's prairielearn/ folder grading in simulated /grade trees.

Each grading lays out a grade root as PrairieLearn's grader host does (autograder/platforms/
prairielearn_sim.py) and runs info.json's entrypoint, run_grader.sh, with this environment's python3
(the Docker image itself is `make gradescope-image`'s, tests/prairielearn_image.py). What is proved:
the reference scores 1.0 and the stub 0.0; an upload that cannot be graded (a syntax error, no
attention.py) is `gradable: false`, costing no attempt; a catalogued mistake is named; a hang and a
memory bomb are bounded with namespaces and without (KIT_NO_NAMESPACES=1, as in a Docker container
without CAP_SYS_ADMIN); and PrairieLearn's points and words equal Gradescope's for the same file.
Each grading runs once per test run, shared by the xdist workers (conftest.once_per_run).
"""

from __future__ import annotations

import json
import shutil
import stat
import tempfile
import time
from pathlib import Path

import pytest
from conftest import KIT, install_copy, once_per_run, reference_source, stub_source, validate_results

from autograder.catalogue import read_catalogue, submission_source
from autograder.config import load_assignment
from autograder.platforms.prairielearn import START_MARGIN_S, grading_timeout
from autograder.release import gradescope_sim, prairielearn_sim
from autograder.release.prairielearn_question import prairielearn_files, write_tree
from autograder.sandbox import running_as_root

ASSIGNMENT = load_assignment("attention", KIT)
MISTAKE = next(e for e in read_catalogue(ASSIGNMENT, "mistake") if e.name == "no_scaling")
REFERENCE = reference_source("attention")
HANG_AND_BOMB = (
    REFERENCE
    + "\n\ndef causal_mask(n):\n    while True:\n        pass\n"
    + "\n\ndef padding_mask(lengths, n):\n    hog = [bytearray(64 << 20) for _ in range(48)]  # 3 GB\n    return hog\n"
)
SUBMISSIONS = {
    "reference": {"attention.py": REFERENCE},
    "stub": {"attention.py": stub_source("attention")},
    "syntax-error": {"attention.py": REFERENCE + "\n\ndef broken(:\n    pass\n"},
    "no-module": {"notes.txt": "my attention code is in another file\n"},
    "mistake": {"attention.py": submission_source(ASSIGNMENT, MISTAKE)},
    "hang-and-bomb": {"attention.py": HANG_AND_BOMB},
}
ENVIRONMENTS = {"namespaces": {}, "no-namespaces": {"KIT_NO_NAMESPACES": "1"}}
PRIVATE = ("", "results", "student", "tests", "serverFilesCourse", "data")  # "" is the grade root itself
# Whole gradings in a simulated /grade tree: `make proofs` (the release self-checks the reference and the stub
# there on every `make release`).
pytestmark = pytest.mark.proof
root_only = pytest.mark.skipif(not running_as_root(), reason="grading as root: the worker's own user, private folders")


def _grade(folder: Path, label: str, environment: str) -> None:
    """One PrairieLearn job of SUBMISSIONS[label] in a fresh grade root (0755 parent, as /grade's);
    keeps the results, the exit status, the time and the grader's folders' modes in graded.json."""
    tree = write_tree(prairielearn_files(ASSIGNMENT, stub_source("attention")), folder / "tree")
    root = Path(tempfile.mkdtemp(prefix="kit-grade-root-")) / "grade"
    try:
        upload = {name: text.encode() for name, text in SUBMISSIONS[label].items()}
        entrypoint = prairielearn_sim.lay_out(tree, "attention", upload, root)
        started = time.monotonic()
        proc = prairielearn_sim.run(root, entrypoint, extra_env=ENVIRONMENTS[environment])
        results = root / "results" / "results.json"
        graded = {
            "status": proc.returncode,
            "seconds": time.monotonic() - started,
            "bytes": results.stat().st_size,
            "results": json.loads(results.read_text()),
            "modes": {name: stat.S_IMODE((root / name).stat().st_mode) for name in PRIVATE},
            "log": proc.stderr[-3000:],
        }
        (folder / "graded.json").write_text(json.dumps(graded))
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)
        shutil.rmtree(folder / "tree", ignore_errors=True)


@pytest.fixture(scope="module")
def graded(tmp_path_factory, worker_id):
    """graded(label, environment="namespaces"): that grading's record (graded once per test run)."""

    def get(label: str, environment: str = "namespaces") -> dict:
        name = f"prairielearn-{label}-{environment}"
        folder = once_per_run(tmp_path_factory, worker_id, name, lambda f: _grade(f, label, environment))
        record = json.loads((folder / "graded.json").read_text())
        assert record["status"] == 0, f"PrairieLearn reads results only after exit 0:\n{record['log']}"
        assert record["bytes"] < 1024 * 1024, "PrairieLearn refuses results over 1 MB"
        assert_prairielearn_schema(record["results"])
        return record

    return get


def assert_prairielearn_schema(doc: dict) -> None:
    """results.json as PrairieLearn's grader results and pl-external-grader-results read it."""
    assert isinstance(doc["gradable"], bool) and isinstance(doc["message"], str) and isinstance(doc["output"], str)
    assert isinstance(doc["score"], float) and 0.0 <= doc["score"] <= 1.0
    for test in doc["tests"]:
        assert set(test) == {"name", "description", "points", "max_points", "message", "output"}
        assert 0 <= test["points"] <= test["max_points"]
    if not doc["gradable"]:
        assert doc["format_errors"] and all(isinstance(e, str) for e in doc["format_errors"])


def lost(doc: dict) -> set[str]:
    return {t["name"].split(":")[0] for t in doc["tests"] if t["points"] < t["max_points"]}


def test_the_reference_scores_1_with_the_graders_folders_private(graded):
    record = graded("reference")
    doc = record["results"]
    assert doc["gradable"] is True and doc["score"] == 1.0 and not lost(doc)
    assert doc["message"].startswith("100.00 / 100 points.")
    if running_as_root():
        assert record["modes"] == {name: 0o700 for name in PRIVATE}, record["modes"]


def test_the_stub_scores_0(graded):
    doc = graded("stub")["results"]
    assert doc["gradable"] is True and doc["score"] == 0.0
    assert lost(doc) == {"scaled_dot_product_attention", "softmax", "causal_mask", "padding_mask"}


def test_a_syntax_error_is_not_gradable(graded):
    doc = graded("syntax-error")["results"]
    assert doc["gradable"] is False and doc["tests"] == []
    assert "SyntaxError" in doc["format_errors"][0] and "does not use up an attempt" in doc["format_errors"][0]


def test_an_upload_without_the_module_is_not_gradable(graded):
    doc = graded("no-module")["results"]
    assert doc["gradable"] is False and doc["tests"] == []
    assert "attention.py" in doc["format_errors"][0]


@pytest.mark.proof
def test_a_catalogued_mistake_is_named(graded):
    doc = graded("mistake")["results"]
    assert doc["gradable"] is True and 0.0 < doc["score"] < 1.0
    words = [t["message"] + "\n" + t["output"] for t in doc["tests"] if t["points"] < t["max_points"]]
    assert any(MISTAKE.title in text for text in words), f"{MISTAKE.title!r} is not named in a failed test"


@pytest.mark.proof
@root_only
@pytest.mark.parametrize("environment", list(ENVIRONMENTS))
def test_a_hang_and_a_memory_bomb_are_bounded(graded, environment):
    record = graded("hang-and-bomb", environment)
    doc = record["results"]
    assert doc["gradable"] is True and 0.0 < doc["score"] < 1.0
    assert lost(doc) == {"causal_mask", "padding_mask"}, "only the two attacking functions lose points"
    outputs = {
        t["name"].split(":")[0]: t["output"]
        for t in doc["tests"]
        if t["description"].startswith("public") and t["points"] < t["max_points"]
    }
    assert "time limit" in outputs["causal_mask"]
    assert "memory" in outputs["padding_mask"] or "MemoryError" in outputs["padding_mask"]
    limit = grading_timeout(ASSIGNMENT) - START_MARGIN_S  # the last resort's moment, before PrairieLearn's kill
    assert record["seconds"] < limit, f"grading took {record['seconds']:.0f} s (limit {limit} s)"


@pytest.mark.proof
@pytest.mark.parametrize("label", ["reference", "mistake"])
def test_prairielearn_points_and_words_equal_gradescopes(graded, installed_tree, tmp_path, label):
    """One source of words: the same submission through both simulated platforms gives the same
    score (PrairieLearn's times 100), the same points per test and the same visible feedback."""
    prairielearn = graded(label)["results"]
    root = install_copy(installed_tree, tmp_path / "autograder", {"attention.py": SUBMISSIONS[label]["attention.py"].encode()})
    gradescope_sim.run_autograder(root)
    gradescope = json.loads((root / "results" / "results.json").read_text())
    validate_results(gradescope)
    assert round(prairielearn["score"] * 100, 2) == gradescope["score"]
    assert [(t["name"], t["points"], t["max_points"]) for t in prairielearn["tests"]] == [
        (t["name"], t["score"], t["max_score"]) for t in gradescope["tests"]
    ]
    visible = [t["output"] for t in gradescope["tests"] if t["visibility"] == "visible"]
    assert [t["output"] for t in prairielearn["tests"] if t["description"].startswith("public")] == visible
    assert prairielearn["message"] == gradescope["output"].split("\n\n", 1)[0]
