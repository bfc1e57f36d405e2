"""The release self-check: prove the grading before shipping it.

Refuses the release (and says why) when the reference scores under 100, the
untouched stub over 0 (or breaks the grader, or does not say what is unfinished),
the do-nothing submission (``do_nothing.py``) earns a point, the points do not add
up to exactly 100, a correct variant or corpus entry loses a point, a catalogued
mistake loses nothing, escapes one of its declared tests or is not named, a
hidden test catches no mistake (unless ``[uncaught]`` says why), the public
tests or the lab notebook fail on the reference in the unzipped student folder
(or the notebook crashes on the stub), the reference fails a test under another
seed, solution code or hidden tests leak into student.zip, or the autograder.zip
does not grade the reference to 100 in a simulated Gradescope tree.

Gradings and the slow proofs (notebook, other seed) are cached by the hash of
everything they depend on, so an unchanged assignment re-checks in seconds.
This is each assignment's proof: ``make release`` runs it, and CI runs
``make release`` on a fresh clone before ``make test``.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .catalogue import DO_NOTHING, CatalogueEntry, bugged_source, do_nothing_source, read_catalogue, submission_source  # noqa: F401
from .config import KIT_ROOT, Assignment
from .markers import make_stub
from .release import course_entry, solution_code_check, student_files_from_zip

# Gradings of catalogue entries, keyed on every input that can change a result (see _fingerprint).
# `release --cache DIR` moves it (the benchmark times a release with an empty cache that way);
# `make clean` removes it.
DEFAULT_CACHE = KIT_ROOT / ".cache" / "selfcheck"


def _fingerprint(assignment: Assignment) -> str:
    h = hashlib.sha256()
    roots = [Path(__file__).parent, assignment.root, assignment.solution.parent]
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(str(path.relative_to(root)).encode())
                h.update(path.read_bytes())
    h.update((KIT_ROOT / "requirements.txt").read_bytes())
    # the interpreter and the installed versions of what grading imports can change a result too
    h.update(f"{sys.executable} {sys.version}".encode())
    for package in ("torch", "numpy", "pytest", "psutil", "einops", "nbclient", "ipykernel", "matplotlib", "otter-grader"):
        try:
            h.update(f"{package}=={importlib.metadata.version(package)}".encode())
        except importlib.metadata.PackageNotFoundError:
            h.update(f"{package} missing".encode())
    return h.hexdigest()


def grade_sources(
    assignment: Assignment,
    sources: dict[str, str],
    jobs_n: int = 0,
    only: dict[str, list[str]] | None = None,
    cache: Path = DEFAULT_CACHE,
    fingerprint: str | None = None,
    exitfirst: bool = False,
) -> dict[str, dict]:
    """Grade each ``{label: source}`` through the real CLI (isolated worker), in parallel, cached.

    ``only[label]`` restricts that source's grading to the listed tests; ``fingerprint`` is
    ``_fingerprint(assignment)`` when the caller has it already.
    """
    cache.mkdir(parents=True, exist_ok=True)
    base = fingerprint or _fingerprint(assignment)
    only = only or {}
    results: dict[str, dict] = {}
    todo: list[tuple[str, str, Path]] = []
    for label, source in sources.items():
        selection = (json.dumps(sorted(only[label])) if label in only else "all") + (" exitfirst" if exitfirst else "")
        key = hashlib.sha256((base + selection + source).encode()).hexdigest()
        cached = cache / f"{assignment.name}-{key[:24]}.json"
        try:
            results[label] = json.loads(cached.read_text())
        except (OSError, ValueError):  # not graded yet (or unreadable): grade it
            todo.append((label, source, cached))
    # the slowest first, so two grader processes finish together: whole-suite gradings, then the rest
    todo.sort(key=lambda item: item[0] in only)

    from .batch import parallel_grade

    with tempfile.TemporaryDirectory(prefix="kit-check-") as tmp:
        jobs = []
        for i, (label, source, _cached) in enumerate(todo):
            upload = Path(tmp) / f"upload{i}"
            upload.mkdir()
            (upload / assignment.submit_file).write_text(source)
            options = {"only": only[label]} if label in only else {}
            if exitfirst:
                options["exitfirst"] = True
            jobs.append((upload, Path(tmp) / f"results{i}.json", options))
        parallel_grade(assignment, jobs, jobs_n)
        for (label, _source, cached), (_upload, out, _options) in zip(todo, jobs):
            document = _with_exit_code(json.loads(out.read_text()) if out.is_file() else None)
            # Never cached: a grading that broke, or one where the student's code ran out of time or memory or
            # crashed (a loaded machine can cause that; the next release must grade it again).
            extra = document.get("extra_data", {})
            if document["_exit_code"] == 0 and not extra.get("stopped") and extra.get("load") not in UNSTABLE_LOADS:
                temporary = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
                temporary.write_text(json.dumps(document))
                temporary.replace(cached)
            results[label] = document
    return results


# A load that hung, ran out of memory or crashed may be the machine's doing (a loaded machine): never cached.
UNSTABLE_LOADS = ("timeout", "memory", "crash")


def _with_exit_code(document: dict | None) -> dict:
    """The results document (None: the grader wrote none) with ``_exit_code`` 1 if the grading itself broke."""
    if document is None:
        return {"score": None, "tests": [], "_exit_code": 1}
    document["_exit_code"] = 1 if document.get("extra_data", {}).get("config_errors") else 0
    return document


@dataclass
class Report:
    assignment: str
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    table: list[tuple[str, str, float, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def check(self, ok: bool, what: str) -> None:
        self.lines.append(f"  [{'ok' if ok else 'FAIL'}] {what}")
        if not ok:
            self.problems.append(what)

    def markdown_table(self) -> str:
        lines = [
            f"**`{self.assignment}`** ({len(self.table)} mistakes)",
            "",
            "| mistake | points lost (in those tests) | named in feedback | tests that catch it |",
            "| --- | ---: | :---: | --- |",
        ]
        for mistake, tests, lost, named in self.table:
            lines.append(f"| `{mistake}` | {lost:g} | {named} | {tests} |")
        return "\n".join(lines)

    def text(self) -> str:
        out = [f"[{self.assignment}] self-check", *self.lines]
        if self.table:
            width = max(len(m) for m, _, _, _ in self.table)
            out.append(f"\n  {'mistake':<{width}}  {'points lost':>11}  {'named':>5}  tests that catch it")
            for mistake, tests, lost, named in self.table:
                out.append(f"  {mistake:<{width}}  {lost:>11.1f}  {named:>5}  {tests}")
        if self.problems:
            out.append("\n  Problems:\n    - " + "\n    - ".join(self.problems))
        return "\n".join(out)


def _lost_by_test(document: dict) -> dict[str, float]:
    lost: dict[str, float] = {}
    for t in document.get("tests", []):
        key = t.get("extra_data", {}).get("test", t["name"])
        lost[key] = lost.get(key, 0.0) + t["max_score"] - t["score"]
    return {k: round(v, 4) for k, v in lost.items() if v > 1e-9}


def catalogue_sources(assignment: Assignment) -> tuple[dict[str, str], dict[str, list[str]], list[str]]:
    """What the self-check grades: ``{label: source}`` (stub, do-nothing, every mistake, variant,
    corpus entry and corpus entry with its bug), the tests each mistake runs against, and the
    corpus entries whose BUG could not be applied."""
    mistakes = read_catalogue(assignment, "mistake")
    corpus = read_catalogue(assignment, "corpus")
    sources = {"stub": make_stub(assignment.solution.read_text()), "do-nothing": do_nothing_source(assignment)}
    for entry in mistakes + read_catalogue(assignment, "variant") + corpus:
        sources[f"{entry.kind}:{entry.name}"] = submission_source(assignment, entry)
    bug_errors = []
    for entry in corpus:
        try:
            sources[f"corpus-bug:{entry.name}"] = bugged_source(assignment, entry) if entry.bug else None
        except ValueError as exc:
            bug_errors.append(str(exc))
    sources = {label: source for label, source in sources.items() if source is not None}
    # A mistake runs against the tests that claim to catch it (the proof needs nothing else, and the
    # training tests are most of the time); the reference, the stub and the variants run everything.
    only = {f"mistake:{e.name}": [k for k in e.caught_by if k in assignment.points] for e in mistakes}
    return sources, only, bug_errors


def self_check(assignment: Assignment, staged: Path, cache: Path = DEFAULT_CACHE) -> Report:
    report = Report(assignment.name)
    mistakes = read_catalogue(assignment, "mistake")
    variants = read_catalogue(assignment, "variant")
    corpus = read_catalogue(assignment, "corpus")
    sources, only, bug_errors = catalogue_sources(assignment)
    started = time.monotonic()
    # The zips are checked while the catalogue is graded; the reference's grading is the one the
    # autograder.zip does in the simulated Gradescope tree (one grading proves both).
    zip_report = Report(assignment.name)
    fingerprint = _fingerprint(assignment)
    with ThreadPoolExecutor(max_workers=1) as pool:
        zip_checks = pool.submit(_check_zips, assignment, staged, zip_report, _Proven(cache, assignment, fingerprint))
        graded = grade_sources(assignment, sources, only=only, cache=cache, fingerprint=fingerprint)
        graded["reference"] = zip_checks.result()
    report.lines.append(f"  graded {len(sources) + 1} submissions and checked the zips in {time.monotonic() - started:.0f} s")

    ref = graded["reference"]
    report.check(
        ref.get("score") == 100 and ref.get("_exit_code") == 0,
        f"autograder.zip grades the reference 100 in a simulated Gradescope tree (got {ref.get('score')})",
    )
    stub = graded["stub"]
    report.check(
        stub.get("score") == 0 and stub.get("_exit_code") == 0 and len(stub.get("tests", [])) > 0,
        f"untouched stub scores 0 without grader errors (got {stub.get('score')}, exit {stub.get('_exit_code')})",
    )
    report.check(
        any("not implemented yet" in t.get("output", "") for t in stub.get("tests", [])),
        "the untouched stub's feedback says what is not implemented yet",
    )
    maxima = [t["max_score"] for t in stub.get("tests", [])]
    report.check(
        sum(maxima) == 100 and sum(reversed(maxima)) == 100,
        f"the points of all tests, parametrized cases included, add up to exactly 100 in any order (got {sum(maxima)!r})",
    )
    nothing = graded.get("do-nothing")
    if nothing is None:
        report.check(False, f"assignments/{assignment.name}/{DO_NOTHING} declares a submission that computes nothing")
    else:
        paid = {t.get("extra_data", {}).get("test", t["name"]): t["score"] for t in nothing.get("tests", []) if t["score"] > 0}
        report.check(
            nothing.get("score") == 0 and nothing.get("_exit_code") == 0 and not paid,
            f"a submission that computes nothing ({DO_NOTHING}) earns no point (got {nothing.get('score')}"
            + (f", paid by {paid}" if paid else "")
            + ")",
        )
    for entry in variants:
        doc = graded[f"variant:{entry.name}"]
        report.check(doc.get("score") == 100, f"variant {entry.name} ({entry.title}) scores 100 (got {doc.get('score')})")
    for entry in corpus:
        doc = graded[f"corpus:{entry.name}"]
        report.check(doc.get("score") == 100, f"corpus {entry.name} ({entry.title}) scores 100 (got {doc.get('score')})")
        bugged = graded.get(f"corpus-bug:{entry.name}")
        if bugged is None:
            report.check(False, f"corpus {entry.name} declares one injected BUG = (text, replacement)")
            continue
        named = sorted({m for t in bugged.get("tests", []) for m in t.get("extra_data", {}).get("mistakes", [])})
        wrong = [m for m in named if m not in entry.bug_names]
        report.check(
            (bugged.get("score") or 0) < 100 and not wrong,
            f"corpus {entry.name} with its bug loses points ({100 - (bugged.get('score') or 0):g}) and is named "
            f"correctly or not at all (named {named or 'nothing'}; allowed {entry.bug_names or 'nothing'})",
        )
    for problem in bug_errors:
        report.check(False, problem)
    for label in ("reference", *(f"variant:{e.name}" for e in variants), *(f"corpus:{e.name}" for e in corpus)):
        named = {m for t in graded[label].get("tests", []) for m in t.get("extra_data", {}).get("mistakes", [])}
        report.check(not named, f"{label} is not diagnosed with any mistake" + (f" (got {sorted(named)})" if named else ""))
    hidden_keys = {k for k in assignment.points if k.startswith("hidden/")}
    caught_keys: set[str] = set()
    for entry in mistakes:
        doc = graded[f"mistake:{entry.name}"]
        lost = _lost_by_test(doc)
        caught_keys |= set(lost)
        missing = [k for k in entry.caught_by if k not in lost]
        unknown = [k for k in entry.caught_by if k not in assignment.points]
        total_lost = round(sum(lost.values()), 2)
        report.check(
            total_lost > 0 and doc.get("_exit_code") == 0 and not missing and not unknown and bool(entry.caught_by),
            f"mistake {entry.name} loses points in the tests that claim to catch it ({total_lost:g})"
            + (f"; NOT caught by declared {missing}" if missing else "")
            + (f"; declares unknown tests {unknown}" if unknown else "")
            + ("; declares no CAUGHT_BY" if not entry.caught_by else ""),
        )
        named = {m for t in doc.get("tests", []) for m in t.get("extra_data", {}).get("mistakes", [])}
        diagnosed = entry.name in named
        report.check(
            diagnosed,
            f"mistake {entry.name} is named in the feedback"
            + (
                ""
                if diagnosed
                else " (it is not: check a value a top-level call returned, or give the test a `call=` the diagnoser can replay; see assignments/README.md)"
            ),
        )
        report.table.append(
            (entry.name, ", ".join(sorted(k.split("::")[1] for k in lost)), total_lost, "yes" if diagnosed else "no")
        )
    uncaught = sorted(hidden_keys - caught_keys - set(assignment.uncaught))
    report.check(
        not uncaught, "every hidden test catches at least one catalogued mistake" + (f" (not: {uncaught})" if uncaught else "")
    )
    report.check(len(mistakes) >= 10, f"at least 10 catalogued mistakes ({len(mistakes)})")
    if corpus:
        report.check(len(corpus) >= 3, f"at least 3 independent implementations in corpus/ ({len(corpus)})")
    report.lines.extend(zip_report.lines)
    report.problems.extend(zip_report.problems)
    return report


def _check_zips(assignment: Assignment, staged: Path, report: Report, proven: _Proven) -> dict:
    """The student.zip and autograder.zip checks and the reference under another seed; returns the
    reference's results from the autograder.zip (graded in a simulated Gradescope tree)."""
    _check_student_zip(assignment, staged / "student.zip", report, proven)
    _check_other_seed(assignment, report, proven)
    return _check_gradescope_zip(assignment, staged / "autograder.zip", report)


class _Proven:
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


# The reference must also pass under a seed other than grading's: a test that passes only by luck
# of its inputs fails here (`make flakes` runs 20 seeds; run it before changing a test).
OTHER_SEED = 1


def _check_other_seed(assignment: Assignment, report: Report, proven: _Proven) -> None:
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


def _check_student_zip(assignment: Assignment, path: Path, report: Report, proven: _Proven | None = None) -> None:
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        blob = "\n".join(zf.read(n).decode("utf-8", "replace") for n in names)
    # the reference's own solution code: allowed only as single lines quoted by the hints the course
    # ships and in the functions it ships (release.solution_code_check); the message says what was found
    leaks = solution_code_check(assignment, student_files_from_zip(path.read_bytes()), course_entry(assignment.name))
    report.check(not leaks.found, leaks.text())
    hidden = assignment.tests_dir / "hidden"
    hidden_names = [p.name for p in hidden.glob("*.py")]
    hidden_tests = [k.split("::")[1] for k in assignment.points if k.startswith("hidden/")]
    leaks = [n for n in names if Path(n).name in hidden_names] + [t for t in hidden_tests if f"def {t}(" in blob]
    report.check(not leaks, "student.zip holds no hidden test" + (f" (found: {leaks[:3]})" if leaks else ""))
    with tempfile.TemporaryDirectory(prefix="kit-student-") as tmp:
        with zipfile.ZipFile(path) as zf:
            zf.extractall(tmp)
        folder = Path(tmp) / assignment.name
        stub_run = _run_public_tests(folder)
        _check_notebook(assignment, folder, False, report, proven)
        (folder / assignment.submit_file).write_bytes(assignment.solution.read_bytes())
        ref_run = _run_public_tests(folder)
        _check_notebook(assignment, folder, True, report, proven)
    report.check(ref_run.returncode == 0, "public tests pass on the reference in the unzipped student folder" + _tail(ref_run))
    report.check(
        stub_run.returncode == 1, "public tests fail (cleanly) on the untouched stub" + _tail(stub_run, stub_run.returncode != 1)
    )


def _check_notebook(assignment: Assignment, folder: Path, solution: bool, report: Report, proven: _Proven | None) -> None:
    """The lab notebook, run headless in the unzipped student folder as a student runs it."""
    if not (folder / f"{assignment.name}_lab.ipynb").is_file():
        return
    which = "the reference" if solution else "the untouched stub"
    what = "notebook-reference" if solution else "notebook-stub"
    if proven is not None and what in proven:
        report.check(True, f"the lab notebook runs with {which} (cached)")
        return
    from .notebooks import notebook_problem, run_notebook

    try:
        problem = notebook_problem(run_notebook(folder, assignment.name), solution)
    except Exception as exc:  # noqa: BLE001 - a cell that errors (or a kernel that dies) is the finding
        problem = f"a cell fails: {' '.join(str(exc).split())[-600:]}"
    expected = (
        "every Otter check passes and a plot is drawn" if solution else "no cell errors and the checks say what is unfinished"
    )
    report.check(not problem, f"the lab notebook runs with {which}: {expected}" + (f" (not: {problem})" if problem else ""))
    if not problem and proven is not None:
        proven.add(what)


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


def _check_gradescope_zip(assignment: Assignment, path: Path, report: Report) -> dict:
    """Unzip into a simulated AUTOGRADER_ROOT and grade the reference through run_autograder; its results."""
    from .gradescope_sim import simulate

    try:
        document = simulate(path, {assignment.submit_file: assignment.solution.read_bytes()})
    except Exception as exc:  # noqa: BLE001 - report, don't crash the release
        report.check(False, f"autograder.zip runs in a simulated Gradescope tree ({exc})")
        return _with_exit_code(None)
    return _with_exit_code(document)  # its score is checked with the other gradings
