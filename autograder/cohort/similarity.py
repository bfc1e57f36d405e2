"""Similar pairs in a cohort: how much code two submissions of one assignment share (copydetect).

One job: measure. After grading, on the files that were graded (as graded: grade-all keeps each in
``--out/sources/``; without it, the file the grader picks from each upload, read the same way, never
run), each in its canonical form (:func:`canonical`: parsed, the statements that do nothing left out,
written back by ``ast.unparse``, so a no-op after every line or a name in parentheses changes nothing;
each file read in a child of its own, ``grading.bounded``, and one that cannot be is said, not
compared), copydetect tokenises each file (every name becomes ``V``/``F``/``O``, strings ``S``,
comments and blank space vanish, so renaming variables or re-spacing changes nothing), keeps winnowed
fingerprints of its 25-character runs, and compares every pair. The assignment's stub (``markers.make_stub`` of the reference) and its reference are
boilerplate: a run found in either never counts, so the provided code, the contract's signatures
and a correct solution's converging lines are not similarity. Only the submissions that count are
compared (the latest per student), and never two that share a student (a group's members, a
student's own uploads).

A pair's score is the larger of its two shares. A file's share is the part of the code its
student wrote (the file but the stub, tokenised) that is also in the other file and is not the
reference's: copydetect's count of shared runs over the student's own code, not over what the
boilerplate left, so a file of mostly the reference's lines scores low however alike its few other
lines are (reordered functions alone would otherwise score high), and a whole copy of a student's
own solution near 1. The lines the shared passages touch are given too.
It is evidence for a person to look at: nothing here changes a grade. similarity.csv and the
side-by-side pages are :mod:`.similarity_pages`; the dashboard's section is :mod:`.report`.
"""

from __future__ import annotations

import ast
import io
import shutil
import tempfile
import time
from bisect import bisect_right
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np

from ..config import KIT_ROOT, Assignment, ConfigError
from ..grading.bounded import Unreadable, bounded

SOURCES = "sources"  # grade-all's --out/sources/<submission id>.py: each file as its grading graded it
SETTINGS_KEYS = ("threshold", "top")
DEFAULT_THRESHOLD = 0.5  # pairs sharing at least half of one file's own code
DEFAULT_TOP = 20  # the most similar pairs shown on the dashboard, each with its side-by-side page
NOISE = 25  # copydetect's noise threshold: the shortest matching run (in tokenised characters) that counts
GUARANTEE = 30  # copydetect's guarantee threshold: a match this long is always found (winnowing window 6)
# Said once, on the dashboard and on every side-by-side page.
EVIDENCE = (
    "Similarity is evidence for a person to look at, never a flag: it changes no grade, "
    "and two students can write alike honestly."
)


@dataclass(frozen=True)
class SimilaritySettings:
    """course.toml's ``[similarity]``: report pairs scoring at least ``threshold``, ``top`` of them on the dashboard."""

    threshold: float = DEFAULT_THRESHOLD
    top: int = DEFAULT_TOP


def load_settings(kit_root: Path = KIT_ROOT, path: Path | None = None) -> SimilaritySettings:
    """``[similarity]`` of course.toml (or of the course file ``path``), checked (a threshold in [0, 1], a top count of 0 or more)."""
    from ..release.course import read_table

    table = read_table("similarity", SETTINGS_KEYS, kit_root, path)
    threshold, top = table.get("threshold", DEFAULT_THRESHOLD), table.get("top", DEFAULT_TOP)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise ConfigError(f"course.toml: similarity.threshold = {threshold!r}: a number from 0 to 1 (e.g. 0.5)")
    if isinstance(top, bool) or not isinstance(top, int) or top < 0:
        raise ConfigError(f"course.toml: similarity.top = {top!r}: a whole number of pairs (e.g. 20)")
    return SimilaritySettings(float(threshold), top)


@dataclass
class Pair:
    """Two submissions and what they share: ``spans_*`` are (start, end) character slices of each source."""

    a: str  # submission id
    b: str
    score: float  # max(share_a, share_b)
    share_a: float  # the fraction of a's own code (the file but the stub) also in b and not the reference's
    share_b: float
    tokens: int  # tokenised characters of a in shared runs
    lines_a: int  # lines of a the shared passages touch
    lines_b: int
    spans_a: list[tuple[int, int]] = field(default_factory=list)
    spans_b: list[tuple[int, int]] = field(default_factory=list)
    page: str = ""  # the side-by-side page under --out, when written


@dataclass
class Similarity:
    """The cohort's pairs at or above the threshold, most similar first, and what was measured."""

    settings: SimilaritySettings
    pairs: list[Pair] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)  # submission id -> the graded file's text
    skipped: list[str] = field(default_factory=list)  # counting submissions without a readable file
    unread: dict[str, str] = field(default_factory=dict)  # of those, each one whose file could not be read: why
    compared: int = 0  # pairs compared
    seconds: float = 0.0
    unavailable: str = ""  # why nothing was measured (copydetect is not installed)


def graded_source(assignment: Assignment, upload: Path) -> str | None:
    """The text of the file the grader grades in ``upload`` (found, unpacked and normalised as
    grading does, never run), or None when the upload holds none."""
    from ..grading.submission import SubmissionProblem, UnpackBudget, find_submission_file, normalise_source

    workdir = Path(tempfile.mkdtemp(prefix="kit-similarity-"))
    try:
        found, _ = find_submission_file(upload, assignment.submit_file, workdir, UnpackBudget(), assignment.graded_functions)
        normalise_source(found, workdir / "normalised.py")
        return (workdir / "normalised.py").read_text(encoding="utf-8")
    except (SubmissionProblem, OSError, UnicodeDecodeError):
        return None
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def _no_op(node: ast.stmt) -> bool:
    """``pass``, an expression computed and dropped that calls nothing (a constant, a name, ``a + b``), ``x = x``."""
    if isinstance(node, ast.Expr):
        return not any(isinstance(n, (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)) for n in ast.walk(node))
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
        return all(isinstance(t, ast.Name) and t.id == node.value.id for t in node.targets)
    return isinstance(node, ast.Pass)


def canonical(text: str) -> str | None:
    """The code as compared: parsed, its statements that do nothing left out (a body left empty keeps one ``pass``),
    written back by ``ast.unparse`` (one spelling: redundant parentheses, spacing and comments vanish); None when
    it does not parse (the text is compared as it is)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            statements = getattr(node, name, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                kept = [s for s in statements if not _no_op(s)]
                setattr(node, name, kept or ([ast.Pass()] if name == "body" and not isinstance(node, ast.Module) else []))
    return ast.unparse(tree) + "\n"


def _compared_text(assignment: Assignment, sub, sources: Path | None) -> str | None:
    """The file a submission's grading graded (kept by grade-all in ``sources``; read again from the upload when
    it kept none), in its canonical form, read in a child of its own (``grading.bounded``); None when there is none."""
    kept = sources / f"{sub.sid}.py" if sources is not None else None
    if kept is not None and kept.is_file():
        text = kept.read_text(encoding="utf-8", errors="replace")
    else:
        text = graded_source(assignment, Path(sub.path))
    if text is None:
        return None
    found = bounded(canonical, text)
    return found if isinstance(found, str) else text


def _kgram_hashes(text: str, k: int) -> np.ndarray:
    """64-bit hashes of every ``k``-character run of ``text``, the same in every process (copydetect's
    own use Python's ``hash``, which changes with each interpreter's hash seed, and so would the scores)."""
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    n = len(codes) - k + 1
    if n <= 0:
        return np.array([], dtype=np.int64)
    h = np.zeros(n, dtype=np.uint64)
    for j in range(k):  # a polynomial hash mod 2**64 (uint64 arithmetic wraps), then splitmix64's mixer
        h = h * np.uint64(1_000_003) + codes[j : j + n]
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h.view(np.int64)


@contextmanager
def _stable_hashes():
    """copydetect (0.5.0, pinned) fingerprints with :func:`_kgram_hashes` for the duration."""
    from copydetect import utils

    original = utils.hashed_kgrams
    utils.hashed_kgrams = _kgram_hashes
    try:
        yield
    finally:
        utils.hashed_kgrams = original


def _fingerprint(text: str, boilerplate: np.ndarray | None = None, window: int = GUARANTEE - NOISE + 1):
    from copydetect import CodeFingerprint

    return CodeFingerprint("submission.py", NOISE, window, boilerplate, language="python", fp=io.StringIO(text))


def _spans(slices) -> list[tuple[int, int]]:
    return [(int(s), int(e)) for s, e in zip(*slices)] if len(slices) == 2 and len(slices[0]) else []


def _own_length(fingerprint, stub: np.ndarray) -> int:
    """How much of the file (tokenised characters) the student wrote: all of it but the runs that are the stub's."""
    text = fingerprint.filtered_code
    starts = np.nonzero(np.isin(_kgram_hashes(text, NOISE), stub))[0]
    provided = np.zeros(len(text), dtype=bool)
    for offset in range(NOISE):
        provided[starts + offset] = True
    return len(text) - int(provided.sum())


def _share(fingerprint, shared: set, own: int) -> tuple[float, int]:
    """(the share of the student's own code in the runs this file shares, those runs' length in
    tokenised characters): copydetect's count (the union of the ``NOISE``-long runs at each shared
    fingerprint, as its ``compare_files``, which runs only for the pairs reported) over ``own``, what
    the student wrote (the file but the stub), not over what boilerplate left."""
    covered, end = 0, -1
    for start in sorted(int(i) for h in shared for i in fingerprint.hash_idx[h]):
        covered += NOISE if start >= end else start + NOISE - end
        end = start + NOISE
    return (min(1.0, covered / own) if own > 0 else 0.0), covered


def _lines(source: str, spans: list[tuple[int, int]]) -> int:
    """How many lines of ``source`` the shared passages touch."""
    starts = [0] + [i + 1 for i, c in enumerate(source) if c == "\n"]
    touched: set[int] = set()
    for start, end in spans:
        touched.update(range(bisect_right(starts, start) - 1, bisect_right(starts, max(start, end - 1))))
    return len(touched)


def _fingerprints(assignment: Assignment, result: Similarity) -> tuple[dict, dict[str, int]]:
    """({submission id: its copydetect fingerprint, the stub's and the reference's runs removed as
    boilerplate}, {submission id: the length of its own code, the file but the stub}); a file copydetect
    cannot read is left out, and said (``result.unread``)."""
    from ..release.markers import make_stub

    reference = assignment.solution.read_text()
    prints, own = {}, {}
    with _stable_hashes():
        stub, answer = (
            np.array(sorted(_fingerprint(canonical(t) or t, window=1).hashes), dtype=np.int64)
            for t in (make_stub(reference), reference)
        )
        for sid, text in list(result.sources.items()):
            try:
                prints[sid] = _fingerprint(text, np.union1d(stub, answer))
                own[sid] = _own_length(prints[sid], stub)
            except Exception as exc:  # noqa: BLE001 - one student's file: said on its row, the others compared
                prints.pop(sid, None)
                result.sources.pop(sid)
                result.skipped.append(sid)
                result.unread[sid] = f"copydetect could not read it ({type(exc).__name__})"
    return prints, own


def measure(assignment: Assignment, subs: list, settings: SimilaritySettings, sources: Path | None = None) -> Similarity:
    """Compare every pair of the counting submissions that share no student; keep those at or above the threshold.
    ``sources``: the folder where grade-all kept each file graded (``<submission id>.py``)."""
    from .cohort import student_keys

    result = Similarity(settings)
    started = time.monotonic()
    try:
        from copydetect import compare_files
    except ImportError:
        result.unavailable = "copydetect is not installed in this venv (`make venv` installs requirements-dev.txt)"
        return result
    counting = [s for s in subs if not getattr(s, "superseded_by", "") and Path(s.path).exists()]
    for s in counting:  # each submission read on its own: one that cannot be is said, and the others compared
        try:
            text = _compared_text(assignment, s, sources)
        except Unreadable as exc:
            text, result.unread[s.sid] = None, f"its file {exc.said()}"
        except Exception as exc:  # noqa: BLE001 - one student's upload, never the class's report
            text, result.unread[s.sid] = None, f"its file could not be read ({type(exc).__name__}: {str(exc)[:200]})"
        if text is None:
            result.skipped.append(s.sid)
        else:
            result.sources[s.sid] = text
    prints, own = _fingerprints(assignment, result)
    people = {s.sid: set(student_keys(s)) for s in counting}
    for a, b in combinations(sorted(prints), 2):
        if people[a] & people[b]:
            continue  # one student's own submissions, or a group's: not a pair
        result.compared += 1
        shared = prints[a].hashes & prints[b].hashes
        if not shared:
            continue
        (share_a, tokens), (share_b, _) = _share(prints[a], shared, own[a]), _share(prints[b], shared, own[b])
        if max(share_a, share_b) >= settings.threshold:  # copydetect's own comparison, for the passages' places
            _, _, (slices_a, slices_b) = compare_files(prints[a], prints[b])
            spans_a, spans_b = _spans(slices_a), _spans(slices_b)
            lines = (_lines(result.sources[a], spans_a), _lines(result.sources[b], spans_b))
            result.pairs.append(Pair(a, b, max(share_a, share_b), share_a, share_b, tokens, *lines, spans_a, spans_b))
    result.pairs.sort(key=lambda p: (-p.score, -p.tokens, p.a, p.b))
    result.seconds = time.monotonic() - started
    return result
