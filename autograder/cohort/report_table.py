"""The dashboard's table of every submission (:mod:`.report`): sortable, filterable, each row linked to its page.

One job: the rows. A row's grade is what the gradebooks and the LMS get, after the term's late policy
(course.toml's ``[late]`` and extensions, :mod:`.late_policy`), with the grader's raw score beside it when
the policy changed it; the column sorts by that grade.
"""

from __future__ import annotations

import html

from ..config import Assignment
from .class_stats import gradebook_entries
from .cohort import StudentRow, mistake_title
from .flags import FLAG_LABELS


def escape(value: object) -> str:
    return html.escape(str(value), quote=True)


def points(value: float) -> str:
    return f"{value:.2f}"


def flag_chips(flags: list[tuple[str, str]]) -> str:
    return "".join(f'<span class="flag {f}" title="{escape(why)}">{escape(FLAG_LABELS[f])}</span>' for f, why in flags)


def _outcomes(row: StudentRow, late: dict) -> list[tuple[str, object]]:
    """[(student, late_policy.LateOutcome)] of each student this row's submission counts for (``late``:
    {student: (the submission that counts for them, their outcome)})."""
    return [(k, late[k][1]) for k in row.students if k in late and late[k][0] == row.sid]


def _late_cell(row: StudentRow, late: dict) -> tuple[str, str]:
    """(the cell, its sort key): what the late policy did to each student this row's submission counts for."""
    outcomes = _outcomes(row, late)
    if not outcomes:
        return "–", ""
    lines = []
    for key, o in outcomes:
        who = f"{escape(key)}: " if len(outcomes) > 1 else ""
        total = f"<b>{points(o.total)}</b> (−{points(o.penalty)}) " if o.penalty else ""
        lines.append(f"{who}{total}{escape(o.rule)}")
    return "<br>".join(lines), f"{min(o.total for _, o in outcomes):.2f}"


def grade_cell(row: StudentRow, late: dict | None) -> tuple[str, float]:
    """(the cell, its sort key): the grade after the late policy of each student the row counts for (one
    number when they agree, each student's otherwise; sorted by the lowest), and the grader's raw score
    under it when the policy changed it. A row that sets no grade (superseded) shows the raw score."""
    outcomes = _outcomes(row, late) if late is not None else []
    if not outcomes:
        return points(row.score), row.score
    finals = {o.total for _, o in outcomes}
    if len(finals) == 1:
        text = f"<b>{points(finals.pop())}</b>"
    else:
        text = "<br>".join(f"{escape(k)}: <b>{points(o.total)}</b>" for k, o in outcomes)
    if any(abs(o.total - row.score) > 0.005 for _, o in outcomes):
        text += f'<div class="muted small raw">raw {points(row.score)}</div>'
    return text, min(o.total for _, o in outcomes)


def _student_cells(r: StudentRow, assignment: Assignment, late: dict | None, pages: dict[str, str]) -> str:
    flags = " ".join([f for f, _ in r.flags] + (["attention"] if r.needs_attention else []))
    lost = ", ".join(f"{escape(fn)} (−{points(p)})" for fn, p in sorted(r.lost.items(), key=lambda x: -x[1]))
    if not r.graded:
        lost = "not graded"
    elif r.score == 0 and r.lost:
        lost = "every function"
    mistakes = "<br>".join(escape(mistake_title(assignment, m)) for m in r.mistakes)
    page = pages.get(r.sid)
    submission = f'<a href="{escape(page)}" title="what the student saw">{escape(r.sid)}</a>' if page else escape(r.sid)
    late_cell = ""
    if late is not None:
        text, key = _late_cell(r, late)
        late_cell = f'<td data-sort="{key}" class=small>{text}</td>'
    grade, grade_key = grade_cell(r, late)
    return (
        f'<tr id="{r.anchor}" data-flags="{escape(flags)}">'
        f'<td data-sort="{escape(r.label.casefold())}">{escape(r.name or "–")}<div class="muted small">{escape(r.email)}</div></td>'
        f'<td data-sort="{escape(r.student_id)}">{escape(r.student_id)}</td>'
        f'<td data-sort="{escape(r.sid)}" class=small>{submission}</td>'
        f'<td class=num data-sort="{grade_key:.2f}">{grade}</td>{late_cell}'
        f'<td data-sort="{len(r.lost)}" class=small>{lost or "–"}</td>'
        f'<td data-sort="{len(r.mistakes)}" class=small>{mistakes or "–"}</td>'
        f'<td data-sort="{escape(flags)}">{flag_chips(r.flags)}</td></tr>'
    )


def section_students(
    rows: list[StudentRow], assignment: Assignment, subs: list, late: dict | None = None, pages: dict | None = None
) -> str:
    """Every submission, sortable and filterable; ``late`` ({student: late_policy.LateOutcome}) makes the score
    column the grade after the late policy (the raw score beside it) and adds the rule applied; ``pages``
    ({submission id: its feedback page}) links each submission to what its student saw."""
    present = [f for f in FLAG_LABELS if any(f == g for r in rows for g, _ in r.flags)]
    options = '<option value="">every student</option><option value="attention">needs attention</option>' + "".join(
        f'<option value="{f}">{escape(FLAG_LABELS[f])}</option>' for f in present
    )
    counting = {e.key: e.sub.sid for e in gradebook_entries(subs)}
    placed = {k: (counting.get(k), o) for k, o in late.items()} if late is not None else None
    ordered = sorted(rows, key=lambda r: (r.label.casefold(), r.sid))
    body = [_student_cells(r, assignment, placed, pages or {}) for r in ordered]
    widths = (17, 9, 12, 7, 21, 20, 14) if late is None else (14, 7, 12, 7, 17, 15, 11)
    late_th = '<th data-key="late" style="width:17%">late rule</th>' if late is not None else ""
    said = []
    if late is not None:
        said.append(
            "Grade: after the late policy, as gradebook.csv, canvas.csv and moodle.csv give it (the grader's raw score "
            "under it when the policy changed it); the column sorts by it."
        )
    if pages:
        said.append("Each submission links to its feedback page: what the student saw.")
    score_th = "grade" if late is not None else "score"
    return (
        '<section id="all-students"><h2>All students</h2>'
        + "".join(f"<p class='muted small'>{text}</p>" for text in said)
        + '<div class="controls"><input id="filter-text" type="search" placeholder="filter: name, id, function, mistake…" '
        f'aria-label="filter the table"><select id="filter-flag" aria-label="show only">{options}</select>'
        f'<span class="muted small"><span id="shown">{len(rows)}</span> of {len(rows)} shown; click a column to sort</span></div>'
        f'<table id="students"><thead><tr><th data-key="name" style="width:{widths[0]}%">name</th>'
        f'<th data-key="id" style="width:{widths[1]}%">student id</th><th data-key="submission" style="width:{widths[2]}%">submission</th>'
        f'<th class=num data-key="score" style="width:{widths[3]}%">{score_th}</th>{late_th}'
        f'<th data-key="functions" style="width:{widths[4]}%">functions that lost points</th>'
        f'<th data-key="mistakes" style="width:{widths[5]}%">mistakes</th><th data-key="flags" style="width:{widths[6]}%">flags</th></tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></section>"
    )
