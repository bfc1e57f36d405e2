"""The same submission gets the same points, names and kinds whatever the machine's settings.

The grader pins the numerics of every process that computes a graded value (``autograder/grading/numerics.py``):
a submission whose result sits on a knife edge (``cumsum <= top_p``, true or false by one rounding of the
softmax's sum, which AVX-512 and AVX2 kernels round differently) is graded alike under other kernels,
thread counts and hash seeds. The whole catalogue is compared the same way by ``make determinism``
(``autograder/release/determinism.py``), which CI runs after the release.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import KIT, reference_source, validate_results

from autograder.release.determinism import outcome

# A proof of the kit's design rather than a unit of it: run by `make proofs` (CI), kept out of `make test`'s
# four minutes.
pytestmark = pytest.mark.proof

KNIFE_EDGE = """

_reference_next_token_probs = next_token_probs


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    import torch
    print("numerics:", torch.backends.cpu.get_cpu_capability(), torch.get_num_threads())
    if temperature == 0 or top_p is None or not 0 < top_p <= 1:
        return _reference_next_token_probs(logits, temperature, top_k, top_p)
    probs = _reference_next_token_probs(logits, temperature, top_k, None)
    sorted_probs, order = probs.sort(dim=-1, descending=True, stable=True)
    keep_sorted = sorted_probs.cumsum(dim=-1) <= top_p          # the knife edge at top_p = 1.0
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    probs = torch.where(keep, probs, torch.zeros_like(probs))
    return probs / probs.sum(dim=-1, keepdim=True)              # 0/0 = NaN where nothing is kept
"""
TESTS = ["hidden/test_sampling.py::test_top_p_matches_reference", "hidden/test_sampling.py::test_single_token_exact"]
SETTINGS = [
    {},
    {
        "ATEN_CPU_CAPABILITY": "default",
        "OMP_NUM_THREADS": "2",
        "MKL_NUM_THREADS": "2",
        "PYTHONHASHSEED": "7",
        "MKL_CBWR": "AUTO",
        "ONEDNN_MAX_CPU_ISA": "ALL",
    },
]


def _grade(tmp_path, settings: dict, name: str) -> dict:
    upload = tmp_path / name
    upload.mkdir()
    (upload / "decoding.py").write_text(reference_source("decoding") + KNIFE_EDGE)
    results = tmp_path / f"{name}.json"
    jobs = tmp_path / f"{name}-jobs.json"
    jobs.write_text(json.dumps([[str(upload), str(results), {"only": TESTS}]]))
    env = {**os.environ, **settings}
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "grade-many", "decoding", str(jobs)],
        cwd=KIT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    document = json.loads(results.read_text())
    validate_results(document)
    return document


def test_a_knife_edge_submission_grades_alike_under_other_kernels_threads_and_hash_seeds(tmp_path):
    documents = [_grade(tmp_path, settings, f"run{i}") for i, settings in enumerate(SETTINGS)]
    assert outcome(documents[0]) == outcome(documents[1])
    assert [t["output"] for t in documents[0]["tests"]] == [t["output"] for t in documents[1]["tests"]]
    assert documents[0]["score"] < sum(t["max_score"] for t in documents[0]["tests"])  # it is wrong, and caught
    printed = "\n".join(t["output"] for d in documents for t in d["tests"])
    # the student's worker computes on the pinned kernels with one thread, whatever the machine's settings
    assert "numerics: AVX2 1" in printed or "numerics: DEFAULT 1" in printed, printed[-2000:]
    assert "AVX512" not in printed
