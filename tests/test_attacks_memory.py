"""The grader's own memory is counted per test, not per answer.

An answer may be up to 48 MB (``sandbox/channel.py``), but a test may ask for many: the decoding
test that reads ``cache.keys`` and ``cache.values`` after each of five steps clones ten answers
before its first check. A submission whose cache pads every such answer to 32 MB once took the
grader to 1.5 GB: the seam kept every tensor it decoded for the rest of the test (``recipes.returned``,
the provenance registry), beside the test's own clones. Now nothing the worker returned is kept by
the seam beyond what the test holds, and the answers of one test may come to at most
``seam.ANSWER_BYTES_PER_TEST``: past it the test fails as "memory", and the grading goes on.

Graded through the Gradescope entry point (``run_autograder`` in a simulated tree), as root, with
namespaces available and refused (``KIT_NO_NAMESPACES=1``); the grader's peak is the PSS of its own
(root-owned) processes, as ``test_attacks.run_watched`` measures it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import weakref
from pathlib import Path

import pytest
import torch
from conftest import KIT, once_per_run, reference_source, validate_results
from test_attacks import GRADER_MB, run_watched

from autograder.config import load_assignment
from autograder.context import call_that_produced, per_test
from autograder.grading import seam
from autograder.grading.seam import ANSWER_BYTES_PER_TEST
from autograder.release import gradescope_sim
from autograder.release.zips import autograder_files, make_zip
from autograder.sandbox import running_as_root
from autograder.worker import wire

pytestmark = [
    pytest.mark.skipif(not running_as_root(), reason="attacks are graded as root, as on Gradescope and CI"),
    pytest.mark.proof,
]

ATTACKED = "hidden/test_cache.py::test_cache_never_changes_earlier_entries"
PAD = """

# Every answer that reads the cache's keys or values carries 32 MB more: a 4M-entry float64 tensor, made once
# (under the 48 MB an answer may hold). The worker's encoder writes a tensor's own bytes into the answer pipe
# (wire.frame: no copy, no base64), so the padding needs nothing more than the tensor. The test clones ten
# such answers before its first check.
_PAD = torch.zeros(4 * 2**20, dtype=torch.float64)


class KVCache(KVCache):
    keys = property(lambda self: [*self._k, _PAD])
    values = property(lambda self: [*self._v, _PAD])
"""


def _padded_cache() -> str:
    """The decoding reference whose KVCache stores its lists as ``_k``/``_v`` and answers with them padded."""
    return reference_source("decoding").replace("self.keys", "self._k").replace("self.values", "self._v") + PAD


@pytest.fixture(scope="session")
def decoding_tree(tmp_path_factory, worker_id) -> Path:
    """An /autograder tree (decoding) after setup.sh, copied for each grading (as conftest's installed_tree)."""

    def install(folder: Path) -> None:
        path = folder / "autograder.zip"
        path.write_bytes(make_zip(autograder_files(load_assignment("decoding", KIT))))
        root = folder / "autograder"
        gradescope_sim.lay_out(path, {}, root)
        env = gradescope_sim.environment(root)
        setup = subprocess.run(["bash", str(root / "source" / "setup.sh")], cwd=root / "source", env=env, capture_output=True)
        assert setup.returncode == 0, setup.stderr[-2000:]

    return once_per_run(tmp_path_factory, worker_id, "installed-decoding", install) / "autograder"


def _grade(tree: Path, source: str, namespaces: bool) -> tuple[dict, float, float]:
    """Grade ``source`` through run_autograder in a copy of ``tree``: (results.json, seconds, the grader's peak MB)."""
    parent = Path(tempfile.mkdtemp(prefix="kit-memory-"))
    try:
        parent.chmod(0o755)
        root = parent / "autograder"
        shutil.copytree(tree, root, symlinks=True)
        (root / "submission" / "decoding.py").write_text(source)
        env = gradescope_sim.environment(root)
        if not namespaces:
            env["KIT_NO_NAMESPACES"] = "1"
        _, seconds, peak = run_watched([str(root / "run_autograder")], cwd=root, env=env)
        document = json.loads((root / "results" / "results.json").read_text())
        validate_results(document)
        return document, seconds, peak
    finally:
        shutil.rmtree(parent, ignore_errors=True)


_reference_scores: dict[str, float] = {}


def _scores(document: dict) -> dict[str, float]:
    return {t["name"]: t["score"] for t in document["tests"]}


@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "no-namespaces"])
def test_answers_of_32_mb_cloned_in_one_test_keep_the_grader_small(decoding_tree, namespaces):
    """The attacked test fails as "memory" once its answers pass the per-test room; the grader stays under
    600 MB; every other test scores what the same code without the padding scores (graded once)."""
    document, seconds, peak = _grade(decoding_tree, _padded_cache(), namespaces)
    print(f"grading took {seconds:.0f} s; the grader's peak: {peak:.0f} MB")
    assert peak < GRADER_MB, f"the grader used {peak:.0f} MB"
    attacked = [t for t in document["tests"] if t["extra_data"]["test"] == ATTACKED]
    assert attacked and all(t["extra_data"]["kind"] == "memory" for t in attacked), [t["output"][:300] for t in attacked]
    assert all(f"more than {ANSWER_BYTES_PER_TEST // 2**20} MB in total" in t["output"] for t in attacked), attacked[0]["output"]
    if not _reference_scores:
        _reference_scores.update(_scores(_grade(decoding_tree, reference_source("decoding"), True)[0]))
    others = {name: score for name, score in _scores(document).items() if name not in {t["name"] for t in attacked}}
    assert others == {name: _reference_scores[name] for name in others}, "only the attacked test loses points"


class _FakeWorker:
    """A worker whose ``f`` answers every call with the same 10 MB tensor (the seam's side only)."""

    ANSWER = wire.encode(torch.zeros(10 * 2**20, dtype=torch.uint8))

    def __init__(self, *args, **kwargs) -> None:
        self.output = None

    def start(self) -> None:
        pass

    def alive(self) -> bool:
        return True

    def kill(self) -> None:
        pass

    def request(self, message: dict, limit) -> dict:
        if message["op"] == "load":
            return {"ok": wire.encode({"names": ["f"]}), "banned": []}
        if message["op"] == "getattr":
            return {"ok": {"__ref__": 1, "type": "function"}, "banned": []}
        return {"ok": self.ANSWER, "banned": []}


def test_the_seam_keeps_no_answer_and_counts_a_tests_answers_together(monkeypatch, tmp_path):
    """In the grader's process: each answer (recorded by the provenance registry and as the worker's by
    recipes.returned) is freed as soon as the test drops it; past the test's room the next answer fails
    as "memory"; the next test has a room of its own."""
    monkeypatch.setattr(seam, "Worker", _FakeWorker)
    student = seam.RemoteStudent("toy", tmp_path / "toy.py")
    fits = ANSWER_BYTES_PER_TEST // (10 * 2**20)
    with student.deadlines(seam.Deadlines()), per_test():
        f = student.f
        for _ in range(fits):
            value = f(torch.ones(3))
            assert value.shape == (10 * 2**20,) and call_that_produced(value)["fn"] == "f"
            freed = weakref.ref(value)
            del value
            assert freed() is None, "the seam, the provenance registry or the recipes kept an answer"
        with pytest.raises(seam.StudentCodeError) as failure:
            f(torch.ones(3))
        assert failure.value.kind == "memory" and f"more than {ANSWER_BYTES_PER_TEST // 2**20} MB in total" in str(failure.value)
    assert "f" not in student.stopped, "not the function's fault in later tests"
    with student.deadlines(seam.Deadlines()), per_test():
        assert student.f(torch.ones(3)).shape == (10 * 2**20,)
