"""A crash on one input costs the tests it crashed in, through the CLI: the function runs again, in a fresh
worker, in the tests after (seam.CRASH_RETRIES; tests/unit/test_seam_crashes.py is the fast check)."""

from __future__ import annotations

import pytest
from conftest import grade, reference_source, write_submission

pytestmark = pytest.mark.proof  # a whole grading with two worker crashes: `make proofs`

CRASH_SHAPE = (5, 2, 9)  # softmax's input in test_properties only (its float32 and float64 cases)


def test_a_function_that_exits_on_one_input_shape_loses_only_those_tests(tmp_path):
    source = reference_source("attention").replace(
        '    """Numerically stable softmax',
        f'    if tuple(x.shape) == {CRASH_SHAPE}:\n        import os\n\n        os._exit(1)\n    """Numerically stable softmax',
        1,
    )
    assert "os._exit" in source
    document = grade("attention", write_submission(tmp_path / "crash", "attention", source), tmp_path)
    lost = [t for t in document["tests"] if t["score"] < t["max_score"]]
    assert {t["extra_data"]["test"] for t in lost} == {"hidden/test_softmax.py::test_properties"}, [t["name"] for t in lost]
    assert all(t["extra_data"]["kind"] == "crash" for t in lost), [t["extra_data"]["kind"] for t in lost]
    assert not any("not run again" in t["output"] for t in document["tests"])
    assert document["score"] == 100 - sum(t["max_score"] for t in lost) > 90
