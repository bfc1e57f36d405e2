"""Numbers the handouts and notebooks quote from the kit's own runs, generated from the reference.

A handout or notebook writes ``{{name}}`` where a measured number goes; the release fills it
from ``assignments/<a>/numbers.json``, which this module writes by running ``assignments/<a>/numbers.py``
(the assignment's own runs: the engine knows no assignment) on the reference
under the settings the text states (one CPU thread, the pinned torch). The file records a
fingerprint of what the numbers depend on (the reference, the run's code, the torch version):
``python -m autograder release`` recomputes them when it changed, so text and code cannot
drift, and a kit test fails when the committed file is stale.

``python -m autograder.release.handout_numbers <assignment>`` recomputes one assignment's numbers.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

from ..config import Assignment, ConfigError
from ..grading.numerics import PINNED_ENV

PLACEHOLDER = re.compile(r"\{\{([a-z0-9_]+)\}\}")
NUMBERS_FILE = "numbers.json"


def _reference(assignment: Assignment):
    spec = importlib.util.spec_from_file_location(f"_numbers_{assignment.module}", assignment.solution)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the runs: assignments/<a>/numbers.py defines numbers(reference) -> {placeholder: text} ------------
RUNS_FILE = "numbers.py"


def runs_file(assignment: Assignment) -> Path | None:
    path = assignment.root / RUNS_FILE
    return path if path.is_file() else None


def _run(assignment: Assignment) -> dict[str, str]:
    spec = importlib.util.spec_from_file_location(f"_numbers_runs_{assignment.name}", runs_file(assignment))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.numbers(_reference(assignment))


# -- the cache in assignments/<a>/numbers.json ---------------------------------------
def fingerprint(assignment: Assignment) -> str:
    import torch

    h = hashlib.sha256()
    h.update(assignment.solution.read_bytes())
    h.update(runs_file(assignment).read_bytes())  # the run and its settings
    h.update(torch.__version__.encode())
    h.update(json.dumps(PINNED_ENV, sort_keys=True).encode())  # the kernels the numbers were measured on
    return h.hexdigest()[:16]


def stored_numbers(assignment: Assignment) -> dict:
    path = assignment.root / NUMBERS_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def is_stale(assignment: Assignment) -> bool:
    if runs_file(assignment) is None:
        return False
    return stored_numbers(assignment).get("fingerprint") != fingerprint(assignment)


def regenerate(assignment: Assignment) -> dict[str, str]:
    """Run the reference in a fresh one-thread interpreter and write numbers.json."""
    print(f"[{assignment.name}] generating the handout's numbers from the reference (one thread)...", flush=True)
    proc = subprocess.run(
        [sys.executable, "-m", "autograder.release.handout_numbers", assignment.name, "--print"],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "OMP_NUM_THREADS": "1"},
        cwd=str(Path(__file__).resolve().parents[2]),
    )
    if proc.returncode != 0:
        raise ConfigError(f"{assignment.name}: generating the handout's numbers failed:\n{proc.stderr[-2000:]}")
    values = json.loads(proc.stdout.strip().splitlines()[-1])
    document = {"fingerprint": fingerprint(assignment), "generated_by": "python -m autograder.release.handout_numbers", **values}
    (assignment.root / NUMBERS_FILE).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    return values


def fill_numbers(assignment: Assignment, text: str, refresh: bool = False) -> str:
    """``text`` with every ``{{name}}`` replaced by the reference's number (regenerated if ``refresh``)."""
    if not PLACEHOLDER.search(text):
        return text
    if refresh and is_stale(assignment):
        regenerate(assignment)
    values = stored_numbers(assignment)

    def value(match: re.Match) -> str:
        if match.group(1) not in values:
            raise ConfigError(
                f"{assignment.name}: the text quotes {{{{{match.group(1)}}}}}, which "
                f"{assignment.root / NUMBERS_FILE} does not have (run python -m autograder.release.handout_numbers {assignment.name})"
            )
        return str(values[match.group(1)])

    return PLACEHOLDER.sub(value, text)


def main(argv: list[str]) -> int:
    from ..config import load_assignment

    assignment = load_assignment(argv[0])
    if "--print" in argv:
        import torch

        torch.set_num_threads(1)
        print(json.dumps(_run(assignment)))
        return 0
    values = regenerate(assignment)
    for key, text in values.items():
        print(f"{key}:\n{text}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
