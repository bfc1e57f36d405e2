"""Whether each mistake's ``CAUGHT_BY`` says what a submission with it really loses, the list that would, and
writing that list back.

The release grades each catalogued mistake on its ``CAUGHT_BY`` tests only (the proofs need nothing else, and
the training tests are most of the time), so it cannot see a mistake that also fails other tests: there a real
submission's feedback names no mistake (the diagnosis replays a test only on the mistakes that claim it) and it
loses more than the release's table says (seq2seq's ``attend_no_scaling``: 15 points in its three declared
tests, 67 in a whole grading). Nor does a mistake graded on its declared tests show why it is "not named": a
declared test it passes makes the diagnosis rule it out everywhere (it predicts a failure that did not happen).

:func:`whole_suite` grades mistakes on every test (cached like every grading, on the whole suite's key);
:func:`disagreement` compares that grading with the declaration (the tests it fails that the list misses, the
listed tests it passes) and :func:`proposal` gives the ``CAUGHT_BY`` that matches (every test it loses points
in, in the assignment's order). The self-check grades on the whole suite the mistakes whose proofs failed
(:func:`known_whole`: the others' whole-suite gradings only when in the cache) and REFUSES a mistake whose
known grading disagrees with its list (:func:`declarations_match`, a proof registered in
:mod:`.catalogue_proofs`); ``python -m autograder caught-by <a>`` (``make caught-by``) grades them all and,
with ``--write``, rewrites each list that disagrees in its mistake file (:func:`rewrite_caught_by`).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Callable

from ..catalogue import CatalogueEntry, read_catalogue, submission_source
from ..config import KIT_ROOT, Assignment, ConfigError
from .catalogue_grading import UNSTABLE_LOADS
from .proofs import Evidence, Report

Grade = Callable[..., dict]  # catalogue_grading.grade_sources (the self-check's tests hand in a fake)


def lost_by_test(document: dict) -> dict[str, float]:
    """{test key: points lost}, a test's parametrized cases together."""
    lost: dict[str, float] = {}
    for t in document.get("tests", []):
        key = t.get("extra_data", {}).get("test", t["name"])
        lost[key] = lost.get(key, 0.0) + t["max_score"] - t["score"]
    return {k: round(v, 4) for k, v in lost.items() if v > 1e-9}


def named(document: dict) -> set[str]:
    return {m for t in document.get("tests", []) for m in t.get("extra_data", {}).get("mistakes", [])}


def where(entry: CatalogueEntry) -> str:
    """The entry's file, as the author finds it (relative to the kit when it is inside)."""
    try:
        return str(Path(entry.path).resolve().relative_to(KIT_ROOT.resolve()))
    except ValueError:
        return str(entry.path)


def whole_suite(
    assignment: Assignment, entries: list[CatalogueEntry], grade: Grade, cache: Path, fingerprint: str, run: bool
) -> dict[str, dict]:
    """{mistake: its grading on every test}: graded now (``run``) or only those already in the cache."""
    if not entries:
        return {}
    sources = {f"mistake:{e.name}": submission_source(assignment, e) for e in entries}
    docs = grade(assignment, sources, cache=cache, fingerprint=fingerprint, cached_only=not run)
    return {label.split(":", 1)[1]: doc for label, doc in docs.items() if label in sources}


def proposal(assignment: Assignment, document: dict) -> list[str]:
    """The tests a whole-suite grading lost points in, in the assignment's order: the CAUGHT_BY that matches."""
    lost = lost_by_test(document)
    return [k for k in assignment.points if k in lost]


def usable(document: dict) -> bool:
    """A grading to go by: the grader did not break, and the code did not run out of time or memory."""
    extra = document.get("extra_data", {})
    return document.get("_exit_code", 0) == 0 and not extra.get("stopped") and extra.get("load") not in UNSTABLE_LOADS


def disagreement(assignment: Assignment, entry: CatalogueEntry, document: dict) -> tuple[list[str], list[str]]:
    """(the tests its whole-suite grading loses points in that CAUGHT_BY misses, the declared tests it passes);
    both empty when the declaration is right, or when the grading is not one to go by (:func:`usable`)."""
    if not usable(document):
        return [], []
    lost = lost_by_test(document)
    declared = set(entry.caught_by)
    return [k for k in assignment.points if k in lost and k not in declared], [k for k in entry.caught_by if k not in lost]


def matching_list(assignment: Assignment, entry: CatalogueEntry, document: dict) -> list[str]:
    """The CAUGHT_BY ``--write`` gives: the declared tests it fails, in their order, then those it also fails
    (in the assignment's order); the smallest edit of the file that matches."""
    wanted = proposal(assignment, document)
    return [k for k in entry.caught_by if k in wanted] + [k for k in wanted if k not in entry.caught_by]


def _short(keys: list[str]) -> str:
    return ", ".join(k.split("::")[-1] for k in keys)


def advice(assignment: Assignment, entry: CatalogueEntry, document: dict, full: bool = True) -> str:
    """What the declaration of ``entry`` gets wrong, given its whole-suite grading ("" when it is right, or
    when the grading is not one to go by). ``full``: with the test ids and the CAUGHT_BY that matches; else one
    short line that says where to get them."""
    outside, passed = disagreement(assignment, entry, document)
    if not outside and not passed:
        return ""
    lost = lost_by_test(document)
    parts = []
    declared_loss = sum(v for k, v in lost.items() if k in set(entry.caught_by))
    if not full:
        if outside:
            parts.append(
                f"also loses points outside its CAUGHT_BY, in {_short(outside)} ({sum(lost.values()):g} points in all, "
                f"not the {declared_loss:g} of its declared tests)"
            )
        if passed:
            parts.append(f"CAUGHT_BY names {_short(passed)}, which it passes (so it is named nowhere)")
        how = f"`python -m autograder caught-by {assignment.name}` prints the CAUGHT_BY that matches"
        return f"mistake {entry.name} ({where(entry)}): " + "; ".join(parts) + f"; {how}"
    if outside:
        parts.append(
            f"also loses points in {len(outside)} test(s) outside its CAUGHT_BY: {outside} (their feedback names no "
            f"mistake there); a submission with it loses {sum(lost.values()):g} points, not the {declared_loss:g} of "
            "its declared tests (the release's table)"
        )
    if passed:
        parts.append(
            f"CAUGHT_BY names {passed}, which it passes: the diagnosis rules out a mistake whose declared tests "
            "pass, so it is named nowhere"
        )
    matching = proposal(assignment, document)
    fix = f"CAUGHT_BY = {matching!r} matches what it fails" if matching else "it fails no test: no CAUGHT_BY can match"
    return f"mistake {entry.name} ({where(entry)}): " + "; ".join(parts) + f". {fix}"


def suspect(entry: CatalogueEntry, declared_document: dict) -> bool:
    """The release's grading on the declared tests shows something off: a declared test it passes, no point
    lost, or the mistake named nowhere (its proofs fail; the whole suite says why)."""
    lost = lost_by_test(declared_document)
    return not lost or any(k not in lost for k in entry.caught_by) or entry.name not in named(declared_document)


def known_whole(evidence: Evidence, grade: Grade, cache: Path, fingerprint: str) -> dict[str, dict]:
    """{mistake: its grading on every test} as far as the release knows it: the suspects' graded now, the
    others' when the cache has them (``caught-by`` put them there)."""
    assignment, mistakes = evidence.assignment, evidence.mistakes
    suspects = [e for e in mistakes if suspect(e, evidence.graded.get(f"mistake:{e.name}", {}))]
    whole = whole_suite(assignment, suspects, grade, cache, fingerprint, run=True)
    return whole | whole_suite(assignment, [e for e in mistakes if e.name not in whole], grade, cache, fingerprint, run=False)


def declarations_match(evidence: Evidence, report: Report) -> None:
    """The proof: every mistake whose whole-suite grading is known (``evidence.whole``) declares exactly the
    tests it loses points in; a refusal names the file, the tests missing and extra, and the command that
    rewrites the list. The mistakes graded on their CAUGHT_BY tests only get an advice line."""
    assignment, mistakes, whole = evidence.assignment, evidence.mistakes, evidence.whole
    name = assignment.name
    wrong = 0
    for entry in mistakes:
        if entry.name not in whole:
            continue
        missing, extra = disagreement(assignment, entry, whole[entry.name])
        if not missing and not extra:
            continue
        wrong += 1
        lost = lost_by_test(whole[entry.name])
        what = []
        if missing:
            declared = sum(v for k, v in lost.items() if k in set(entry.caught_by))
            what.append(
                f"misses {missing}, which it loses points in ({sum(lost.values()):g} points in all, not the {declared:g} of "
                "its declared tests; the feedback names no mistake there)"
            )
        if extra:
            what.append(f"names {extra}, which it passes (so the feedback names it nowhere)")
        fix = (
            f"run `python -m autograder caught-by --write {name}`"
            if proposal(assignment, whole[entry.name])
            else "it fails no test on the whole suite: no CAUGHT_BY can match; make the mistake lose points"
        )
        report.check(False, f"mistake {entry.name} ({where(entry)}): its CAUGHT_BY " + "; ".join(what) + f": {fix}")
    known = sum(1 for e in mistakes if e.name in whole)
    if not wrong:
        report.check(True, f"every CAUGHT_BY is the tests its mistake fails ({known} of {len(mistakes)} graded on every test)")
    if known < len(mistakes):
        report.lines.append(
            f"  [advice] {len(mistakes) - known} of {len(mistakes)} mistakes were graded on their CAUGHT_BY tests only: "
            f"`python -m autograder caught-by {name}` grades them on every test (cached: the next release "
            "checks their CAUGHT_BY too) and `caught-by --write` rewrites the lists that do not match"
        )


# -- writing the lists back (caught-by --write) ------------------------------------------------
LINE_LENGTH = 130  # pyproject.toml's ruff line-length


def format_caught_by(tests: list[str], one_line: bool = True) -> str:
    """``CAUGHT_BY = [...]``: on one line when ``one_line`` and it fits, else one test a line (as ruff formats it)."""
    flat = f"CAUGHT_BY = [{', '.join(json.dumps(t) for t in tests)}]"
    if (one_line and len(flat) <= LINE_LENGTH) or not tests:
        return flat
    return "CAUGHT_BY = [\n" + "".join(f"    {json.dumps(t)},\n" for t in tests) + "]"


def rewrite_caught_by(path: Path, tests: list[str]) -> bool:
    """Set the ``CAUGHT_BY`` of the mistake file ``path`` to ``tests``, leaving every other byte of the file as it
    was (a list on one line stays on one line while it fits); False when it already says that."""
    text = Path(path).read_text()
    tree = ast.parse(text, str(path))
    nodes = [n for n in tree.body if isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "CAUGHT_BY" for t in n.targets)]
    lines = text.splitlines(keepends=True)
    if not nodes:  # none declared: after the docstring
        after = tree.body[0].end_lineno if tree.body and isinstance(getattr(tree.body[0], "value", None), ast.Constant) else 0
        lines.insert(after or 0, format_caught_by(tests) + "\n")
        Path(path).write_text("".join(lines))
        return True
    node = nodes[-1]
    if ast.literal_eval(node.value) == tests:
        return False
    if "#" in (ast.get_source_segment(text, node) or ""):
        raise ConfigError(f"{path}: its CAUGHT_BY has comments inside; set it by hand to {tests!r}")
    start, end = _offset(lines, node.lineno, node.col_offset), _offset(lines, node.end_lineno, node.end_col_offset)
    Path(path).write_text(text[:start] + format_caught_by(tests, node.lineno == node.end_lineno) + text[end:])
    return True


def _offset(lines: list[str], lineno: int, col: int) -> int:
    """The character offset in the file of ``ast``'s (line, UTF-8 byte column)."""
    return sum(len(line) for line in lines[: lineno - 1]) + len(lines[lineno - 1].encode()[:col].decode())


def main(names: list[str], grade: Grade | None = None, write: bool = False) -> int:
    """``caught-by``: grade every mistake of each assignment on the whole suite; print each declaration that
    does not match, with the CAUGHT_BY that does; ``write``: rewrite those lists in their files. Exit 1 when a
    list does not match (after ``write``: when one could not be written, its mistake failing no test)."""
    from ..config import load_assignment
    from .catalogue_grading import DEFAULT_CACHE, _fingerprint, grade_sources

    grade = grade or grade_sources
    status = 0
    for name in names:
        assignment = load_assignment(name)
        mistakes = read_catalogue(assignment, "mistake")
        whole = whole_suite(assignment, mistakes, grade, DEFAULT_CACHE, _fingerprint(assignment), run=True)
        wrong = [(e, line) for e in mistakes if (line := advice(assignment, e, whole.get(e.name, {"_exit_code": 1})))]
        unfixed = 0
        for entry, line in wrong:
            tests = matching_list(assignment, entry, whole[entry.name])
            if write and tests:
                rewrite_caught_by(entry.path, tests)
                missing, extra = disagreement(assignment, entry, whole[entry.name])
                print(f"[{name}] wrote CAUGHT_BY of {entry.name} ({where(entry)}): added {missing}, removed {extra}")
            else:
                print(f"[{name}] {line}")
                unfixed += 1
        if write and len(wrong) > unfixed:
            _read_back(assignment, {e.name: matching_list(assignment, e, whole[e.name]) for e, _ in wrong})
        done = f", {len(wrong) - unfixed} rewritten" if write else ""
        print(f"[{name}] {len(mistakes) - len(wrong)} of {len(mistakes)} mistakes' CAUGHT_BY match the tests they fail{done}")
        status |= 1 if unfixed else 0
    return status


def _read_back(assignment: Assignment, expected: dict[str, list[str]]) -> None:
    """The catalogue read again as every command does: each rewritten list is what was meant."""
    entries = {e.name: e for e in read_catalogue(assignment, "mistake")}
    for mistake, tests in expected.items():
        if tests and entries[mistake].caught_by != tests:
            raise ConfigError(f"{entries[mistake].path}: CAUGHT_BY reads back as {entries[mistake].caught_by!r}, not {tests!r}")
