"""No flakes: the reference passes every test under 20 different input seeds (the `seeds` command
shifts every test's seed). Run in-process (`python -m autograder seeds`): the point is the tests'
numerical robustness; isolation is tested elsewhere.

`make test` runs a few other seeds per suite (1 for the training-heavy ones, about 15 s of CPU per
seed; 4 for the others) to keep the kit's tests short; `make flakes` runs 20 seeds for every
suite (about 10 minutes on 2 cores: run it before releasing a change to any test).
"""

import os

from conftest import run_cli

HEAVY = {"transformer", "seq2seq"}


def test_reference_passes_under_many_seeds(assignment_name):
    count = int(os.environ.get("KIT_FLAKE_SEEDS", "0")) or (1 if assignment_name in HEAVY else 4)
    proc = run_cli("seeds", assignment_name, "--count", str(count), timeout=1500)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert f"under {count} of {count} seeds" in proc.stdout
