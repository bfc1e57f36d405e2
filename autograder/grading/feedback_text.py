"""The words of a grading, rendered from its record: each test's feedback and the summary by function.

One job, shared by every audience's renderer (Gradescope's results.json in :mod:`.results`, PrairieLearn's
in :mod:`.platforms.prairielearn_results`): :func:`feedback_texts` turns each :class:`.record.TestRecord` into
the text under the test (the check's own words, then what the comparison with the catalogue concluded,
then what the code printed), with a mistake explained once and pointed back to after; :func:`function_summary`
is what a student reads first. Nothing here reads text back: every part comes from the record's fields.
"""

from __future__ import annotations

from .record import GradingRecord, NamedMistake, TestRecord
from .summary_causes import fix_first, stop_words, stops, unwritten_lines
from .text_limits import bound_line, cut
from .text_limits import first_line as _first_line

# What a failed test says of the catalogue (record.DIAGNOSIS), beside the check's own words.
NO_MATCH = "(Your result matches none of the classic mistakes the grader knows; the details above say where it differs.)"
UNAVAILABLE = "(The grader could not compare your result with the classic mistakes it knows this time.)"
RESEMBLES = (
    "(Your result here is what the classic mistake \u201c{title}\u201d gives, but that mistake does not explain the "
    "rest of your results: other tests it fails pass, or it gives other wrong values elsewhere. Something else in "
    "your code differs; the details above say where.)"
)
PRINTED = "Your code printed:\n"
# A failed test that ran other functions of the file whose own tests fail (TestRecord.uses): where to look first.
ALSO_RUNS = "(This test also runs your {names}, which fail{s} tests of {own} own: the cause may be there.)"
SAME_AS = "(The same likely mistake{s} as in \u201c{name}\u201d above, explained there.)"
SEE_ABOVE = "(As in \u201c{name}\u201d above.)"  # a hedge or advice paragraph said whole in an earlier test
SIBLING = "(Otherwise as in its case {case} above.)"  # a case of a test whose earlier case is read whole
MIN_REPEATED = 80  # shorter paragraphs ("Expected 3, got 4.") are cheaper to repeat than to refer to
OUTPUT_LIMIT_PER_TEST = 4000
OUTPUT_LIMIT_TOTAL = 60000  # Gradescope cuts a results page at about 100,000 characters
OPEN = {"hidden": 0, "after_published": 1, "after_due_date": 2, "visible": 3}  # how soon a student sees a test
CATEGORY_CHARS = 240  # the categories of one function's lost hidden tests, on one line


# Two mistakes named on one test give the student's values there alike (the values cannot tell them apart):
# they are offered as alternatives, never both asserted.
ALTERNATIVES = "Likely mistake, one of these two (each gives your values here):"
# Several mistakes named on one test because only all of them together give the student's values there: their
# titles (each one's explanation is under the tests it fails on its own, and would not fit under each test).
TOGETHER = "Likely mistakes, which together give your values here: {titles}."


def explanation(names: list[str], named: dict[str, NamedMistake], together: bool = False) -> str:
    """ "Likely mistake: <title>. <explanation>" for a named mistake; two (at most) as alternatives, one per line,
    or (``together``) up to three that only together give the student's values."""
    entries = [named[n] for n in names[: 3 if together else 2] if n in named]
    if len(entries) == 1:
        return f"Likely mistake: {entries[0].title.rstrip('.')}. {entries[0].explanation}".strip()
    if together and entries:
        return TOGETHER.format(titles="; ".join(e.title.rstrip(".") for e in entries))
    lines = [f"- {e.title.rstrip('.')}. {e.explanation}".strip() for e in entries]
    return "\n".join([ALTERNATIVES, *lines]) if lines else ""


def diagnosis_text(t: TestRecord, named: dict[str, NamedMistake]) -> str:
    """What the comparison with the catalogue concluded for ``t``, in words ("" when it was not compared)."""
    if t.diagnosis in ("named", "together"):
        return explanation(t.mistakes, named, together=t.diagnosis == "together") or NO_MATCH
    if t.diagnosis == "resembles" and t.mistakes and t.mistakes[0] in named:
        return RESEMBLES.format(title=named[t.mistakes[0]].title.rstrip("."))
    if t.diagnosis in ("none", "resembles"):
        return NO_MATCH
    if t.diagnosis == "unavailable":
        return UNAVAILABLE
    return ""


def elsewhere(t: TestRecord, named: dict[str, NamedMistake]) -> bool:
    """Whether every mistake ``t`` names is one of other functions only (its failure comes from code it calls)."""
    own = t.function.split(".")[0]
    return bool(t.diagnoses) and all(
        m in named and named[m].changes and own not in named[m].changes and t.function not in named[m].changes
        for m in t.diagnoses
    )


def message_text(t: TestRecord, named: dict[str, NamedMistake]) -> str:
    """The check's own words, without the test's advice about its own function where the mistakes it names are
    all of other functions (a correct causal_mask is not told to look at its triangle when attention is wrong)."""
    if t.hint and t.message.endswith(t.hint) and elsewhere(t, named):
        return t.message[: -len(t.hint)].rstrip()
    return t.message


def feedback_texts(record: GradingRecord) -> list[str]:
    """Each test's feedback, in the record's order: its message, its diagnosis and what it printed, each
    bounded (``text_limits.cut``) so the whole stays within ``OUTPUT_LIMIT_TOTAL`` (the room: :func:`_share`).

    What is cut first is what the student printed, then the check's own words (down to a third of the test's
    share): the diagnosis, the sentence that names the student's mistake, is read whole wherever it fits.
    A mistake's explanation repeated from an earlier test becomes a pointer to that test, only where the
    student can read the earlier one whole and at least as soon (a visible test never points into a hidden one).
    """
    failing = _failing_functions(record.tests)
    limit = _share(record, failing)
    first: dict[str, tuple[str, int]] = {}  # explanation -> (the test that shows it whole, how soon it is seen)
    said: dict[str, tuple[str, int]] = {}  # a hedge or advice paragraph -> likewise
    cases: dict[str, tuple[str, int]] = {}  # a test (its key) -> its first failing case read whole, and how soon
    texts = []
    for t in record.tests:
        seen_here = OPEN.get(t.visibility, 3)
        diagnosis = diagnosis_text(t, record.named)
        pointed = diagnosis in first and first[diagnosis][1] >= seen_here and len(diagnosis) >= MIN_REPEATED
        middle = []
        if diagnosis and t.diagnosis in ("named", "together") and pointed:
            middle.append(SAME_AS.format(name=first[diagnosis][0], s="s" if t.diagnosis == "together" else ""))
        elif diagnosis:  # an explanation is pointed to only where read whole (above); a hedge is short, always whole
            middle.append(diagnosis if t.diagnosis in ("named", "together") else _once(diagnosis, said, t.name, seen_here))
        others = suspects(t, failing) if t.diagnosis not in ("named", "together") else []
        if others:
            one = len(others) == 1
            also = ALSO_RUNS.format(names=_names(others), s="s" if one else "", own="its" if one else "their")
            middle.append(_once(also, said, t.name, seen_here))
        message = message_text(t, record.named)
        hint = t.hint if t.hint and message.endswith(t.hint) else ""
        if hint:
            message = message[: -len(hint)].rstrip()
        if pointed and t.diagnosis in ("named", "together"):  # its evidence in one line: the mistake is explained above
            message = _first_line(message, 160)
        sibling = _sibling_shown(t, cases, seen_here)
        if sibling and t.diagnosis not in ("named", "together"):  # another case of it said it all above
            line = _first_line(message, 160)
            texts.append(f"{line if line.endswith(('.', '…')) else line + '.'} {SIBLING.format(case=sibling)}")
            continue
        if hint:  # the test's own advice, said once and pointed to after
            message = f"{message} {_once(hint, said, t.name, seen_here)}".strip()
        if message and middle:  # the check's words give way to the diagnosis, down to a third of the share
            message = cut(message, max(limit // 3, limit - len("\n\n".join(middle)) - 2))
        middle = [m for m in dict.fromkeys(middle) if m not in message]  # a pointer said once, where it is said first
        text = "\n\n".join(([message] if message else []) + middle)
        whole = len(text) <= limit  # else a diagnosis longer than the test's share: what fits of it (never pointed to)
        if not whole:
            text = cut(text, limit)
        elif t.printed.strip():  # what the student printed, in the room left (cut first, never the diagnosis)
            room = limit - len(text) - 2 if text else limit
            printed = cut(PRINTED + t.printed, room) if room >= len(PRINTED) + 60 else ""
            text = "\n\n".join(part for part in (text, printed) if part)
        if whole and diagnosis in middle and t.diagnosis in ("named", "together") and len(diagnosis) >= MIN_REPEATED:
            first[diagnosis] = (t.name, seen_here)  # pointed back to only where it is read whole
        if t.status != "passed" and whole:
            case = t.name[t.name.rindex("[") :] if t.name.endswith("]") and "[" in t.name else f"\u201c{t.name}\u201d"
            cases.setdefault(t.key, (case, seen_here))
        texts.append(text)
    return texts


def _sibling_shown(t: TestRecord, cases: dict[str, tuple[str, int]], seen_here: int) -> str:
    """The title of another case of ``t``'s test that failed before it and is read whole at least as soon ("" if
    none): this one then gives its evidence in one line and points there (a test failing on eight shapes says why
    once)."""
    name, seen = cases.get(t.key, ("", -1))
    return name if t.status != "passed" and seen >= seen_here else ""


def _once(paragraph: str, said: dict[str, tuple[str, int]], name: str, seen_here: int) -> str:
    """``paragraph``, or a pointer to the earlier test that says it whole and is read at least as soon (a long
    hedge or advice repeated on every case of a function makes a page unreadable)."""
    if len(paragraph) < MIN_REPEATED:
        return paragraph
    if paragraph in said and said[paragraph][1] >= seen_here:
        return SEE_ABOVE.format(name=said[paragraph][0])
    said.setdefault(paragraph, (name, seen_here))
    return paragraph


def _share(record: GradingRecord, failing: dict[str, bool]) -> int:
    """One test's room: the level at which the tests' needs fill ``OUTPUT_LIMIT_TOTAL`` when each test that needs
    less keeps its need (water-filling), within [500, ``OUTPUT_LIMIT_PER_TEST``]; a need is counted uncut."""
    needs = sorted(_need(t, record.named, failing) for t in record.tests)
    left = OUTPUT_LIMIT_TOTAL
    for i, need in enumerate(needs):
        if need > left // (len(needs) - i):
            return max(500, min(OUTPUT_LIMIT_PER_TEST, left // (len(needs) - i)))
        left -= need
    return OUTPUT_LIMIT_PER_TEST


def _need(t: TestRecord, named: dict[str, NamedMistake], failing: dict[str, bool]) -> int:
    others = suspects(t, failing) if t.diagnosis not in ("named", "together") else []
    parts = (message_text(t, named), diagnosis_text(t, named), PRINTED + t.printed if t.printed.strip() else "")
    return sum(map(len, parts)) + (len(ALSO_RUNS) + sum(len(n) + 4 for n in others) if others else 0) + 8


# -- what the student reads first ---------------------------------------------------


def _category(title: str) -> str:
    """``"softmax: a slice that is all -inf gives zeros [float32]"`` -> ``"a slice that is all -inf gives zeros"``."""
    what = title.split(":", 1)[1] if ":" in title else title
    if what.rstrip().endswith("]") and "[" in what:
        what = what[: what.rindex("[")]
    return what.strip()


def _points(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def function_summary(
    tests: list[TestRecord],
    hidden_summary: str = "categories",
    titles: dict[str, str] | None = None,
    changes: dict[str, set[str]] | None = None,
    published_later: bool = True,
) -> str:
    """One line per graded function (each test's declared ``function``), what the student reads first.

    Tests a student sees now (``visible``): "passed", or the one most likely cause (the
    first catalogued mistake recognised, else the first failing check's first line).
    Tests whose details come later: points lost and what those tests check ("-14 in
    hidden tests that check: fully blocked rows ..."), as ``hidden_summary`` allows:
    ``off`` (nothing), ``points``, ``categories`` (the default) or ``causes`` (also the
    likely mistake's title). Hidden inputs, expected values and outputs never appear.
    ``published_later``: the platform shows hidden tests' own feedback once grades are published
    (Gradescope does; PrairieLearn never does, and the heading does not promise it there).
    """
    titles = titles or {}
    changes = changes or {}
    by_function: dict[str, list[TestRecord]] = {}
    for t in tests:
        by_function.setdefault(t.function, []).append(t)
    failing = _failing_functions(tests)
    shown = {
        f: [t for t in g if t.visibility == "visible" or hidden_summary in ("categories", "causes")]
        for f, g in by_function.items()
    }
    lines = unwritten_lines([t for g in shown.values() for t in g], set(by_function) | {f.split(".")[0] for f in by_function})
    first = fix_first({f: {u for t in g for u in suspects(t, failing)} for f, g in shown.items()}, tests)
    for function, group in by_function.items():
        line = _function_line(function, group, hidden_summary, titles, changes, failing, first.get(function, []))
        if line:
            lines.append(f"- {function}: {line}")
    if not lines:
        return ""
    head = "Summary by function"
    if hidden_summary != "off" and any(t.visibility != "visible" for t in tests):
        head += " (hidden tests: what they check and the points lost now" + (
            "; their full feedback once grades are published)" if published_later else ")"
        )
    return head + ":\n" + "\n".join(lines)


def _failing_functions(tests: list[TestRecord]) -> dict[str, bool]:
    """Each graded function with a failing test of its own -> whether all of them fail unwritten (NotImplementedError).
    A test its callers are graded around (``apart``) is never a cause of theirs, so it is not counted."""
    failing: dict[str, bool] = {}
    for t in tests:
        if t.status != "passed" and not t.apart:
            # a method's failure is its class's too ("AttnSeq2Seq.step" -> "AttnSeq2Seq"): a test runs the class
            for name in dict.fromkeys((t.function, t.function.split(".")[0])):
                failing[name] = failing.get(name, True) and t.kind == "not-implemented"
    return failing


def suspects(t: TestRecord, failing: dict[str, bool]) -> list[str]:
    """The other functions of the file that failed test ``t`` ran and that fail tests of their own: where its
    failure may come from (what the grader saw the test run, never a claim that ``t``'s own function is right)."""
    own = (t.function, t.function.split(".")[0])
    return [u for u in t.uses if u in failing and u not in own] if t.status != "passed" else []


def _function_line(
    function: str,
    group: list[TestRecord],
    hidden_summary: str,
    titles: dict[str, str],
    changes: dict[str, set[str]],
    failing: dict[str, bool] | None = None,
    first: list[str] | None = None,
) -> str:
    """``first``: the other functions to fix first (summary_causes.fix_first: their own tests fail, never a circle)."""
    failing = failing or {}
    seen_now = [t for t in group if t.visibility == "visible"]
    later = [t for t in group if t.visibility != "visible"]
    parts = []
    failed_now = [t for t in seen_now if t.status != "passed"]
    shown = [t for t in group if t.visibility == "visible" or hidden_summary in ("categories", "causes")]
    missing_tests = [t for t in group if t.status != "passed" and t.kind == "not-implemented"]
    missing = bool(missing_tests)
    elsewhere = stops(shown, function)  # the unwritten or missing functions its failing tests stopped in
    if missing and all(t.unwritten and t.unwritten not in (function, function.split(".")[0]) for t in missing_tests):
        parts.append(stop_words(elsewhere or stops(missing_tests, function)))
    elif missing:
        unwritten = sorted({u for t in missing_tests if t in shown for u in suspects(t, failing) if failing[u]})
        parts.append(
            "not implemented yet" + (f" (or its tests run your {_names(unwritten)}, not written yet either)" if unwritten else "")
        )
    elif failed_now:
        parts.append(f"{len(failed_now)} of {len(seen_now)} public tests failed; {lead_with_the_cause(failed_now, titles)}")
    elif seen_now:
        parts.append("public tests passed")
    if later and hidden_summary != "off":
        parts.append(_hidden_part(later, hidden_summary, titles, missing))
    parts = [p for p in parts if p]
    if not parts:
        return ""
    if all(t.status == "passed" for t in group) and (hidden_summary != "off" or not later):
        parts = ["passed"]
    upstream = _upstream(function, shown, changes) if len(shown) == len(group) else []
    if upstream and not missing:
        verb = "is" if len(upstream) == 1 else "are"
        parts.append(f"fails because {_names(upstream)} {verb} wrong")
    elif elsewhere and not missing:
        parts.append(stop_words(elsewhere))
    elif not missing and not all(t.status == "passed" for t in group):
        others = first or []
        if others:
            parts.append(
                f"its failing tests also run your {_names(others)}, which fail{'s' if len(others) == 1 else ''} "
                f"tests of {'its' if len(others) == 1 else 'their'} own: fix {'it' if len(others) == 1 else 'them'} first"
            )
    return "; ".join(parts)


FLOAT32_CAUSE = "float32 rounding only, not a formula error: a float32 tensor, constant or cast (compute in the input's dtype)"


def lead_with_the_cause(failed: list[TestRecord], titles: dict[str, str]) -> str:
    """What a function's summary line says of its failing tests, cause first: the catalogued mistake named, else
    float32 rounding, else the failing check's own advice (its hint); then the first failure's evidence. Each part
    whole, cut only at a word."""
    named = next((titles[m] for t in failed for m in t.diagnoses if m in titles), None)
    first = failed[0]
    evidence = _first_line(first.message.replace(first.hint, "") if first.hint else first.message, 160).rstrip(". ")
    if named:
        return f"most likely: {named.rstrip('.')}; first failure: {evidence}"
    if any(FLOAT32_HINT_START in t.message for t in failed):
        return f"most likely {FLOAT32_CAUSE}; first failure: {evidence}"
    if first.hint.strip():
        return f"likely cause: {bound_line(_sentence(first.hint), 200).rstrip('.')}; first failure: {evidence}"
    return f"first failure: {evidence}"


FLOAT32_HINT_START = "differs by the size of float32 rounding"  # checks.FLOAT32_HINT's words


def _sentence(text: str) -> str:
    """The first sentence of ``text`` (a hint's advice), whole."""
    text = " ".join(text.split())
    end = next((i for i in range(len(text) - 1) if text[i] in ".!?" and text[i + 1] == " "), len(text))
    return text[: end + 1]


def _names(names: list[str]) -> str:
    """``a``, ``b`` and ``c``."""
    quoted = [f"`{n}`" for n in names]
    return ", ".join(quoted[:-1]) + " and " + quoted[-1] if len(quoted) > 1 else "".join(quoted)


def _hidden_part(later: list[TestRecord], hidden_summary: str, titles: dict[str, str], missing: bool) -> str:
    lost = sum(t.max_score - t.score for t in later)
    if lost <= 1e-9:
        return "hidden tests passed"
    text = f"-{_points(lost)} in hidden tests"
    if hidden_summary in ("categories", "causes") and not missing:
        categories = list(dict.fromkeys(_category(t.name) for t in later if t.score < t.max_score))
        text += " that check: " + bound_line("; ".join(categories), CATEGORY_CHARS)
    if hidden_summary == "causes":
        cause = next((titles[m] for t in later for m in t.diagnoses if m in titles), None)
        if cause:
            text += f" (likely: {cause})"
    return text


def _upstream(function: str, group: list[TestRecord], changes: dict[str, set[str]]) -> list[str]:
    """The other functions whose catalogued mistakes explain every failure of ``function``'s tests, when
    none of them changes ``function`` itself (its tests fail only because of code it calls)."""
    failed = [t for t in group if t.status != "passed"]
    if not failed or any(not t.diagnoses for t in failed):
        return []
    culprits: set[str] = set()
    for t in failed:
        for mistake in t.diagnoses:
            changed = changes.get(mistake)
            if not changed or function in changed:
                return []
            culprits |= changed
    return sorted(culprits)


def record_summary(record: GradingRecord, published_later: bool = True) -> str:
    """The summary by function of ``record``, with the titles and changes of the mistakes it names."""
    named_now = {m for t in record.tests if t.status != "passed" for m in t.diagnoses}
    titles = {k: v.title for k, v in record.named.items()}
    changes = {k: set(v.changes) for k, v in record.named.items() if k in named_now}
    return function_summary(record.tests, record.hidden_summary, titles, changes, published_later)
