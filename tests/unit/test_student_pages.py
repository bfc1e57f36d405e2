"""Each student's feedback page (students/<submission>.html): what Gradescope shows them, for the instructor."""

from __future__ import annotations

from pathlib import Path

from autograder.cohort.export import Submission
from autograder.cohort.student_pages import page_names, render_page, write_student_pages
from autograder.config import KIT_ROOT, load_assignment

ATTENTION = load_assignment("attention", KIT_ROOT)


def _document() -> dict:
    def test(name, score, max_score, visibility, output=""):
        status = "passed" if score == max_score else "failed"
        return {
            "name": name,
            "score": score,
            "max_score": max_score,
            "status": status,
            "visibility": visibility,
            "output": output,
        }

    return {
        "score": 3.0,
        "output": "3.00 / 5 points.\n\nSummary by function:\n- softmax: rows do not sum to 1",
        "tests": [
            test("softmax: worked example", 2.0, 2.0, "visible"),
            test("softmax: rows sum to 1 [float32]", 1.0, 2.0, "after_published", "rows sum to 0.7 <script>alert(1)</script>"),
            test("causal_mask: strict upper triangle", 0.0, 1.0, "hidden", "never shown"),
        ],
    }


def test_the_page_shows_what_gradescope_shows_the_student_and_when():
    sub = Submission("1001", Path("."), name="José Núñez", student_id="444")
    page = render_page(ATTENTION, sub, _document(), ["submission 1001, submitted 2026-11-01", "gradebook total: 2.70"], "s-1001")
    assert "José Núñez: " in page and "3.00 / 5.00" in page and "3 tests, 2 failed" in page
    assert "Summary by function:\n- softmax: rows do not sum to 1" in page, "the feedback text as written, in a <pre>"
    order = [page.index(name) for name in ("worked example", "rows sum to 1 [float32]", "strict upper triangle")]
    assert order == sorted(order), "the tests in the results' order"
    assert "the student sees this now" in page and "once grades are published" in page and "never shown to the student" in page
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "gradebook total: 2.70" in page and "(not on the student's page)" in page
    assert 'href="../report.html#s-1001"' in page and "<link" not in page and "src=" not in page, "self-contained"


def test_one_page_per_submission_with_safe_unique_names(tmp_path):
    assert page_names(["a/b", "a b", "..x", "A/B"]) == {
        "a/b": "students/a-b.html",
        "a b": "students/a-b-2.html",
        "..x": "students/x.html",
        "A/B": "students/A-B-3.html",
    }, "no folder, no leading dot; names differing only by case kept apart (case-insensitive disks)"
    (tmp_path / "students").mkdir()
    (tmp_path / "students" / "gone.html").write_text("a submission no longer in the export")
    subs = [Submission("1001", Path("."), name="Ada"), Submission("1002", Path("."), name="Alan")]
    names = write_student_pages(tmp_path, ATTENTION, subs, {"1001": _document()}, {"1001": ["submission 1001"]})
    assert sorted(p.name for p in (tmp_path / "students").iterdir()) == ["1001.html", "1002.html"]
    assert names == {"1001": "students/1001.html", "1002": "students/1002.html"}
    assert "0 tests, 0 failed" in (tmp_path / "students" / "1002.html").read_text(), "an ungraded submission has a page too"


def test_the_page_gives_the_grade_after_the_late_policy_beside_the_raw_score(tmp_path):
    """Issue 48: each student's grade as the gradebooks and the LMS get it, on the page of the submission that
    counts for them (not on a superseded one's)."""
    from autograder.cohort.class_stats import mark_superseded
    from autograder.cohort.late_policy import LateOutcome

    def person(sid):
        return [{"name": sid.upper(), "sid": sid, "email": ""}]

    late_one = Submission("1001", Path("."), name="ADA", created_at="2027-02-25 10:00:00 +00:00", submitters=person("ada"))
    earlier = Submission("1000", Path("."), name="ADA", created_at="2027-02-20 10:00:00 +00:00", submitters=person("ada"))
    subs = [earlier, late_one]
    mark_superseded(subs)
    late = {"ada": LateOutcome(3.0, 2.1, 0.9, 0, 3, "3 days late: 10 % off per day")}
    write_student_pages(tmp_path, ATTENTION, subs, {"1001": _document(), "1000": _document()}, {}, late)
    page = (tmp_path / "students" / "1001.html").read_text()
    assert "Grade in the gradebooks and the LMS: <b>2.10</b> / 100.00, after the late policy; raw score 3.00" in page
    assert "(3 days late: 10 % off per day)" in page and "3.00 / 5.00" in page, "and what the student saw, as it was"
    assert "Grade in the gradebooks" not in (tmp_path / "students" / "1000.html").read_text()
