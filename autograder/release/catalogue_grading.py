"""Grading the catalogue: what the self-check grades, graded through the real CLI, cached.

One job: :func:`catalogue_sources` lists what an assignment's self-check grades (the stub,
the do-nothing submission, every mistake, variant and corpus entry, and each corpus entry
with its bug) and which tests each mistake runs against; :func:`grade_sources` grades such
sources in parallel through the isolated grader, cached on the hash of everything a grading
reads (:func:`_fingerprint`: the grading engine, the assignment's tests, points, helpers and
mistakes, the reference, the interpreter and the installed packages; not its handout, notebook,
variants or corpus, nor course.toml) and on the source itself, so a re-release regrades only
what a change can affect. ``make mutants`` and ``make determinism`` grade through it too.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.metadata
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from ..catalogue import CatalogueEntry, read_catalogue, submission_source
from ..config import ENGINE, KIT_ROOT, Assignment, ConfigError
from ..pool.parallel import parallel_grade
from .markers import make_stub

# Gradings of catalogue entries, keyed on every input that can change a result (see _fingerprint).
# `release --cache DIR` moves it (the benchmark times a release with an empty cache that way);
# `make clean` removes it.
DEFAULT_CACHE = KIT_ROOT / ".cache" / "selfcheck"


# What a catalogue grading reads, and nothing else, so a re-release regrades only what a change can affect:
# the engine that grades (not the release, the cohort, the platforms' packaging or the templates: a grading
# never imports them), and of the assignment everything but its handout, its lab notebook and its variants
# and corpus (each source graded is hashed with its own key in grade_sources, so editing one variant regrades
# that variant alone). The mistakes stay in: the diagnosis replays them in every grading. course.toml is not
# read by a grading. The proofs that run the built zips key on those zips' bytes (zip_proofs.Proven).
NOT_READ_BY_GRADING = ("release", "cohort", "platforms", "templates")
NOT_GRADED = ("handout.md", "notebook.py", "variants", "corpus")


# assignments/<a>/do_nothing.py: the submission that computes nothing (uniform weights, zero outputs, constant
# answers), appended to the reference; the self-check proves it earns no point.
DO_NOTHING = "do_nothing.py"


def do_nothing_source(assignment: Assignment) -> str | None:
    """The reference with every function redefined to compute nothing (None: the assignment has no do_nothing.py)."""
    path = assignment.root / DO_NOTHING
    if not path.is_file():
        return None
    return assignment.solution.read_text() + "\n\n" + path.read_text()


def bugged_source(assignment: Assignment, entry: CatalogueEntry) -> str:
    """A corpus entry with its one declared bug injected: the text must occur exactly once in the
    code after the BUG declaration (the docstring and the declaration may quote it)."""
    text = entry.path.read_text()
    declared = [
        n for n in ast.parse(text).body if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") in ("BUG", "BUG_NAMES")
    ]
    lines = text.splitlines(keepends=True)
    split = max(n.end_lineno for n in declared) if declared else 0
    head, code = "".join(lines[:split]), "".join(lines[split:])
    old, new = entry.bug
    if code.count(old) != 1:
        raise ConfigError(f"corpus {entry.name}: BUG text {old!r} must occur exactly once in its code (found {code.count(old)})")
    code = code.replace(old, new, 1)
    return assignment.solution.read_text() + f"\n\n# ---- corpus with a bug: {entry.name} ----\n" + head + code


def _hash_tree(h: Any, root: Path, skip: tuple[str, ...] = ()) -> None:
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and "__pycache__" not in rel.parts and rel.parts[0] not in skip:
            h.update(str(rel).encode())
            h.update(path.read_bytes())


def _fingerprint(assignment: Assignment) -> str:
    """The hash of everything a grading of ``assignment`` reads (the cache key's base; see NOT_READ_BY_GRADING)."""
    h = hashlib.sha256()
    _hash_tree(h, ENGINE, NOT_READ_BY_GRADING)
    _hash_tree(h, assignment.root, NOT_GRADED)
    _hash_tree(h, assignment.solution.parent)
    h.update((KIT_ROOT / "requirements.txt").read_bytes())
    # the interpreter and the installed versions of what grading imports can change a result too
    h.update(f"{sys.executable} {sys.version}".encode())
    for package in ("torch", "numpy", "pytest", "psutil", "einops", "nbclient", "ipykernel", "matplotlib", "otter-grader"):
        try:
            h.update(f"{package}=={importlib.metadata.version(package)}".encode())
        except importlib.metadata.PackageNotFoundError:
            h.update(f"{package} missing".encode())
    return h.hexdigest()


def proofs_fingerprint(assignment: Assignment, grading: str | None = None) -> str:
    """The base key of the slow proofs that run what the release built (notebook, another seed, the platforms'
    simulated trees): what a grading reads (``grading``, :func:`_fingerprint`) and the code that builds and runs
    those artefacts. Each proof adds the hash of the artefact it runs (zip_proofs.artefact_hash)."""
    h = hashlib.sha256((grading or _fingerprint(assignment)).encode())
    for folder in ("release", "platforms", "templates"):
        _hash_tree(h, ENGINE / folder)
    return h.hexdigest()


def grade_sources(
    assignment: Assignment,
    sources: dict[str, str],
    jobs_n: int = 0,
    only: dict[str, list[str]] | None = None,
    cache: Path = DEFAULT_CACHE,
    fingerprint: str | None = None,
    exitfirst: bool = False,
    cached_only: bool = False,
) -> dict[str, dict]:
    """Grade each ``{label: source}`` through the real CLI (isolated worker), in parallel, cached.

    ``only[label]`` restricts that source's grading to the listed tests; ``fingerprint`` is
    ``_fingerprint(assignment)`` when the caller has it already. ``cached_only``: grade nothing, return
    the gradings already in the cache (the labels not graded yet are left out).
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
    if cached_only:
        return results
    # the slowest first, so two grader processes finish together: whole-suite gradings, then the rest
    todo.sort(key=lambda item: item[0] in only)

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
            if _cacheable(document):
                temporary = cached.with_name(f".{cached.name}.{os.getpid()}.tmp")
                temporary.write_text(json.dumps(document))
                temporary.replace(cached)
            results[label] = document
    return results


# A load that hung, ran out of memory or crashed may be the machine's doing (a loaded machine): never cached.
UNSTABLE_LOADS = ("timeout", "memory", "crash")


def _cacheable(document: dict) -> bool:
    """Never cached: a grading that broke, did not finish or was stopped stuck, or one where the student's code
    ran out of time or memory or crashed (a loaded machine can cause that; the next release grades it again)."""
    extra = document.get("extra_data", {})
    return (
        document["_exit_code"] == 0
        and not extra.get("stopped")
        and extra.get("load") not in UNSTABLE_LOADS
        and extra.get("kind") not in ("grader-error", "unfinished", "stopped")
    )


def _with_exit_code(document: dict | None) -> dict:
    """The results document (None: the grader wrote none) with ``_exit_code`` 1 if the grading itself broke."""
    if document is None:
        return {"score": None, "tests": [], "_exit_code": 1}
    document["_exit_code"] = 1 if document.get("extra_data", {}).get("config_errors") else 0
    return document


def catalogue_sources(assignment: Assignment) -> tuple[dict[str, str], dict[str, list[str]], list[str]]:
    """What the self-check grades: ``{label: source}`` (stub, do-nothing, every mistake, variant,
    corpus entry and corpus entry with its bug), the tests each mistake and each corpus entry with its bug
    runs against, and the corpus entries whose BUG could not be applied."""
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
    # training tests are most of the time), and so does a corpus entry with its bug, against the tests of the
    # mistakes it may be named as (its BUG_NAMES); the reference, the stub, the variants and the corpus run
    # everything.
    only = {f"mistake:{e.name}": [k for k in e.caught_by if k in assignment.points] for e in mistakes}
    caught_by = {e.name: e.caught_by for e in mistakes}
    for entry in corpus:
        tests = sorted({k for name in entry.bug_names for k in caught_by.get(name, []) if k in assignment.points})
        if f"corpus-bug:{entry.name}" in sources and tests and all(name in caught_by for name in entry.bug_names):
            only[f"corpus-bug:{entry.name}"] = tests
    return sources, only, bug_errors
