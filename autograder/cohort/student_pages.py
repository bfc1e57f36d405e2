"""What each student saw: one self-contained feedback page per submission, ``--out/students/<submission>.html``.

One job: render a results document the way Gradescope presents it to the student, for the
instructor to read: the score, the feedback text (the results' ``output``: the score line and
the summary by function), then every test in the results' order with its points, whether it
passed, its feedback, and when the student sees it (Gradescope's ``visibility``: ``visible`` at
once, ``after_published`` when grades are published, ``hidden`` never). Above it, apart, what
only the instructor has: who submitted, when, and the grade the gradebooks and the LMS get (after the
term's late policy) beside the grader's raw score. Linked from the dashboard's table of students (:mod:`.report`).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from .class_stats import gradebook_entries
from .cohort import people, row_anchor

FOLDER = "students"
SEEN = {
    "visible": "the student sees this now",
    "after_published": "the student sees this once grades are published",
    "after_due_date": "the student sees this after the due date",
    "hidden": "never shown to the student",
}

PAGE_CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;margin:0;background:#fff}
main{max-width:980px;margin:0 auto;padding:22px 28px 44px} h1{font-size:22px;margin:0 0 4px} h2{font-size:18px;margin:24px 0 8px}
.muted{color:#59636e} .small{font-size:13px}
.staff{border:1px dashed #d1d9e0;border-radius:8px;padding:8px 14px;background:#f6f8fa;margin:12px 0}
.score{font-size:28px;font-weight:600;margin:10px 0} .grade{font-size:17px;margin:4px 0}
pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;overflow-wrap:anywhere;
background:#f6f8fa;border:1px solid #d1d9e0;border-radius:6px;padding:10px;margin:6px 0 0}
.test{border:1px solid #d1d9e0;border-left-width:5px;border-radius:6px;padding:8px 12px;margin:10px 0;break-inside:avoid}
.test.passed{border-left-color:#1a7f37} .test.failed{border-left-color:#b42318}
.test h3{font-size:15px;margin:0;display:flex;justify-content:space-between;gap:12px}
.passed .pts{color:#1a7f37} .failed .pts{color:#b42318} a{color:#0969da}
@media print{main{max-width:none;padding:0} pre{font-size:10px}}
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def page_names(sids: list[str]) -> dict[str, str]:
    """{submission id: its page under --out} (``students/<id>.html``, made a safe file name; unique)."""
    names: dict[str, str] = {}
    taken: set[str] = set()
    for sid in sids:
        base = re.sub(r"[^A-Za-z0-9_.-]+", "-", sid).strip(".-")[:80] or "submission"
        name, n = base, 2
        while name.lower() in taken:
            name, n = f"{base}-{n}", n + 1
        taken.add(name.lower())
        names[sid] = f"{FOLDER}/{name}.html"
    return names


def _test_block(test: dict) -> str:
    status = "passed" if test.get("status") == "passed" else "failed"
    output = str(test.get("output") or "")
    seen = SEEN.get(str(test.get("visibility", "visible")), str(test.get("visibility", "")))
    return (
        f'<div class="test {status}"><h3><span>{_e(test.get("name", ""))}</span>'
        f'<span class="pts">{float(test.get("score", 0)):.2f} / {float(test.get("max_score", 0)):.2f}</span></h3>'
        f'<div class="muted small">{status}; {_e(seen)}</div>' + (f"<pre>{_e(output)}</pre>" if output else "") + "</div>"
    )


def _grade_lines(grades: list[tuple[str, object]], most: float) -> str:
    """The grade each student this submission counts for gets (``grades``: [(student, late_policy.LateOutcome)]),
    as gradebook.csv, canvas.csv and moodle.csv have it, beside the grader's raw score."""
    lines = []
    for key, o in grades:
        who = f" for {key}" if len(grades) > 1 else ""
        lines.append(
            f"<div class='grade'>Grade{_e(who)} in the gradebooks and the LMS: <b>{o.total:.2f}</b> / {most:.2f}, "
            f"after the late policy; raw score {o.raw_total:.2f} ({_e(o.rule or 'no late policy applied')})</div>"
        )
    return "".join(lines)


def render_page(assignment, sub, document: dict, staff_lines: list[str], anchor: str = "", grades: list | None = None) -> str:
    """One submission's feedback page: the instructor's facts (``staff_lines``) and the grade of each student it
    counts for (``grades``: [(student, late_policy.LateOutcome)]), then what the student saw."""
    tests = document.get("tests") or []
    score = float(document.get("score", 0) or 0)
    most = sum(float(t.get("max_score", 0)) for t in tests) or float(getattr(assignment, "total_points", 0) or 0)
    who = sub.name or sub.student_id or sub.sid
    staff = _grade_lines(grades or [], float(getattr(assignment, "total_points", 0) or most))
    staff += "".join(f"<div>{_e(line)}</div>" for line in staff_lines if line)
    back = f"../report.html#{anchor}" if anchor else "../report.html"
    failed = sum(t.get("status") != "passed" for t in tests)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        f"<title>{_e(who)}: {_e(assignment.title)}</title><style>{PAGE_CSS}</style></head><body><main>"
        f"<h1>{_e(who)}: {_e(assignment.title)}</h1>"
        f'<div class="muted small"><a href="{_e(back)}">back to the dashboard</a></div>'
        f"<div class='staff small'><b>For the instructor (not on the student's page)</b>{staff}</div>"
        f"<h2>Autograder results, as the student sees them on Gradescope</h2>"
        f"<div class='score'>{score:.2f} / {most:.2f}</div>"
        f"<div class='muted small'>{len(tests)} tests, {failed} failed</div>"
        f"<pre>{_e(document.get('output', ''))}</pre>" + "".join(_test_block(t) for t in tests) + "</main></body></html>"
    )


def write_student_pages(
    out: Path, assignment, subs: list, documents: dict[str, dict], facts: dict[str, list[str]], late: dict | None = None
) -> dict[str, str]:
    """Write one page per submission under ``out/students/`` (pages of submissions no longer in the
    export are removed); ``facts``: {submission id: the instructor's lines}; ``late``: {student:
    late_policy.LateOutcome}, each student's grade, shown on the page of the submission that counts for them.
    Returns {id: page}."""
    counting = {e.key: e.sub.sid for e in gradebook_entries(subs)}
    late = late or {}
    names = page_names([s.sid for s in subs])
    folder = out / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    keep = {Path(p).name for p in names.values()}
    for old in folder.glob("*.html"):
        if old.name not in keep:
            old.unlink()
    for s in subs:
        grades = [(k, late[k]) for k, _ in people(s) if k in late and counting.get(k) == s.sid]
        page = render_page(assignment, s, documents.get(s.sid, {}), facts.get(s.sid, []), row_anchor(s.sid), grades)
        (out / names[s.sid]).write_text(page, encoding="utf-8")
    return names
