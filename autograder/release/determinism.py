"""The release's proofs are the same on every machine: grade the catalogue again under other settings.

``python -m autograder determinism [assignment ...]`` (``make determinism``, run by CI after
``make release``) grades everything the self-check grades (stub, do-nothing, every mistake,
variant and corpus entry) again, without the cache, under settings a grading machine may differ
in, and compares each grading's outcome with the release's own (from the self-check's cache):
the points of every test, the total, the mistakes named and every test's outcome kind.

* ``pinned``: what an instructor's machine or Gradescope may set: other CPU kernels
  (``ATEN_CPU_CAPABILITY=default``), two OpenMP/MKL threads, another hash seed. The kit pins its
  numerics (``numerics.py``), so these must change nothing.
* ``unpinned``: the same with the pin switched off (``KIT_UNPINNED_NUMERICS=1``), two torch
  threads in the grader, and yet another hash seed: the tests themselves must not sit on a knife
  edge (a threshold compared exactly, a NaN sorted). A difference here names the grading to look at.

``python -m autograder seeds <assignment>`` (``make flakes``, :func:`reference_failures_by_seed`) is the
other side: the reference under many input seeds must pass every test.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from ..config import Assignment, load_assignment
from .catalogue_grading import DEFAULT_CACHE, catalogue_sources, grade_sources

SETTINGS: dict[str, dict[str, str]] = {
    "pinned": {"ATEN_CPU_CAPABILITY": "default", "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2", "PYTHONHASHSEED": "1"},
    "unpinned": {
        "KIT_UNPINNED_NUMERICS": "1",
        "ATEN_CPU_CAPABILITY": "default",
        "OMP_NUM_THREADS": "2",
        "MKL_NUM_THREADS": "2",
        "KIT_TORCH_THREADS": "2",
        "PYTHONHASHSEED": "2",
    },
}


def outcome(document: dict) -> dict:
    """What must not depend on the machine: total, each test's points and kind, the mistakes named."""
    tests = {}
    for t in document.get("tests", []):
        extra = t.get("extra_data", {})
        tests[t["name"]] = (t.get("score"), extra.get("kind"), tuple(sorted(extra.get("mistakes", []))))
    return {"score": document.get("score"), "tests": tests}


@contextmanager
def _environment(settings: dict[str, str]):
    saved = {k: os.environ.get(k) for k in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def differences(assignment: Assignment, settings: dict[str, str], baseline: dict[str, dict]) -> list[str]:
    sources, only, _ = catalogue_sources(assignment)
    with tempfile.TemporaryDirectory(prefix="kit-determinism-") as cache, _environment(settings):
        graded = grade_sources(assignment, sources, only=only, cache=Path(cache))
    found = []
    for label, document in graded.items():
        want, got = outcome(baseline[label]), outcome(document)
        if want == got:
            continue
        changed = [
            name for name in sorted(set(want["tests"]) | set(got["tests"])) if want["tests"].get(name) != got["tests"].get(name)
        ]
        found.append(
            f"{label}: score {want['score']} -> {got['score']}; "
            + "; ".join(f"{n}: {want['tests'].get(n)} -> {got['tests'].get(n)}" for n in changed[:4])
        )
    return found


def main(names: list[str], which: list[str]) -> int:
    failed = False
    for name in names:
        assignment = load_assignment(name)
        sources, only, _ = catalogue_sources(assignment)
        started = time.monotonic()
        baseline = grade_sources(assignment, sources, only=only, cache=DEFAULT_CACHE)  # the release's own gradings
        for setting in which:
            found = differences(assignment, SETTINGS[setting], baseline)
            print(
                f"[{name}] {setting} ({' '.join(f'{k}={v}' for k, v in SETTINGS[setting].items())}): "
                + (f"{len(found)} of {len(sources)} gradings differ" if found else f"all {len(sources)} gradings identical")
            )
            for line in found:
                print("    " + line)
            failed |= bool(found)
        print(f"[{name}] {time.monotonic() - started:.0f} s", file=sys.stderr)
    return 1 if failed else 0


def reference_failures_by_seed(assignment: Assignment, seeds: list[int]) -> dict[int, list[str]]:
    """Run the suites against the reference in this process (no worker: it is our own code)
    under each seed; return the failing tests per seed. The flake check (``seeds``, ``make flakes``)."""
    import pytest

    from ..grading.grade import forget_test_modules, pytest_args
    from ..grading.local import local_student
    from ..grading.scoring import ScoringPlugin

    failures: dict[int, list[str]] = {}
    sys.path.insert(0, str(assignment.tests_dir))
    try:
        for seed in seeds:
            student = local_student(assignment.module, assignment.solution, assignment.helpers)
            plugin = ScoringPlugin(assignment, student, run_deadline=float("inf"), seed_base=seed)
            forget_test_modules(assignment)
            pytest.main(pytest_args(assignment), plugins=[plugin])
            bad = [f"{r.name}: {r.message[:200]}" for r in plugin.results.values() if r.status != "passed"]
            failures[seed] = bad + plugin.config_errors
    finally:
        sys.path.remove(str(assignment.tests_dir))
    return failures
