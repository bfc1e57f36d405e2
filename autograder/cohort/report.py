"""The instructor's dashboard: one self-contained ``report.html`` (no server, no assets, no network).

What an instructor looks for after grading a class, in that order: who needs
follow-up (ungradable uploads with the reason, crashes, timeouts, scores of 0,
suspected attacks), the score distribution, which functions the class got
wrong (tests folded under each function), which catalogued mistakes were made
(by their human title, counting students), and every student in a table that
sorts and filters (each linked to the student's feedback page). A regrade diff is shown first
when ``grade-all --compare`` was used; the similar pairs, evidence for a person to look at, come
before the table; scores are totals after the term's late policy when grade-all gives them.
Everything here reads results documents and grade-all's findings only: nothing is re-run.

One job: the HTML. The rows and tests it shows are read in :mod:`.cohort`, the flags
in :mod:`.flags`, the table of students is :mod:`.report_table`, and its stylesheet and script are
:mod:`.report_assets`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

from ..config import Assignment
from .class_stats import MEAN_DEFINITION, annotate_regrade, class_mean, student_scores
from .cohort import StudentRow, TestInfo, cohort_tests, mistake_title, pass_rates, student_rows
from .flags import ATTENTION_FLAGS, FLAG_LABELS
from .report_assets import CSS, SCRIPT
from .report_table import escape as _e
from .report_table import points as _points
from .report_table import section_students


def score_histogram_svg(scores: list[float], total: float = 100.0) -> str:
    """An inline SVG histogram: ten bins of a tenth of the points, and full marks on its own."""
    bins = [0] * 11
    for s in scores:
        bins[10 if s >= total - 1e-9 else min(int(s / total * 10), 9)] += 1
    labels = [f"{i * 10}–{i * 10 + 9}" for i in range(10)] + ["100"]
    width, height, left, bottom, top = 560, 230, 36, 40, 16
    plot_w, plot_h = width - left - 8, height - bottom - top
    peak = max(bins + [1])
    step = plot_w / len(bins)
    parts = [
        f'<svg id="score-histogram" role="img" aria-label="score distribution" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg" font-size="11" font-family="system-ui,sans-serif">',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 8}" y2="{top + plot_h}" stroke="#888"/>',
    ]
    for i, count in enumerate(bins):
        h = plot_h * count / peak
        x = left + i * step + 3
        color = "#1a7f37" if i == 10 else ("#b42318" if i == 0 else "#4472c4")
        parts.append(
            f'<rect class="hbar" x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{step - 6:.1f}" height="{h:.1f}" fill="{color}">'
            f"<title>{labels[i]}: {count}</title></rect>"
        )
        if count:
            parts.append(f'<text x="{x + (step - 6) / 2:.1f}" y="{top + plot_h - h - 3:.1f}" text-anchor="middle">{count}</text>')
        parts.append(f'<text x="{x + (step - 6) / 2:.1f}" y="{top + plot_h + 14}" text-anchor="middle">{labels[i]}</text>')
    parts.append(
        f'<text x="{left + plot_w / 2:.0f}" y="{height - 6}" text-anchor="middle" fill="#59636e">score (points)</text>'
        f'<text x="12" y="{top + plot_h / 2:.0f}" text-anchor="middle" fill="#59636e" transform="rotate(-90 12 {top + plot_h / 2:.0f})">students</text>'
        "</svg>"
    )
    return "".join(parts)


def _link(row: StudentRow) -> str:
    return f'<a href="#{row.anchor}">{_e(row.label)}</a>'


def _bar(fraction: float, kind: str) -> str:
    return f'<div class="bar {kind}"><span style="width:{max(0.0, min(fraction, 1.0)) * 100:.1f}%"></span></div>'


def _section_attention(rows: list[StudentRow]) -> str:
    needing = [r for r in rows if r.needs_attention]
    severity = list(FLAG_LABELS)
    needing.sort(key=lambda r: (min(severity.index(f) for f, _ in r.flags if f in ATTENTION_FLAGS), r.label.casefold()))
    if not needing:
        return '<section id="attention"><h2>Needs attention</h2><p>Nobody: every upload was graded without a crash, timeout or score of 0.</p></section>'
    items = []
    for r in needing:
        reasons = "<br>".join(f"<b>{_e(FLAG_LABELS[f])}</b>: {_e(why)}" for f, why in r.flags if f in ATTENTION_FLAGS)
        who = f"{_e(r.label)}" + (f" ({_e(r.student_id)})" if r.student_id and r.student_id != r.label else "")
        items.append(
            f'<li data-sid="{_e(r.sid)}"><a href="#{r.anchor}">{who}</a>, {_points(r.score)} points '
            f'<span class="muted small">[{_e(r.sid)}]</span><br><span class="why">{reasons}</span></li>'
        )
    return (
        f'<section id="attention"><h2>Needs attention ({len(needing)})</h2>'
        '<p class="muted small">Ungradable uploads, crashes, timeouts, scores of 0 and suspected attacks, most serious first. '
        "Each reason is the grader's own message.</p>"
        f'<ol class="attention">{"".join(items)}</ol></section>'
    )


def _section_distribution(rows: list[StudentRow], scores: list[float], total: float, policy: str = "") -> str:
    """The distribution of the scores that count: one per student (latest submission each; a group's
    score for each member; after the late policy, ``policy`` saying which), the population of the
    class mean and of gradebook.csv's ``total``."""
    ungradable = sum(len(r.students) for r in rows if any(f == "ungradable" for f, _ in r.flags))
    stats = [
        ("students", len(scores)),
        ("mean", f"{sum(scores) / len(scores):.1f}" if scores else "–"),
        ("median", f"{median(scores):.1f}" if scores else "–"),
        ("full marks", sum(s >= total - 1e-9 for s in scores)),
        ("score 0", sum(s == 0 for s in scores)),
        ("ungradable", ungradable),
    ]
    table = "".join(f"<tr><th>{k}</th><td class=num>{v}</td></tr>" for k, v in stats)
    return (
        '<section id="distribution"><h2>Score distribution</h2>'
        f'<p class="muted small">One score per student, {_e(MEAN_DEFINITION)}: the rows of gradebook.csv'
        f"{' (their total; ' + _e(policy) + ')' if policy else ''}.</p><div class='twocol'>"
        f"<div>{score_histogram_svg(scores, total)}</div><table style='max-width:280px'>{table}</table></div></section>"
    )


def _section_functions(tests: list[TestInfo], rates: dict[str, float], n: int) -> str:
    if not tests:
        return '<section id="functions"><h2>Pass rates per function</h2><p>No test ran on any submission.</p></section>'
    functions: dict[str, list[TestInfo]] = {}
    for t in tests:
        functions.setdefault(t.function, []).append(t)
    blocks = []
    for function, members in functions.items():
        points = sum(t.max_score for t in members)
        earned = sum(rates[t.name] * t.max_score for t in members) / points if points else 0.0
        worst = min(rates[t.name] for t in members)
        inner = "".join(
            f"<tr><td>{_e(t.name)}</td><td class=num>{_points(t.max_score)}</td><td class=num>{rates[t.name]:.0%}</td>"
            f"<td style='width:180px'>{_bar(rates[t.name], 'rate')}</td></tr>"
            for t in sorted(members, key=lambda t: rates[t.name])
        )
        blocks.append(
            f'<tr class="function"><td><details><summary><b>{_e(function)}</b> '
            f'<span class="muted small">{len(members)} test{"s" if len(members) != 1 else ""}, hardest first</span></summary>'
            f"<table><tr><th>test</th><th class=num>points</th><th class=num>passed</th><th></th></tr>{inner}</table>"
            f"</details></td><td class=num>{_points(points)}</td><td class=num>{earned:.0%}</td>"
            f"<td class=num>{worst:.0%}</td><td style='width:220px'>{_bar(earned, 'rate')}</td></tr>"
        )
    return (
        '<section id="functions"><h2>Pass rates per function</h2>'
        f'<p class="muted small">Over all {n} submissions (an ungradable upload counts as failing every test). '
        "Open a function to see its tests.</p>"
        "<table><tr><th>function</th><th class=num>points</th><th class=num>points earned</th>"
        f"<th class=num>hardest test passed by</th><th></th></tr>{''.join(blocks)}</table></section>"
    )


def _section_mistakes(assignment: Assignment, rows: list[StudentRow]) -> str:
    by_mistake: dict[str, list[StudentRow]] = {}
    for r in rows:
        for m in r.mistakes:
            by_mistake.setdefault(m, []).append(r)
    if not by_mistake:
        return '<section id="mistakes"><h2>Catalogued mistakes</h2><p>No catalogued mistake was recognised.</p></section>'
    everyone = len({k for r in rows for k in r.students}) or 1
    entries = []
    for m, who in by_mistake.items():
        students = {k for r in who for k in r.students}
        entries.append((len(students), m, who))
    entries.sort(key=lambda e: (-e[0], e[1]))
    body = "".join(
        f'<tr data-mistake="{_e(m)}"><td>{_e(mistake_title(assignment, m))}<div class="muted small">{_e(m)}</div></td>'
        f"<td class=num>{count}</td><td style='width:160px'>{_bar(count / everyone, 'mistake')}</td>"
        f"<td>{', '.join(_link(r) for r in who)}</td></tr>"
        for count, m, who in entries
    )
    return (
        '<section id="mistakes"><h2>Catalogued mistakes</h2>'
        '<p class="muted small">Each classic mistake recognised in at least one failed test, counted once per student '
        "(a group submission counts each member).</p>"
        f"<table><tr><th>mistake</th><th class=num>students</th><th></th><th>who</th></tr>{body}</table></section>"
    )


def _section_diff(diff: list[dict], rows: list[StudentRow], compared_with: str, summary: object = None) -> str:
    """Every changed submission, those that set a student's grade first; the heading counts students
    (``summary``: class_stats.RegradeSummary), not submissions: a superseded one changes no grade."""
    by_sid = {r.sid: r for r in rows}
    if not diff:
        return f'<section id="regrade"><h2>Regrade diff</h2><p>No score changed since the grading in <code>{_e(compared_with)}</code>.</p></section>'
    items = []
    for d in sorted(diff, key=lambda d: not d.get("counts", True)):
        r = by_sid.get(d["sid"])
        who = f'<a href="#{r.anchor}">{_e(r.label)}</a>' if r else _e(d["sid"])
        if not d.get("counts", True):
            who += f'<div class="muted small">counts for nobody: {_e(d.get("why_not", ""))}</div>'
        old = "–" if d["old"] is None else _points(d["old"])
        new = "–" if d["new"] is None else _points(d["new"])
        cls = "up" if d["change"] > 0 else "down"
        tests = "<br>".join(
            f"{_e(name)}: {'–' if a is None else _points(a)} → {'–' if b is None else _points(b)}" for name, a, b in d["tests"]
        )
        items.append(
            f'<tr data-counts="{"yes" if d.get("counts", True) else "no"}"><td>{who}</td><td class=num>{old}</td><td class=num>{new}</td>'
            f'<td class="num {cls}">{d["change"]:+.2f}</td><td class=small>{tests or "(the total only)"}</td></tr>'
        )
    if summary is None:
        up = sum(d["change"] > 0 for d in diff)
        heading, said = f"{len(diff)} changed", f"{len(diff)} submission(s) changed: {up} up, {len(diff) - up} down"
    else:
        heading, said = f"{summary.students} student{'s' if summary.students != 1 else ''} changed", str(summary)
    return (
        f'<section id="regrade"><h2>Regrade diff ({heading})</h2>'
        f'<p class="muted small">Compared with <code>{_e(compared_with)}</code>: {_e(said)} '
        "(also in <code>regrade_diff.csv</code>).</p>"
        "<table><tr><th>student</th><th class=num>before</th><th class=num>now</th><th class=num>change</th><th>tests that changed</th></tr>"
        f"{''.join(items)}</table></section>"
    )


def _section_similarity(similarity, rows: list[StudentRow]) -> str:
    """The most similar pairs (similarity.Similarity), each with its side-by-side page; evidence, never a flag."""
    from .similarity import EVIDENCE, NOISE

    by_sid = {r.sid: r for r in rows}
    s = similarity.settings
    head = f'<section id="similarity"><h2>Similar pairs ({len(similarity.pairs)})</h2><p><b>{_e(EVIDENCE)}</b></p>'
    if similarity.unavailable:
        return head + f"<p>Not measured: {_e(similarity.unavailable)}.</p></section>"
    said = (
        f"Code two students' graded files share (copydetect: every name replaced, runs of {NOISE} characters), over "
        f"{len(similarity.sources)} submissions ({similarity.compared} pairs, {similarity.seconds:.1f} s); the stub's and the "
        "reference's code never count, nor two submissions of one student or group. A file's share: how much of the code "
        "its student wrote (the file but the stub) is also in the other file and is not the reference's; the score is the "
        "larger share; lines: how many lines the shared passages touch. "
        f"Listed from {s.threshold:.2f} (course.toml [similarity]), the {s.top} highest here, all in <code>similarity.csv</code>."
    )
    said += "".join(  # a submission whose file could not be read: on its own row, the others compared
        f'</p><p class="unread" data-sid="{_e(sid)}">Not compared: {_e(by_sid[sid].label if sid in by_sid else sid)}: {_e(why)}.'
        for sid, why in getattr(similarity, "unread", {}).items()
    )
    if not similarity.pairs:
        return head + f'<p class="muted small">{said}</p><p>No pair reaches {s.threshold:.2f}.</p></section>'

    def person(sid: str) -> str:
        r = by_sid.get(sid)
        return f'<a href="#{r.anchor}">{_e(r.label)}</a>' if r else _e(sid)

    def link(page: str) -> str:
        return f'<a href="{_e(page)}">side by side</a>' if page else "–"

    body = "".join(
        f'<tr data-pair="{_e(p.a)} {_e(p.b)}"><td class=num>{p.score:.2f}</td>'
        f"<td>{person(p.a)}</td><td class=num>{p.share_a:.0%}</td><td class=num>{p.lines_a}</td>"
        f"<td>{person(p.b)}</td><td class=num>{p.share_b:.0%}</td><td class=num>{p.lines_b}</td><td>{link(p.page)}</td></tr>"
        for p in similarity.pairs[: s.top]
    )
    return (
        head + f'<p class="muted small">{said}</p><table><tr><th class=num>score</th><th>student</th><th class=num>share</th>'
        "<th class=num>lines</th><th>student</th><th class=num>share</th><th class=num>lines</th><th>shared passages</th></tr>"
        f"{body}</table></section>"
    )


@dataclass
class Extras:
    """What grade-all shows beyond the results documents (all optional: the dashboard renders without)."""

    late: dict | None = None  # {student key: late_policy.LateOutcome}: totals after the late policy
    policy: str = ""  # the late policy in one line (late_policy.LatePolicy.describe)
    similarity: object = None  # similarity.Similarity: the similar pairs section
    pages: dict[str, str] = field(default_factory=dict)  # {submission id: students/<id>.html}


def _cards(mean, rows: list[StudentRow], summary, similarity) -> str:
    attention = sum(r.needs_attention for r in rows)
    cards = [
        ("students", mean.students, False),
        ("submissions", len(rows), False),
        (f"mean score ({MEAN_CARD})", f"{mean.mean:.1f}", False),
        ("need attention", attention, attention > 0),
    ]
    if summary is not None:
        cards.append(("students whose score changed", summary.students, summary.students > 0))
    if similarity is not None and not similarity.unavailable:
        cards.append(("similar pairs (evidence only)", len(similarity.pairs), False))
    return "".join(f'<div class="card{" alert" if alert else ""}"><b>{v}</b>{_e(k)}</div>' for k, v, alert in cards)


def render_report(
    assignment: Assignment,
    subs: list,
    documents: dict[str, dict],
    diff: list[dict] | None = None,
    compared_with: str = "",
    deadline: str = "",
    extras: Extras | None = None,
) -> str:
    """The dashboard as one HTML string (inline CSS, SVG and a small script; works offline and in print).

    ``deadline``: which deadline flagged late submissions and where it came from (grade-all's line);
    ``extras``: the late policy's outcomes, the similar pairs and the students' pages (:class:`Extras`)."""
    extras = extras or Extras()
    rows = student_rows(subs, documents)
    # Pass rates and mistakes count each submission that counts for a student (a superseded one
    # only appears in the table); scores, the mean and the histogram count students, as the gradebook.
    current = [r for r in rows if not r.superseded_by]
    tests = cohort_tests(documents)
    rates = pass_rates(tests, documents, [r.sid for r in current])
    total = assignment.total_points or 100.0
    mean = class_mean(subs, documents, extras.late)
    summary = annotate_regrade(diff, subs) if diff is not None else None
    scores = list(student_scores(subs, documents, extras.late).values())
    sections = [
        _section_attention(rows),
        _section_diff(diff, rows, compared_with, summary) if diff is not None else "",
        _section_distribution(current, scores, total, extras.policy),
        _section_functions(tests, rates, len(current)),
        _section_mistakes(assignment, current),
        _section_similarity(extras.similarity, rows) if extras.similarity is not None else "",
        section_students(rows, assignment, subs, extras.late, extras.pages),
    ]
    title = f"{assignment.title}: cohort report"
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body><main>"
        f"<h1>{_e(title)}</h1><p class='muted'>assignment <code>{_e(assignment.name)}</code>, {total:g} points; "
        f"{len(rows)} submissions from {mean.students} students; {_e(str(mean))}"
        f"{'; ' + _e(deadline) if deadline else ''}.</p>"
        f'<div class="cards">{_cards(mean, rows, summary, extras.similarity)}</div>{"".join(sections)}'
        f"</main><script>{SCRIPT}</script></body></html>"
    )


MEAN_CARD = "latest submission per student"


def write_report(
    path: Path,
    assignment: Assignment,
    subs: list,
    documents: dict[str, dict],
    diff: list[dict] | None = None,
    compared_with: str = "",
    deadline: str = "",
    extras: Extras | None = None,
) -> None:
    html_text = render_report(assignment, subs, documents, diff, compared_with, deadline, extras)
    Path(path).write_text(html_text, encoding="utf-8")
