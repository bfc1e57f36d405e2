"""The red team on PrairieLearn's path: the same attacks through ``run_grader.sh`` in a simulated /grade tree.

A representative set of the attacks graded through Gradescope's entry point and grade-all
(tests/test_attacks.py, test_attacks_processes.py's checks, test_isolation.py's attacks on the
grading tree), their sources reused, each graded as root through PrairieLearn's entrypoint
(autograder/release/prairielearn_sim.py lays out the grade root and runs info.json's entrypoint
with ``PL_GRADE_ROOT``), with namespaces and where they are refused (``KIT_NO_NAMESPACES=1``, as in a
Docker container without CAP_SYS_ADMIN, PrairieLearn's usual case): a hang on the grader's channel,
memory no RSS shows, a fork bomb that keeps changing its pid, sleepers in sessions of their own, an
answer flood and a forged answer on the channel, ten megabytes printed at import, bytes that are
not UTF-8, the disk filled, results.json forged (and the grader killed), and the grade root searched
for the reference and the hidden tests (PrairieLearn mounts both under /grade).

For each: the entrypoint exits 0 with a results.json under PrairieLearn's 1 MB, valid UTF-8 JSON in
its schema and gradable; the engine's document beside it (``results/gradescope.json``) passes the
Gradescope attack's own checks (the score is 0 or exactly what the honest part earns, the attacked
function named, no grader file in the words); PrairieLearn's score is that score over the total, its
points per test and its shown words are the same, and its summary line says the score; grading ends
before the last resort; the grader's own processes stay under 600 MB; nothing the attack started is
left.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from conftest import KIT, once_per_run, reference_source
from test_attacks import (
    ATTACKS,
    BUDGET_S,
    GRADER_MB,
    REFERENCE_MARKER,
    STUB,
    build_tagged,
    check_document,
    check_partial,
    leftovers,
    new_tag,
    run_watched,
)
from test_attacks import lost as lost_functions
from test_isolation import ATTACKS as TREE_ATTACKS
from test_isolation import FLOOD, FORGED_RESULTS, FORK, GRADER_FILES
from test_prairielearn import assert_prairielearn_schema

from autograder.config import load_assignment
from autograder.platforms.prairielearn import START_MARGIN_S, grading_timeout
from autograder.release import prairielearn_sim
from autograder.release.markers import make_stub
from autograder.release.prairielearn_question import (
    package_name,
    prairielearn_files,
    write_tree,
)
from autograder.sandbox import namespaces_available, running_as_root

pytestmark = [
    pytest.mark.skipif(not running_as_root(), reason="attacks are graded as root, as PrairieLearn's graders run"),
    pytest.mark.proof,
]

ASSIGNMENT = load_assignment("attention", KIT)
LAST_RESORT_S = grading_timeout(ASSIGNMENT) - START_MARGIN_S
FORK_NAME = "kitforkbomb"  # the process name test_isolation's fork bomb gives its sleepers


def _source(text: str):
    """An attack given as a source: the upload's attention.py, ``@ROOT@`` the grade root (the attacker
    knows PrairieLearn's layout), the fork bomb's process name the grading's tag."""

    def build(folder: Path, kit: Path) -> None:
        (folder / "attention.py").write_text(text.replace("@ROOT@", str(folder.parent)).replace(FORK_NAME, "@TAG@"))

    return build


def _check_forged(pl: dict, gs: dict) -> None:
    assert len(gs["tests"]) > 0, "the grader must survive and write real results"


def _check_grader_files(pl: dict, gs: dict) -> None:
    text = json.dumps(pl) + json.dumps(gs)
    assert "[points]" not in text, "assignment.toml reached the output"
    causal = sum(t["max_score"] for t in gs["tests"] if t["name"].startswith("causal_mask"))
    assert gs["score"] <= causal + 1e-6, "only the honestly written causal_mask may earn points"


def _check_flood(pl: dict, gs: dict) -> None:
    assert len(json.dumps(pl)) < 100_000, "ten megabytes printed stay out of the results"


def _check_fork(pl: dict, gs: dict) -> None:
    lost = lost_functions(gs)
    assert "causal_mask" in lost and "softmax" not in lost, lost
    text = "".join(t["output"] for t in gs["tests"])
    assert "STARTED" in text or "processes" in text or "MB of memory" in text, "the attack should have started processes"


# name: (how to lay out the upload, the score of its honest part or None, a check of (PrairieLearn's, the engine's))
PL_ATTACKS = {
    **{name: (*ATTACKS[name], None) for name in ("pipe_stall", "shm_hold", "fork_hop", "answer_flood", "answer_bomb")},
    **{name: (*ATTACKS[name], None) for name in ("bad_text", "disk_fill", "secrets")},
    "forged_results": (_source(STUB + FORGED_RESULTS), 0, _check_forged),
    "grader_files": (_source(STUB + GRADER_FILES), None, _check_grader_files),
    "print_flood": (_source(TREE_ATTACKS[FLOOD]), 100, _check_flood),
    "fork_sleepers": (_source(TREE_ATTACKS[FORK]), None, _check_fork),
}
ENVIRONMENTS = {"namespaces": {}, "no-namespaces": {"KIT_NO_NAMESPACES": "1"}}
SCORE_LINE = re.compile(r"^\d+(\.\d+)? / \d+(\.\d+)? points\.")


@pytest.fixture(scope="session")
def question_tree(tmp_path_factory, worker_id) -> Path:
    """attention's prairielearn/ folder, written once per test run (each grading copies it into its grade root)."""

    def write(folder: Path) -> None:
        write_tree(prairielearn_files(ASSIGNMENT, make_stub(reference_source("attention"))), folder / "tree")

    return once_per_run(tmp_path_factory, worker_id, "prairielearn-attack-tree", write) / "tree"


def wait_for_no_leftovers(tag: str, seconds: float = 3.0) -> list[str]:
    """What is left of the attack after a short grace (a killed process may take a moment to leave /proc)."""
    deadline = time.monotonic() + seconds
    while (found := leftovers(tag) + _tasks(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def _tasks(tag: str) -> list[str]:
    """Live threads named ``tag`` (a process whose leader has gone keeps its threads' names)."""
    found = []
    for p in psutil.process_iter(["pid"]):
        try:
            for thread in p.threads():
                comm = Path(f"/proc/{p.pid}/task/{thread.id}/comm").read_text().strip()
                if comm == tag and Path(f"/proc/{p.pid}/task/{thread.id}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
                    found.append(f"{p.pid}/{thread.id}")
        except (psutil.Error, OSError):
            continue
    return found


@pytest.mark.parametrize("environment", list(ENVIRONMENTS))
@pytest.mark.parametrize("name", sorted(PL_ATTACKS))
def test_attack_through_prairielearn(name, environment, question_tree):
    if environment == "namespaces" and not namespaces_available():
        pytest.skip("namespaces are not allowed here")
    build, honest, check = PL_ATTACKS[name]
    parent = Path(tempfile.mkdtemp(prefix="kit-pl-attack-"))
    tag = new_tag(name)
    try:
        parent.chmod(0o755)  # as /grade's parent: only the grader's own 0700 folders stand in the way
        root = parent / "grade"
        entrypoint = prairielearn_sim.lay_out(question_tree, ASSIGNMENT.name, {}, root)
        build_tagged(build, root / "student", root / "serverFilesCourse" / package_name(ASSIGNMENT), tag)
        env = prairielearn_sim.environment(root)
        env.pop("KIT_NO_NAMESPACES", None)
        env.update(ENVIRONMENTS[environment])
        entrypoint.chmod(0o755)
        result, seconds, peak = run_watched([str(entrypoint)], cwd=root, env=env)
        assert result.returncode == 0, f"{name}: PrairieLearn reads results only after exit 0:\n{result.stdout[-3000:]}"
        assert seconds < min(BUDGET_S, LAST_RESORT_S), f"{name}: grading took {seconds:.0f} s"
        assert peak < GRADER_MB, f"{name}: the grader used {peak:.0f} MB"
        raw = (root / "results" / "results.json").read_bytes()
        assert len(raw) < 1024 * 1024, f"{name}: results.json is {len(raw)} bytes, over PrairieLearn's 1 MB"
        prairielearn = json.loads(raw.decode("utf-8"))  # strict: must be valid UTF-8
        assert_prairielearn_schema(prairielearn)
        gradescope = check_document(name, (root / "results" / "gradescope.json").read_bytes(), honest)
        check_partial(name, gradescope)
        compare(name, prairielearn, gradescope)
        if check is not None:
            check(prairielearn, gradescope)
        assert not (left := wait_for_no_leftovers(tag)), f"{name}: left behind {left[:20]}"
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def compare(name: str, prairielearn: dict, gradescope: dict) -> None:
    """PrairieLearn's results say what the engine's say: gradable, the score over the total, the same
    points per test and shown words, a summary that starts with the score; no grader file in them."""
    assert prairielearn["gradable"] is True, f"{name}: an attack is graded, not excused: {prairielearn['message']}"
    assert abs(prairielearn["score"] * ASSIGNMENT.total_points - gradescope["score"]) < 0.01, (
        f"{name}: PrairieLearn {prairielearn['score']} against the engine's {gradescope['score']}"
    )
    assert [(t["name"], t["points"], t["max_points"]) for t in prairielearn["tests"]] == [
        (t["name"], t["score"], t["max_score"]) for t in gradescope["tests"]
    ], f"{name}: the points per test differ"
    shown = [t["output"] for t in gradescope["tests"] if t["visibility"] == "visible"]
    assert [t["output"] for t in prairielearn["tests"] if t["description"].startswith("public")] == shown, (
        f"{name}: the shown feedback differs"
    )
    assert SCORE_LINE.match(prairielearn["message"]), (
        f"{name}: the summary does not start with the score: {prairielearn['message'][:200]!r}"
    )
    text = prairielearn["message"] + prairielearn["output"] + "".join(t["output"] + t["name"] for t in prairielearn["tests"])
    assert REFERENCE_MARKER not in text and "LEAK" not in text, f"{name}: grader files reached PrairieLearn's output"
