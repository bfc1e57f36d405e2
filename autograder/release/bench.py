"""``python -m autograder bench``: how long grading takes and how much memory it needs.

Per assignment, through the Gradescope entry point in a simulated tree:
wall time for the reference and for a slow-but-correct variant, peak RSS
summed over every grader process (sampled every 50 ms), the same grading at
half a CPU (a 50% duty cycle of SIGSTOP/SIGCONT over the whole process tree,
like a CPU quota), the students' public tests, and a baseline: importing
torch and running the same suite in one process without isolation. Then
batch throughput, ``make release`` with an empty and with a warm self-check
cache, and (``--setup``) creating the venv from scratch as ``make`` does.
``--write-docs`` puts the table into docs/measurements/bench.md.
"""

from __future__ import annotations

import argparse
import functools
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from pathlib import Path

import psutil

from ..catalogue import read_catalogue, submission_source
from ..config import KIT_ROOT, list_assignments, load_assignment
from .zips import build_zips

BUDGETS = {"grade_s": 30.0, "memory_mb": 600.0, "half_cpu_s": 120.0, "public_s": 10.0}
BASELINE_FACTOR = 3.0  # grading through the zip may take at most this many times the one-process baseline
RELEASE_BUDGET_S = 300.0
SETUP_BUDGET_S = 120.0


def _tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return []


def measure(cmd: list[str], cwd: Path, env: dict, duty: float = 1.0, memory: bool = True) -> tuple[float, float]:
    """(wall seconds, peak memory MB summed over the process tree); ``duty`` < 1 throttles the tree.

    Memory is PSS (proportional set size): a page shared by the grader and the worker (torch's
    libraries) counts once in total, as in the container's own accounting; summing RSS would
    count it once per process. Reading it means reading every process's page map 20 times a second,
    which costs CPU of its own: ``memory=False`` times a command without it (peak 0)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0.0
    done = threading.Event()

    def throttle() -> None:
        period = 0.1
        while not done.is_set():
            time.sleep(period * duty)
            procs = _tree(proc.pid)
            for p in procs:
                try:
                    p.send_signal(signal.SIGSTOP)
                except psutil.Error:
                    pass
            time.sleep(period * (1 - duty))
            for p in procs:
                try:
                    p.send_signal(signal.SIGCONT)
                except psutil.Error:
                    pass

    if duty < 1:
        threading.Thread(target=throttle, daemon=True).start()
    while memory and proc.poll() is None:
        total = 0
        for p in _tree(proc.pid):
            try:
                total += p.memory_full_info().pss
            except psutil.Error:
                pass
        peak = max(peak, total / 2**20)
        time.sleep(0.05)
    proc.wait()
    done.set()
    return time.monotonic() - start, peak


@functools.lru_cache(maxsize=None)
def _zips(name: str) -> dict[str, bytes]:
    """An assignment's zips, built once per benchmark (each is graded several ways)."""
    return build_zips(load_assignment(name))


def _gradescope(assignment, source: str, duty: float = 1.0) -> tuple[float, float]:
    from .gradescope_sim import environment, lay_out

    with tempfile.TemporaryDirectory(prefix="kit-bench-") as tmp:
        zip_path = Path(tmp) / "autograder.zip"
        zip_path.write_bytes(_zips(assignment.name)["autograder.zip"])
        root = Path(tmp) / "root"
        lay_out(zip_path, {assignment.submit_file: source.encode()}, root)
        env = environment(root)
        subprocess.run(["bash", str(root / "source" / "setup.sh")], cwd=root / "source", env=env, capture_output=True, check=True)
        return measure([str(root / "run_autograder")], root, env, duty)


def _public(assignment) -> float:
    with tempfile.TemporaryDirectory(prefix="kit-bench-") as tmp:
        zip_path = Path(tmp) / "student.zip"
        zip_path.write_bytes(_zips(assignment.name)["student.zip"])
        with zipfile.ZipFile(zip_path) as zf:
            zf.extractall(tmp)
        folder = Path(tmp) / assignment.name
        (folder / assignment.submit_file).write_bytes(assignment.solution.read_bytes())
        seconds, _ = measure([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], folder, dict(os.environ))
        return seconds


def _baseline(assignment) -> float:
    """Import torch and run the same suites in one process, student code in-process (no isolation)."""
    code = (
        "import sys, pytest; sys.path.insert(0, %r); "
        "from autograder.config import load_assignment; from autograder.grading.grade import pytest_args; "
        "from autograder.grading.scoring import ScoringPlugin; from autograder.grading.local import local_student; "
        "a = load_assignment(%r); s = local_student(a.module, a.solution, a.helpers); "
        "sys.path.insert(0, str(a.tests_dir)); "
        "pytest.main(pytest_args(a), plugins=[ScoringPlugin(a, s, float('inf'))])"
    ) % (str(KIT_ROOT), assignment.name)
    seconds, _ = measure([sys.executable, "-c", code], KIT_ROOT, dict(os.environ, OMP_NUM_THREADS="1"))
    return seconds


def _diagnosis_cost(assignment) -> tuple[str, float, float]:
    """(mistake, seconds with diagnosis, seconds without) for the catalogue's first mistake."""
    mistakes = read_catalogue(assignment, "mistake")
    if not mistakes:
        return "-", float("nan"), float("nan")
    mistake = mistakes[0]
    times = []
    with tempfile.TemporaryDirectory(prefix="kit-bench-") as tmp:
        upload = Path(tmp) / assignment.submit_file
        upload.write_text(submission_source(assignment, mistake))
        for flags in ([], ["--no-diagnosis"]):
            cmd = [
                sys.executable,
                "-m",
                "autograder",
                "grade",
                assignment.name,
                str(upload),
                "--results",
                str(Path(tmp) / "r.json"),
                *flags,
            ]
            times.append(measure(cmd, KIT_ROOT, dict(os.environ))[0])
    return mistake.name, times[0], times[1]


def _slow_variant(assignment):
    variants = read_catalogue(assignment, "variant")
    loops = [v for v in variants if "loop" in v.name]
    return (loops or variants or [None])[0]


def bench_assignment(name: str) -> dict:
    assignment = load_assignment(name)
    reference = submission_source(assignment, None)
    row: dict = {"assignment": name}
    row["grade_s"], row["memory_mb"] = _gradescope(assignment, reference)
    slow = _slow_variant(assignment)
    row["slow_variant"] = slow.name if slow else "-"
    row["slow_s"] = _gradescope(assignment, submission_source(assignment, slow))[0] if slow else float("nan")
    row["half_cpu_s"] = _gradescope(assignment, reference, duty=0.5)[0]
    row["baseline_s"] = _baseline(assignment)
    row["public_s"] = _public(assignment)
    row["mistake"], row["with_diag_s"], row["without_diag_s"] = _diagnosis_cost(assignment)
    return row


def bench_batch(name: str, n: int) -> float:
    """Submissions per minute for grade-all on n copies of the reference."""
    assignment = load_assignment(name)
    with tempfile.TemporaryDirectory(prefix="kit-bench-") as tmp:
        folder = Path(tmp) / "subs"
        folder.mkdir()
        for i in range(n):
            (folder / f"student{i:03d}.py").write_text(assignment.solution.read_text())
        seconds, _ = measure(
            [sys.executable, "-m", "autograder", "grade-all", name, str(folder), "--out", str(Path(tmp) / "out")],
            KIT_ROOT,
            dict(os.environ),
        )
    return n / seconds * 60


def bench_release() -> tuple[float, float]:
    """(seconds, seconds): ``python -m autograder release`` with an empty self-check cache, then again."""
    with tempfile.TemporaryDirectory(prefix="kit-bench-") as tmp:
        cmd = [
            sys.executable,
            "-m",
            "autograder",
            "release",
            "--out",
            str(Path(tmp) / "dist"),
            "--cache",
            str(Path(tmp) / "cache"),
        ]
        # timed alone: the memory readings of a release's dozen processes would cost it a tenth of its time
        cold = measure(cmd, KIT_ROOT, dict(os.environ), memory=False)[0]
        warm = measure(cmd, KIT_ROOT, dict(os.environ), memory=False)[0]
    return cold, warm


def bench_setup() -> float:
    """Seconds for ``make venv`` into an empty folder: the set-up a fresh clone's first ``make`` does."""
    with tempfile.TemporaryDirectory(prefix="kit-bench-") as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "MAKEFLAGS")}
        return measure(["make", "venv", f"VENV={Path(tmp) / 'venv'}"], KIT_ROOT, env, memory=False)[0]


def table(
    rows: list[dict],
    batch: float | None,
    batch_name: str,
    release: tuple[float, float] | None = None,
    setup: float | None = None,
) -> str:
    lines = [
        "| assignment | grade reference (s) | slow correct style (s) | 1-process baseline (s) | peak memory, all processes (PSS, MB) | at half a CPU (s) | public tests (s) | a mistake graded with / without diagnosis (s) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| `{r['assignment']}` | {r['grade_s']:.1f} | {r['slow_s']:.1f} (`{r['slow_variant']}`) | {r['baseline_s']:.1f} | "
            f"{r['memory_mb']:.0f} | {r['half_cpu_s']:.1f} | {r['public_s']:.1f} | "
            f"{r['with_diag_s']:.1f} / {r['without_diag_s']:.1f} (`{r['mistake']}`) |"
        )
    text = "\n".join(lines)
    if batch is not None:
        text += f"\n\nBatch grading (`grade-all`, {os.cpu_count()} cores, `{batch_name}` reference copies): {batch:.1f} submissions per minute."
    if release is not None:
        text += (
            f"\n\n`make release` (every assignment, self-checks included): {release[0]:.0f} s with an empty "
            f"self-check cache, {release[1]:.0f} s when nothing changed since (budget {RELEASE_BUDGET_S:.0f} s)."
        )
    if setup is not None:
        text += f"\n\nSet-up (venv and pinned requirements, pip's download cache warm): {setup:.0f} s (budget {SETUP_BUDGET_S:.0f} s)."
    budgets = ", ".join(f"{k} ≤ {v:g}" for k, v in BUDGETS.items())
    text += (
        f"\n\nBudgets: {budgets}, grade_s ≤ {BASELINE_FACTOR:g} × baseline; memory is PSS summed over the grader, "
        f"its worker and their children; measured with `make bench` on {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}."
    )
    return text


def over_budget(rows: list[dict], release: tuple[float, float] | None, setup: float | None) -> list[str]:
    over = [f"{r['assignment']}: {k} {r[k]:.1f} > {v:g}" for r in rows for k, v in BUDGETS.items() if r[k] > v]
    over += [
        f"{r['assignment']}: grade {r['grade_s']:.1f} s > {BASELINE_FACTOR:g} × baseline {r['baseline_s']:.1f} s"
        for r in rows
        if r["grade_s"] > BASELINE_FACTOR * r["baseline_s"]
    ]
    if release is not None and release[0] > RELEASE_BUDGET_S:
        over.append(f"make release {release[0]:.0f} s > {RELEASE_BUDGET_S:g}")
    if setup is not None and setup > SETUP_BUDGET_S:
        over.append(f"set-up {setup:.0f} s > {SETUP_BUDGET_S:g}")
    return over


def build_parser() -> argparse.ArgumentParser:
    """``bench``'s own options (it parses them itself; tools/gen_docs.py lists them in the CLI reference)."""
    parser = argparse.ArgumentParser(prog="python -m autograder bench", description="measure grading time and memory")
    parser.add_argument("assignments", nargs="*")
    parser.add_argument("--write-docs", action="store_true", help="write the table into docs/measurements/bench.md")
    parser.add_argument("--batch", type=int, default=8, help="submissions for the throughput run (0 to skip)")
    parser.add_argument("--no-release", action="store_true", help="skip timing `make release` (minutes)")
    parser.add_argument("--setup", action="store_true", help="also time creating the venv from scratch")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    names = args.assignments or list_assignments()
    rows = []
    for name in names:
        print(f"benchmarking {name}...", flush=True)
        rows.append(bench_assignment(name))
    batch = bench_batch(names[0], args.batch) if args.batch else None
    release = None if args.no_release else bench_release()
    setup = bench_setup() if args.setup else None
    text = table(rows, batch, names[0], release, setup)
    print(text)
    over = over_budget(rows, release, setup)
    if over:
        print("over budget:\n  " + "\n  ".join(over))
    if args.write_docs:
        from .build import BENCH_PAGE, write_generated_block

        write_generated_block("bench", text, KIT_ROOT / BENCH_PAGE, by="make bench")
    return 0
