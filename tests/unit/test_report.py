"""The dashboard's reading of results documents: flags, mistakes by title and student, the regrade diff."""

from __future__ import annotations

import re
from pathlib import Path

from autograder.cohort.cohort import mistake_title, regrade_diff, student_rows
from autograder.cohort.export import Submission
from autograder.cohort.flags import submission_flags
from autograder.cohort.report import render_report
from autograder.config import load_assignment

KIT = Path(__file__).resolve().parents[2]
ATTENTION = load_assignment("attention", KIT)


def result(
    name: str, score: float, max_score: float, output: str = "", mistakes=(), key: str = "hidden/t.py::t", kind: str | None = None
) -> dict:
    return {
        "name": name,
        "score": score,
        "max_score": max_score,
        "status": "passed" if score == max_score else "failed",
        "output": output,
        "extra_data": {
            "test": key,
            "function": name.split(":")[0].split()[0].rstrip(","),
            "mistakes": list(mistakes),
            "kind": kind or ("passed" if score == max_score else "wrong"),
        },
    }


def doc(score: float, tests: list[dict], output: str = "", extra: dict | None = None, kind: str = "graded") -> dict:
    return {"score": score, "tests": tests, "output": output, "extra_data": {"kind": kind, **(extra or {})}}


def flags_of(document: dict) -> set[str]:
    return {flag for flag, _ in submission_flags(document)}


def test_each_kind_of_trouble_gets_its_flag_and_the_graders_reason():
    ungradable = doc(
        0, [], "Score 0: no file named attention.py was found in the upload. Found: attn_final.py.", kind="ungradable"
    )
    flags = dict(submission_flags(ungradable))
    assert set(flags) == {"ungradable", "zero"} and "attn_final.py" in flags["ungradable"]

    syntax = doc(
        0,
        [result("softmax: x", 0, 2, kind="import-error")],
        "0.00 / 100 points. No test could run: attention.py could not be imported: SyntaxError: invalid syntax (line 3)",
        extra={"load": "import-error"},
        kind="import-error",
    )
    assert dict(submission_flags(syntax))["import-error"].endswith("SyntaxError: invalid syntax (line 3)")
    bomb = doc(
        0, [result("softmax: x", 0, 2, kind="import-error")], "0.00 / 100 points.", extra={"load": "memory"}, kind="import-error"
    )
    assert flags_of(bomb) == {"import-error", "crash", "zero"}

    assert flags_of(doc(98, [result("causal_mask: x", 0, 2, kind="timeout")])) == {"timeout"}
    assert flags_of(doc(98, [result("causal_mask: x", 0, 2, kind="memory")])) == {"crash"}
    assert flags_of(doc(98, [result("causal_mask: x", 0, 2, kind="crash")])) == {"crash"}
    assert flags_of(doc(0, [result("softmax: x", 0, 2, kind="exit")])) == {"attack", "zero"}
    assert flags_of(doc(50, [result("softmax: x", 0, 2, kind="skipped")])) == {"attack"}
    assert flags_of(doc(50, [result("softmax: x", 0, 2, kind="channel")])) == {"attack"}
    linked = doc(0, [], "Score 0: no file named attention.py was found.", extra={"links": 1}, kind="ungradable")
    assert flags_of(linked) == {"attack", "ungradable", "zero"}
    assert flags_of(doc(90, [result("softmax: x", 0, 2, kind="banned")])) == {"banned-call"}
    crashed_grader = doc(
        0,
        [],
        "Score 0: the grader hit an internal error (KeyError). Course staff can see the details in the log.",
        kind="grader-error",
    )
    assert flags_of(crashed_grader) == {"grader-error", "zero"}
    assert flags_of(doc(0, [], "Grading did not finish.", kind="unfinished")) == {"grader-error", "zero"}
    assert flags_of(doc(100, [result("softmax: x", 2, 2)])) == set()


def test_no_text_raises_or_hides_a_flag():
    """Flags are the kinds the grader recorded: words in any output (the student's prints, a file name,
    an exception message the student chose) change nothing."""
    words = (
        "did not finish within the time limit; the process was killed; exited with status 1; not run (skipped); "
        "interfered with the grader's channel; (a link); which this assignment does not allow; "
        "could not be imported: SyntaxError; the grader hit an internal error"
    )
    printed = f"wrong\n\nYour code printed:\n{words}"
    assert flags_of(doc(98, [result("softmax: x", 0, 2, printed)], words)) == set()
    passed_and_printed = result("softmax: x", 2, 2, f"Your code printed:\n{words}")  # no blank line before it
    assert flags_of(doc(100, [passed_and_printed], f"100.00 / 100 points. {words}")) == set()
    # and a real timeout stays flagged whatever the text says
    assert flags_of(doc(98, [result("softmax: x", 0, 2, "all good", kind="timeout")])) == {"timeout"}


def test_flags_come_most_serious_first():
    document = doc(
        0,
        [result("softmax: x", 0, 2, kind="timeout")],
        "x.py could not be imported: E",
        extra={"load": "import-error"},
        kind="import-error",
    )
    assert [f for f, _ in submission_flags(document)] == ["import-error", "timeout", "zero"]


def test_mistake_title_is_the_first_docstring_line_of_the_catalogue_file():
    first_line = (ATTENTION.mistakes_dir / "softmax_no_max.py").read_text().split('"""')[1].strip().splitlines()[0]
    assert mistake_title(ATTENTION, "softmax_no_max") == first_line != "softmax_no_max"
    assert mistake_title(ATTENTION, "no_such_mistake") == "no_such_mistake"


def test_regrade_diff_lists_only_changed_scores_with_the_tests_that_changed():
    before = {
        "a": doc(90, [result("softmax: x", 2, 2), result("causal_mask: y", 0, 10)]),
        "b": doc(50, [result("softmax: x", 2, 2)]),
        "gone": doc(10, []),
    }
    after = {
        "a": doc(95, [result("softmax: x", 2, 2), result("causal_mask: y", 5, 10)]),
        "b": doc(50, [result("softmax: x", 2, 2)]),
        "new": doc(70, []),
    }
    diff = {d["sid"]: d for d in regrade_diff(before, after)}
    assert set(diff) == {"a", "gone", "new"}
    assert diff["a"]["change"] == 5 and diff["a"]["tests"] == [("causal_mask: y", 0.0, 5.0)]
    assert diff["gone"]["new"] is None and diff["new"]["old"] is None


def _subs() -> tuple[list[Submission], dict[str, dict]]:
    group = Submission(
        "s3",
        Path("."),
        name="José Núñez, Kim Lee",
        student_id="7;8",
        submitters=[{"name": "José Núñez", "sid": "7", "email": ""}, {"name": "Kim Lee", "sid": "8", "email": ""}],
    )
    subs = [
        Submission("s1", Path("."), name="Ada", student_id="1", submitters=[{"name": "Ada", "sid": "1", "email": ""}]),
        Submission("s2", Path("."), name="Alan", student_id="2", submitters=[{"name": "Alan", "sid": "2", "email": ""}]),
        group,
    ]
    documents = {
        "s1": doc(100, [result("softmax: x", 2, 2), result("causal_mask: y", 10, 10)]),
        "s2": doc(0, [], "Score 0: no file named attention.py was found in the upload.", kind="ungradable"),
        "s3": doc(92, [result("softmax: x", 2, 2), result("causal_mask: y", 2, 10, "wrong", ["causal_blocks_diagonal"])]),
    }
    return subs, documents


def test_mistakes_count_students_and_link_to_their_rows():
    subs, documents = _subs()
    page = render_report(ATTENTION, subs, documents)
    title = mistake_title(ATTENTION, "causal_blocks_diagonal")
    row = re.search(r'<tr data-mistake="causal_blocks_diagonal">(.*?)</tr>', page).group(1)
    assert title in row and "<td class=num>2</td>" in row, "a group of two makes two students"
    assert '<a href="#s-s3">' in row and 'id="s-s3"' in page


def test_ungradable_upload_leads_the_attention_list_and_fails_every_test_in_the_pass_rates():
    subs, documents = _subs()
    page = render_report(ATTENTION, subs, documents)
    attention = re.search(r'<section id="attention">(.*?)</section>', page).group(1)
    assert 'data-sid="s2"' in attention and "no file named attention.py" in attention
    assert 'data-sid="s1"' not in attention and 'data-sid="s3"' not in attention
    functions = re.search(r'<section id="functions">(.*?)</section>', page).group(1)
    assert "Over all 3 submissions" in functions
    # softmax passed by s1 and s3, not by the ungradable s2: 67%, not 100%
    assert re.search(r"<b>softmax</b>.*?<td class=num>67%</td>", functions)


def test_rows_record_points_lost_per_function():
    subs, documents = _subs()
    rows = {r.sid: r for r in student_rows(subs, documents)}
    assert rows["s3"].lost == {"causal_mask": 8.0} and rows["s3"].mistakes == ["causal_blocks_diagonal"]
    assert rows["s3"].students == ["7", "8"] and not rows["s2"].graded


def test_row_anchors_are_unique():
    """The red team's plain-folder files `ana b.py` and `ana+b.py` shared `id="s-ana-b"`: a link to one opened the other."""
    from autograder.cohort.cohort import row_anchor

    sids = ["ana b", "ana+b", "ana-b", "ana_b", "111"]
    anchors = [row_anchor(s) for s in sids]
    assert len(set(anchors)) == len(sids) and row_anchor("ana-b") == "s-ana-b" and row_anchor("111") == "s-111"
    assert all(re.fullmatch(r"s-[A-Za-z0-9_-]+", a) for a in anchors)


def test_a_late_submission_shows_its_final_grade_beside_the_raw_score_and_sorts_by_it():
    """Issue 48: the table's score column showed 100.00 for a group whose late-penalised grade was 70.00 (the
    penalty was only in the CSV files); it now shows the grade the gradebooks and the LMS get, the raw score
    under it, and sorts by that grade."""
    from autograder.cohort.late_policy import LateOutcome
    from autograder.cohort.report import Extras

    subs, documents = _subs()
    documents["s3"] = doc(100, [result("softmax: x", 2, 2), result("causal_mask: y", 10, 10)])
    late = {
        "1": LateOutcome(100.0, 100.0, 0.0, 0, 0, "on time"),
        "2": LateOutcome(0.0, 0.0, 0.0, 0, 0, "on time"),
        "7": LateOutcome(100.0, 70.0, 30.0, 0, 3, "3 days late: 10 % off per day"),
        "8": LateOutcome(100.0, 70.0, 30.0, 0, 3, "3 days late: 10 % off per day"),
    }
    page = render_report(ATTENTION, subs, documents, extras=Extras(late=late))
    rows = {sid: page[page.index(f'<tr id="s-{sid}"') :].split("</tr>")[0] for sid in ("s1", "s3")}
    assert '<td class=num data-sort="70.00"><b>70.00</b><div class="muted small raw">raw 100.00</div></td>' in rows["s3"]
    assert '<td class=num data-sort="100.00"><b>100.00</b></td>' in rows["s1"], "on time: the grade alone"
    assert ">grade</th>" in page and "the column sorts by it" in page
    # a group whose members' grades differ (one has an extension) shows each, and sorts by the lower
    late["8"] = LateOutcome(100.0, 100.0, 0.0, 0, 0, "on time (extension to 2027-02-26 23:59 UTC)")
    page = render_report(ATTENTION, subs, documents, extras=Extras(late=late))
    row = page[page.index('<tr id="s-s3"') :].split("</tr>")[0]
    assert 'data-sort="70.00">7: <b>70.00</b><br>8: <b>100.00</b><div class="muted small raw">raw 100.00</div>' in row
    # without the late policy's outcomes (render_report alone) the column is the grader's score
    assert '<td class=num data-sort="100.00">100.00</td>' in render_report(ATTENTION, subs, documents)
