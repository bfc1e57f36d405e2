"""Numbers the handouts and notebooks quote from the kit's own runs, generated from the reference.

A handout or notebook writes ``{{name}}`` where a measured number goes; the release fills it
from ``assignments/<a>/numbers.json``, which this module writes by running the reference
under the settings the text states (one CPU thread, the pinned torch). The file records a
fingerprint of what the numbers depend on (the reference, the run's code, the torch version):
``python -m autograder release`` recomputes them when it changed, so text and code cannot
drift, and a kit test fails when the committed file is stale.

``python -m autograder.handout_numbers <assignment>`` recomputes one assignment's numbers.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

from .config import Assignment, ConfigError

PLACEHOLDER = re.compile(r"\{\{([a-z0-9_]+)\}\}")
NUMBERS_FILE = "numbers.json"


def _reference(assignment: Assignment):
    spec = importlib.util.spec_from_file_location(f"_numbers_{assignment.module}", assignment.solution)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# -- the runs, one function per assignment: {placeholder: text} ------------------------
def seq2seq_numbers(assignment: Assignment) -> dict[str, str]:
    """The accuracy table (2,500 steps per length) and the notebook's short runs."""
    import torch

    ref = _reference(assignment)

    def run(length: int, steps: int) -> tuple[float, float, float]:
        torch.manual_seed(0)
        model = ref.AttnSeq2Seq()
        ref.train_copy(model, length, steps=steps, seed=0)
        src, tgt_in = ref.copy_batch(1000, length, torch.Generator().manual_seed(1234))
        model.eval()
        with torch.no_grad():
            forced = (model(src, tgt_in).argmax(-1) == src).float().mean().item()
            free = model.generate(src, length)
        return forced, (free == src).float().mean().item(), (free == src).all(dim=1).float().mean().item()

    rows = ["| sequence length | teacher-forced acc | free-running acc | whole sequence exact |", "| ---: | ---: | ---: | ---: |"]
    for length in (4, 8, 16, 32):
        forced, free, exact = run(length, 2500)
        rows.append(f"| {length} | {forced:.3f} | {free:.3f} | {exact:.3f} |")
    short = {length: run(length, steps)[1] for length, steps in ((4, 600), (8, 600), (16, 700))}
    return {
        "seq2seq_reference_table": "\n".join(rows),
        "seq2seq_short_runs": f"{short[4]:.3f}, {short[8]:.3f} and {short[16]:.3f}",
    }


def transformer_numbers(assignment: Assignment) -> dict[str, str]:
    """The lab's reference run, and the positional-encoding ablation on the counting task."""
    import torch

    ref = _reference(assignment)

    def run(make_data, positions: bool) -> tuple[float, tuple[float, int], list[int]]:
        g = torch.Generator().manual_seed(1)  # the lab notebook's data and model seeds
        train, val, test = make_data(256, g), make_data(64, g), make_data(128, g)
        torch.manual_seed(7)
        model = ref.TinyCausalLM(8)
        if not positions:
            model.positions = torch.zeros_like(model.positions)
        history = ref.train(model, train, val, epochs=25, lr=3e-3, batch_size=64, seed=0)
        model.eval()
        with torch.no_grad():
            test_loss = ref.lm_loss(model, test).item()
        best = history["best_epoch"]
        return test_loss, (history["val_loss"][best], best), ref.generate(model, torch.tensor([[2]]), 11)[0].tolist()

    counting_with, best, generated = run(ref.counting_data, True)
    counting_without = run(ref.counting_data, False)[0]
    return {
        "transformer_reference_run": (
            f"Validation-selected loss={best[0]:.4f} (epoch {best[1]}); test={counting_with:.4f}; uniform baseline=2.0794\n"
            f"Generated: {generated}"
        ),
        "transformer_pe_counting": f"test loss {counting_without:.4f} without positions, {counting_with:.4f} with them",
    }


GENERATORS = {"seq2seq": seq2seq_numbers, "transformer": transformer_numbers}


# -- the cache in assignments/<a>/numbers.json ---------------------------------------
def fingerprint(assignment: Assignment) -> str:
    import torch

    h = hashlib.sha256()
    h.update(assignment.solution.read_bytes())
    h.update(inspect.getsource(GENERATORS[assignment.name]).encode())  # the run and its settings
    h.update(torch.__version__.encode())
    return h.hexdigest()[:16]


def stored_numbers(assignment: Assignment) -> dict:
    path = assignment.root / NUMBERS_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def is_stale(assignment: Assignment) -> bool:
    if assignment.name not in GENERATORS:
        return False
    return stored_numbers(assignment).get("fingerprint") != fingerprint(assignment)


def regenerate(assignment: Assignment) -> dict[str, str]:
    """Run the reference in a fresh one-thread interpreter and write numbers.json."""
    print(f"[{assignment.name}] generating the handout's numbers from the reference (one thread)...", flush=True)
    proc = subprocess.run(
        [sys.executable, "-m", "autograder.handout_numbers", assignment.name, "--print"],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "OMP_NUM_THREADS": "1"},
        cwd=str(Path(__file__).resolve().parent.parent),
    )
    if proc.returncode != 0:
        raise ConfigError(f"{assignment.name}: generating the handout's numbers failed:\n{proc.stderr[-2000:]}")
    values = json.loads(proc.stdout.strip().splitlines()[-1])
    document = {"fingerprint": fingerprint(assignment), "generated_by": "python -m autograder.handout_numbers", **values}
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
                f"{assignment.root / NUMBERS_FILE} does not have (run python -m autograder.handout_numbers {assignment.name})"
            )
        return str(values[match.group(1)])

    return PLACEHOLDER.sub(value, text)


def main(argv: list[str]) -> int:
    from .config import load_assignment

    assignment = load_assignment(argv[0])
    if "--print" in argv:
        import torch

        torch.set_num_threads(1)
        print(json.dumps(GENERATORS[assignment.name](assignment)))
        return 0
    values = regenerate(assignment)
    for key, text in values.items():
        print(f"{key}:\n{text}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
