"""The proofs on the graded catalogue: the reference, the stub, do-nothing, variants, corpus and every mistake.

One job: the self-check's ``gradings`` proofs (registered with :func:`.proofs.proof`), each
reading the results documents :func:`.catalogue_grading.grade_sources` produced for the
assignment's catalogue (and the reference's, graded by the autograder.zip in a simulated
Gradescope tree), and :func:`mistake_table`, the mutation table the release prints and
writes into docs/measurements/catalogue.md.
"""

from __future__ import annotations

from .catalogue_grading import DO_NOTHING
from .caught_by import declarations_match, where
from .caught_by import lost_by_test as _lost_by_test
from .caught_by import named as _named
from .proofs import Evidence, Report, proof


@proof("the autograder.zip grades the reference 100 in a simulated Gradescope tree")
def reference_scores_100(evidence: Evidence, report: Report) -> None:
    ref = evidence.graded["reference"]
    report.check(
        ref.get("score") == 100 and ref.get("_exit_code") == 0,
        f"autograder.zip grades the reference 100 in a simulated Gradescope tree (got {ref.get('score')})",
    )


@proof("the untouched stub scores 0 without grader errors, and its feedback says what is not implemented yet")
def stub_scores_0(evidence: Evidence, report: Report) -> None:
    stub = evidence.graded["stub"]
    report.check(
        stub.get("score") == 0 and stub.get("_exit_code") == 0 and len(stub.get("tests", [])) > 0,
        f"untouched stub scores 0 without grader errors (got {stub.get('score')}, exit {stub.get('_exit_code')})",
    )
    report.check(
        any("not implemented yet" in t.get("output", "") for t in stub.get("tests", [])),
        "the untouched stub's feedback says what is not implemented yet",
    )


@proof("the points of all tests, parametrized cases included, add up to exactly 100 in any order")
def points_add_up(evidence: Evidence, report: Report) -> None:
    maxima = [t["max_score"] for t in evidence.graded["stub"].get("tests", [])]
    report.check(
        sum(maxima) == 100 and sum(reversed(maxima)) == 100,
        f"the points of all tests, parametrized cases included, add up to exactly 100 in any order (got {sum(maxima)!r})",
    )


@proof(f"a submission that computes nothing (`{DO_NOTHING}`: uniform weights, zero outputs, constant answers) earns no point")
def do_nothing_earns_nothing(evidence: Evidence, report: Report) -> None:
    nothing = evidence.graded.get("do-nothing")
    if nothing is None:
        report.check(False, f"assignments/{evidence.assignment.name}/{DO_NOTHING} declares a submission that computes nothing")
        return
    paid = {t.get("extra_data", {}).get("test", t["name"]): t["score"] for t in nothing.get("tests", []) if t["score"] > 0}
    report.check(
        nothing.get("score") == 0 and nothing.get("_exit_code") == 0 and not paid,
        f"a submission that computes nothing ({DO_NOTHING}) earns no point (got {nothing.get('score')}"
        + (f", paid by {paid}" if paid else "")
        + ")",
    )


@proof("every correct variant (`variants/`: other styles) and corpus entry (`corpus/`: public code) scores 100")
def correct_styles_score_100(evidence: Evidence, report: Report) -> None:
    for entry in evidence.variants:
        doc = evidence.graded[f"variant:{entry.name}"]
        report.check(doc.get("score") == 100, f"variant {entry.name} ({entry.title}) scores 100 (got {doc.get('score')})")
    for entry in evidence.corpus:
        doc = evidence.graded[f"corpus:{entry.name}"]
        report.check(doc.get("score") == 100, f"corpus {entry.name} ({entry.title}) scores 100 (got {doc.get('score')})")


@proof(
    "each corpus entry with its one declared `BUG` loses points in the tests of the mistakes it may be named as "
    "(`BUG_NAMES`; their `CAUGHT_BY`, as a mistake is graded) and is named correctly or not at all there"
)
def corpus_bugs_lose_points(evidence: Evidence, report: Report) -> None:
    for entry in evidence.corpus:
        bugged = evidence.graded.get(f"corpus-bug:{entry.name}")
        if bugged is None:
            report.check(False, f"corpus {entry.name} declares one injected BUG = (text, replacement)")
            continue
        named = sorted(_named(bugged))
        wrong = [m for m in named if m not in entry.bug_names]
        lost = round(sum(_lost_by_test(bugged).values()), 2)
        report.check(
            lost > 0 and bugged.get("_exit_code") == 0 and not wrong,
            f"corpus {entry.name} with its bug loses points ({lost:g}) and is named "
            f"correctly or not at all (named {named or 'nothing'}; allowed {entry.bug_names or 'nothing'})",
        )
    for problem in evidence.bug_errors:
        report.check(False, problem)


@proof("the reference, the variants and the corpus are diagnosed with no mistake")
def correct_code_not_diagnosed(evidence: Evidence, report: Report) -> None:
    labels = ("reference", *(f"variant:{e.name}" for e in evidence.variants), *(f"corpus:{e.name}" for e in evidence.corpus))
    for label in labels:
        named = _named(evidence.graded[label])
        report.check(not named, f"{label} is not diagnosed with any mistake" + (f" (got {sorted(named)})" if named else ""))


@proof("every catalogued mistake loses points in each test its `CAUGHT_BY` names (a mistake is graded on those tests only)")
def mistakes_caught(evidence: Evidence, report: Report) -> None:
    points = evidence.assignment.points
    for entry in evidence.mistakes:
        doc = evidence.graded[f"mistake:{entry.name}"]
        lost = _lost_by_test(doc)
        missing = [k for k in entry.caught_by if k not in lost]
        unknown = [k for k in entry.caught_by if k not in points]
        total_lost = round(sum(lost.values()), 2)
        report.check(
            total_lost > 0 and doc.get("_exit_code") == 0 and not missing and not unknown and bool(entry.caught_by),
            f"mistake {entry.name} ({where(entry)}) loses points in the tests that claim to catch it ({total_lost:g})"
            + (f"; NOT caught by declared {missing}" if missing else "")
            + (f"; declares unknown tests {unknown}" if unknown else "")
            + ("; declares no CAUGHT_BY" if not entry.caught_by else ""),
        )


@proof("every catalogued mistake is named in the feedback of the submission that contains it")
def mistakes_named(evidence: Evidence, report: Report) -> None:
    for entry in evidence.mistakes:
        doc = evidence.graded[f"mistake:{entry.name}"]
        diagnosed = entry.name in _named(doc)
        passed = [k for k in entry.caught_by if k not in _lost_by_test(doc)]
        if diagnosed:
            why = ""
        elif passed:  # the cause is the declaration, not the test: a declared test it passes rules it out
            why = (
                f" (it is not: its CAUGHT_BY names {passed}, which it passes, and the diagnosis rules out a mistake "
                f"whose declared tests pass; `python -m autograder caught-by --write {evidence.assignment.name}` rewrites "
                "the list)"
            )
        else:
            why = (
                " (it is not: the check it fails needs a value to compare, `got=` on expect_true, and the test must draw its"
                " inputs from `gen`/`seed` so that running it again on the mistake sees the same ones; see assignments/README.md)"
            )
        report.check(diagnosed, f"mistake {entry.name} ({where(entry)}) is named in the feedback" + why)


proof(
    "every catalogued mistake's `CAUGHT_BY` is the tests it loses points in, wherever the release knows its grading on "
    "every test (`python -m autograder caught-by --write <a>` rewrites the lists)"
)(declarations_match)


@proof("every hidden test catches at least one catalogued mistake (or `[uncaught]` in `assignment.toml` says why not)")
def hidden_tests_catch_mistakes(evidence: Evidence, report: Report) -> None:
    assignment = evidence.assignment
    hidden_keys = {k for k in assignment.points if k.startswith("hidden/")}
    caught_keys: set[str] = set()
    for entry in evidence.mistakes:
        caught_keys |= set(_lost_by_test(evidence.graded[f"mistake:{entry.name}"]))
    uncaught = sorted(hidden_keys - caught_keys - set(assignment.uncaught))
    report.check(
        not uncaught, "every hidden test catches at least one catalogued mistake" + (f" (not: {uncaught})" if uncaught else "")
    )


@proof("every function of the stub is named by a test (or `[untested_functions]` in `assignment.toml` says how it is graded)")
def every_function_is_tested(evidence: Evidence, report: Report) -> None:
    from .functions import untested

    missing = untested(evidence.assignment)
    report.check(
        not missing,
        "every function of the stub is named by a test"
        + (
            f' (not: {missing}: write a test that declares it, `@pytest.mark.grades("<function>")`, or say in '
            "[untested_functions] how it is graded)"
            if missing
            else ""
        ),
    )


@proof('every test declares the function it grades (`@pytest.mark.grades("<function>")`, or the file\'s `pytestmark`)')
def every_test_declares_its_function(evidence: Evidence, report: Report) -> None:
    from .functions import undeclared_tests

    missing = undeclared_tests(evidence.assignment)
    report.check(
        not missing,
        "every test declares the function it grades"
        + (
            f' (not: {missing}: add `@pytest.mark.grades("<function>")` above each, or '
            '`pytestmark = pytest.mark.grades("<function>")` to a file whose tests all grade one function)'
            if missing
            else ""
        ),
    )


@proof("the catalogue has at least 10 mistakes, and `corpus/`, when there is one, at least 3 implementations")
def catalogue_is_large_enough(evidence: Evidence, report: Report) -> None:
    report.check(len(evidence.mistakes) >= 10, f"at least 10 catalogued mistakes ({len(evidence.mistakes)})")
    if evidence.corpus:
        report.check(len(evidence.corpus) >= 3, f"at least 3 independent implementations in corpus/ ({len(evidence.corpus)})")


def mistake_table(evidence: Evidence) -> list[tuple[str, str, float, str]]:
    """One row per mistake: (name, the tests that catch it, points lost, "yes"/"no" named in the feedback)."""
    rows = []
    for entry in evidence.mistakes:
        doc = evidence.graded[f"mistake:{entry.name}"]
        lost = _lost_by_test(doc)
        named = "yes" if entry.name in _named(doc) else "no"
        rows.append((entry.name, ", ".join(sorted(k.split("::")[1] for k in lost)), round(sum(lost.values()), 2), named))
    return rows
