"""The proofs on the built zips: what a student unzips, and the reference under another seed.

One job: the self-check's ``zips`` proofs (registered with :func:`.proofs.proof`), run on the
``student.zip`` the release is about to write, beside the catalogue's gradings: no solution
code and no hidden test inside, the public tests and the lab notebook in the unzipped folder
(with the reference and with the untouched stub), the reference under another seed; and
:func:`check_gradescope_zip`, which grades the reference with ``autograder.zip`` in a
simulated Gradescope tree (its score is proved with the other gradings). The slow proofs are
remembered once passed (:class:`Proven`).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Callable

from ..config import KIT_ROOT, Assignment
from .catalogue_grading import _with_exit_code
from .proofs import Evidence, Report, proof
from .solution_leaks import solution_code_check
from .zips import student_files_from_zip


class Proven:
    """Slow proofs that passed for exactly these sources, interpreter and packages (one file each,
    keyed like the gradings); a failed proof is never recorded, so it runs again next time."""

    def __init__(self, cache: Path, assignment: Assignment, fingerprint: str) -> None:
        self.folder = cache
        self.prefix = f"{assignment.name}-{fingerprint[:24]}"

    def __contains__(self, what: str) -> bool:
        return (self.folder / f"{self.prefix}-{what}.ok").is_file()

    def add(self, what: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / f"{self.prefix}-{what}.ok").touch()

    def document(self, what: str) -> dict | None:
        """A results document remembered under ``what`` (None: not graded yet for these sources)."""
        try:
            return json.loads((self.folder / f"{self.prefix}-{what}.json").read_text())
        except (OSError, ValueError):
            return None

    def keep(self, what: str, document: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        temporary = self.folder / f".{self.prefix}-{what}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(document))
        temporary.replace(self.folder / f"{self.prefix}-{what}.json")


def artefact_hash(path: Path, skip_suffixes: tuple[str, ...] = ()) -> str:
    """A short hash of what a proof runs: a file's bytes, a zip's members or a folder's files (by name and
    content, members whose names end with ``skip_suffixes`` left out: a handout the proof never reads)."""
    h = hashlib.sha256()

    def add(name: str, data: bytes) -> None:
        if not (skip_suffixes and name.endswith(skip_suffixes)):
            h.update(name.encode() + b"\0" + data)

    if path.is_dir():
        for member in sorted(p for p in path.rglob("*") if p.is_file()):
            add(str(member.relative_to(path)), member.read_bytes())
    elif zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as zf:
            for name in sorted(n for n in zf.namelist() if not n.endswith("/")):
                add(name, zf.read(name))
    else:
        add("", path.read_bytes())
    return h.hexdigest()[:16]


# The reference must also pass under a seed other than grading's: a test that passes only by luck
# of its inputs fails here (`make flakes` runs 20 seeds; run it before changing a test).
OTHER_SEED = 1


@proof("student.zip holds no solution code (the shipped hints may quote single lines of the reference)", stage="zips")
def no_solution_code(evidence: Evidence, report: Report) -> None:
    assignment, path = evidence.assignment, evidence.staged / "student.zip"
    # the reference's own solution code: allowed only as single lines quoted by the hints the course
    # ships and in the functions it ships (solution_leaks.solution_code_check); the message says what was found
    entry = evidence.entry
    if entry is None:
        from .course import load_course

        entry = load_course().entry(assignment.name)
    leaks = solution_code_check(assignment, student_files_from_zip(path.read_bytes()), entry)
    report.check(not leaks.found, leaks.text())


@proof("student.zip holds no hidden test", stage="zips")
def no_hidden_tests(evidence: Evidence, report: Report) -> None:
    assignment = evidence.assignment
    with zipfile.ZipFile(evidence.staged / "student.zip") as zf:
        names = zf.namelist()
        blob = "\n".join(zf.read(n).decode("utf-8", "replace") for n in names)
    hidden = assignment.tests_dir / "hidden"
    hidden_names = [p.name for p in hidden.glob("*.py")]
    hidden_tests = [k.split("::")[1] for k in assignment.points if k.startswith("hidden/")]
    leaks = [n for n in names if Path(n).name in hidden_names] + [t for t in hidden_tests if f"def {t}(" in blob]
    report.check(not leaks, "student.zip holds no hidden test" + (f" (found: {leaks[:3]})" if leaks else ""))


@proof(
    "the public tests pass on the reference in the unzipped student folder and fail cleanly on the untouched stub",
    stage="zips",
)
def public_tests_in_the_student_folder(evidence: Evidence, report: Report) -> None:
    assignment = evidence.assignment
    with tempfile.TemporaryDirectory(prefix="kit-student-") as tmp:
        with zipfile.ZipFile(evidence.staged / "student.zip") as zf:
            zf.extractall(tmp)
        folder = Path(tmp) / assignment.name
        stub_run = _run_public_tests(folder)
        (folder / assignment.submit_file).write_bytes(assignment.solution.read_bytes())
        ref_run = _run_public_tests(folder)
    report.check(ref_run.returncode == 0, "public tests pass on the reference in the unzipped student folder" + _tail(ref_run))
    report.check(
        stub_run.returncode == 1, "public tests fail (cleanly) on the untouched stub" + _tail(stub_run, stub_run.returncode != 1)
    )


@proof(
    "the lab notebook, run headless in the unzipped student folder, passes every Otter check and draws its plot "
    "with the reference, and runs without a cell error with the untouched stub, whose checks say what is unfinished",
    stage="zips",
)
def lab_notebook(evidence: Evidence, report: Report) -> None:
    assignment, proven = evidence.assignment, evidence.proven
    with zipfile.ZipFile(evidence.staged / "student.zip") as zf:
        if f"{assignment.name}/{assignment.name}_lab.ipynb" not in zf.namelist():
            return
        with tempfile.TemporaryDirectory(prefix="kit-student-") as tmp:
            zf.extractall(tmp)
            folder = Path(tmp) / assignment.name
            # remembered for this student folder (its handout aside) and this reference
            built = artefact_hash(evidence.staged / "student.zip", (".md",)) + artefact_hash(assignment.solution)
            _check_notebooks(assignment, folder, report, proven, built)


@proof(f"the reference passes every test under another seed (seed {OTHER_SEED}; `make flakes` tries 20)", stage="zips")
def reference_under_another_seed(evidence: Evidence, report: Report) -> None:
    _check_other_seed(evidence.assignment, report, evidence.proven)


def _check_other_seed(assignment: Assignment, report: Report, proven: Proven) -> None:
    what = f"seed{OTHER_SEED}"
    if what in proven:
        report.check(True, f"the reference passes every test under seed {OTHER_SEED} too (cached)")
        return
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "seeds", assignment.name, "--count", "1", "--first", str(OTHER_SEED)],
        cwd=KIT_ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    report.check(
        run.returncode == 0,
        f"the reference passes every test under seed {OTHER_SEED} too" + _tail(run),
    )
    if run.returncode == 0:
        proven.add(what)


def _check_notebooks(assignment: Assignment, folder: Path, report: Report, proven: Proven | None, built: str = "") -> None:
    """The lab notebook, run headless in the unzipped student folder as a student runs it: with the reference in
    a fresh kernel, then with the untouched stub (as unzipped) in the same kernel, its namespace and the
    student's module forgotten (``built``: the hash of the student folder, part of what is remembered)."""
    if not (folder / f"{assignment.name}_lab.ipynb").is_file():
        return
    stub = (folder / assignment.submit_file).read_bytes()
    runs = {True: assignment.solution.read_bytes(), False: stub}  # the reference first: its checks must all pass
    keys = {
        solution: ("notebook-reference" if solution else "notebook-stub") + (f"-{built}" if built else "") for solution in runs
    }
    which = {True: "the reference", False: "the untouched stub"}
    todo = [solution for solution in runs if proven is None or keys[solution] not in proven]
    for solution in runs:
        if solution not in todo:
            report.check(True, f"the lab notebook runs with {which[solution]} (cached)")
    if not todo:
        return
    from .notebooks import notebook_problem, run_notebooks

    def use(solution: bool) -> Callable[[], None]:
        return lambda: (folder / assignment.submit_file).write_bytes(runs[solution])

    try:
        results = run_notebooks(folder, assignment.name, [use(solution) for solution in todo], module=assignment.module)
    except Exception as exc:  # noqa: BLE001 - a kernel that does not start is the finding
        results = [exc] * len(todo)
    for solution, result in zip(todo, results):
        if isinstance(result, Exception):
            problem = f"a cell fails: {' '.join(str(result).split())[-600:]}"
        else:
            problem = notebook_problem(result, solution)
        expected = (
            "every Otter check passes and a plot is drawn" if solution else "no cell errors and the checks say what is unfinished"
        )
        report.check(
            not problem, f"the lab notebook runs with {which[solution]}: {expected}" + (f" (not: {problem})" if problem else "")
        )
        if not problem and proven is not None:
            proven.add(keys[solution])


def _run_public_tests(folder: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=folder,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def _tail(proc: subprocess.CompletedProcess, show: bool = True) -> str:
    if not show or proc.returncode == 0:
        return ""
    return " -- output:\n" + "\n".join(proc.stdout.splitlines()[-15:])


def check_gradescope_zip(assignment: Assignment, path: Path, report: Report, proven: Proven | None = None) -> dict:
    """Unzip into a simulated AUTOGRADER_ROOT and grade the reference through run_autograder; its results.

    Remembered in ``proven`` for these bytes of autograder.zip and of the reference (a clean grading only:
    one where nothing was stopped), so a re-release that changed neither does not grade it again."""
    from .gradescope_sim import simulate

    what = f"gradescope-{artefact_hash(path)}-{artefact_hash(assignment.solution)}"
    if proven is not None and (remembered := proven.document(what)) is not None:
        return remembered
    try:
        document = simulate(path, {assignment.submit_file: assignment.solution.read_bytes()})
    except Exception as exc:  # noqa: BLE001 - report, don't crash the release
        report.check(False, f"autograder.zip runs in a simulated Gradescope tree ({exc})")
        return _with_exit_code(None)
    document = _with_exit_code(document)  # its score is checked with the other gradings
    extra = document.get("extra_data", {})
    if proven is not None and document["_exit_code"] == 0 and not extra.get("stopped") and not extra.get("load"):
        proven.keep(what, document)
    return document
