"""What an instructor reads after grading a class and building a release says what happened (issue 25)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from autograder.cli import build_parser
from autograder.cohort.export import Submission
from autograder.cohort.flags import submission_flags
from autograder.cohort.report import render_report
from autograder.config import KIT_ROOT, load_assignment

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ATTENTION = load_assignment("attention", KIT_ROOT)

# What the grader writes for a submission that crashed in one test and one that hung: the summary by
# function first (whose lines hold "-43 in hidden tests that check: ..."), then each test's feedback.
SUMMARY = (
    "57.00 / 100 points.\n\nSummary by function (hidden tests: what they check and the points lost now; their full "
    "feedback once grades are published):\n- scaled_dot_product_attention: 2 of 2 public tests failed; first failure: "
    "scaled_dot_product_attention failed: the process stopped while answering (sys.exit, os._exit or a crash in your "
    "code?); -43 in hidden tests that check: written by hand, without PyTorch's attention or softmax; matches the float64 "
    "reference (mask=None)\n- softmax: passed"
)


def _test(name: str, kind: str, output: str, score: float = 0.0) -> dict:
    return {
        "name": name,
        "score": score,
        "max_score": 4.0,
        "status": "passed" if kind == "passed" else "failed",
        "output": output,
        "extra_data": {"test": "hidden/t.py::t", "function": name.split(":")[0], "mistakes": [], "kind": kind},
    }


def _document(kind: str, message: str) -> dict:
    tests = [
        _test("softmax: rows sum to 1", "passed", "", 4.0),
        _test("scaled_dot_product_attention: the course's worked example gives 20.0", kind, message),
        _test("scaled_dot_product_attention: written by hand", "not-run", "not run: the worker stopped earlier"),
    ]
    return {"score": 57.0, "tests": tests, "output": SUMMARY, "extra_data": {"kind": "graded"}}


def test_a_crash_and_a_timeout_are_named_with_the_test_they_happened_in():
    crash = _document("crash", "scaled_dot_product_attention failed: the process stopped while answering")
    hang = _document("timeout", "scaled_dot_product_attention did not finish within the time limit")
    expected = "(in: scaled_dot_product_attention: the course's worked example gives 20.0)"
    assert dict(submission_flags(crash))["crash"] == f"the student's process stopped or was killed while answering {expected}"
    assert dict(submission_flags(hang))["timeout"] == f"ran out of time {expected}"

    subs = [Submission("crash", Path("."), name="Crash"), Submission("hang", Path("."), name="Hang")]
    html = render_report(ATTENTION, subs, {"crash": crash, "hang": hang})
    attention = html[html.index('<section id="attention">') : html.index("</section>")]
    text = re.sub(r"<[^>]+>", " ", attention)
    assert "-43" not in text, "the summary's points never stand in for a reason"
    for broken in (" in )", "check:)", "in hidden tests that check:)"):
        assert broken not in html
    assert text.count("(in: scaled_dot_product_attention: the course") == 2


def test_the_console_script_is_declared_and_release_writes_into_the_kit_by_default():
    project = tomllib.loads((KIT_ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"] == {"attention-kit": "autograder.cli:main"}
    assert project["tool"]["setuptools"]["packages"]["find"]["include"] == ["autograder", "autograder.*"]
    args = build_parser().parse_args(["release", "attention"])
    assert Path(args.out) == KIT_ROOT / "dist", "run from any folder, the release still goes to the kit's dist/"
    assert args.course is None
