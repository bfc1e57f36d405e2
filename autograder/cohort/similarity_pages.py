"""What grade-all writes of the cohort's similar pairs: ``similarity.csv`` and one side-by-side page per pair.

One job: the files. Every pair at or above course.toml's ``[similarity] threshold`` is a row of
``similarity.csv`` (most similar first); the ``top`` most similar also get a self-contained page,
``similarity/<a>__<b>.html``: both files side by side, the passages they share highlighted
(copydetect's highlighting), with who wrote each and how much of each file is shared. The
measuring is :mod:`.similarity`; the dashboard's section, :mod:`.report`.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from ..config import Assignment
from .similarity import EVIDENCE, NOISE, Pair, Similarity

FOLDER = "similarity"

PAGE_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;margin:0}
main{padding:20px 28px 40px} h1{font-size:22px;margin:0 0 6px} h2{font-size:16px;margin:0 0 4px}
.muted{color:#59636e} .small{font-size:12px}
.pair{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:18px;margin-top:14px}
pre{font:12px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f6f8fa;border:1px solid #d1d9e0;
border-radius:6px;padding:10px;overflow-x:auto;white-space:pre;margin:6px 0 0}
mark{background:#ffd8a8;color:inherit;border-radius:2px} .note{border-left:4px solid #9a6700;padding:4px 10px;background:#fffbea}
a{color:#0969da}
@media print{.pair{grid-template-columns:1fr 1fr} pre{white-space:pre-wrap;font-size:9px}}
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _slug(sid: str) -> str:
    """A submission id as a file name part: ASCII letters, digits, ``_.-`` (no leading dot)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", sid).strip(".-")[:60] or "submission"


def who(sub) -> str:
    """The students behind a submission as the pages name them: names (ids), or the submission id."""
    if sub is None:
        return ""
    label = sub.name or sub.student_id or sub.sid
    return f"{label} ({sub.student_id})" if sub.student_id and sub.student_id != label else label


def _highlighted(source: str, spans: list[tuple[int, int]]) -> str:
    """The source as HTML with the shared passages in ``<mark>`` (copydetect's ``highlight_overlap``)."""
    if not spans:
        return _e(source)
    import numpy as np
    from copydetect.utils import highlight_overlap

    slices = np.array([[s for s, _ in spans], [e for _, e in spans]])
    marked, _ = highlight_overlap(source, slices, "<mark>", "</mark>", escape_html=True)
    return marked


def render_pair(assignment: Assignment, pair: Pair, subs: dict, sources: dict[str, str]) -> str:
    """One pair's self-contained page: both files side by side, the shared passages highlighted."""
    sides = []
    a_side = (pair.a, pair.share_a, pair.lines_a, pair.spans_a, pair.b)
    for sid, share, lines, spans, other in (a_side, (pair.b, pair.share_b, pair.lines_b, pair.spans_b, pair.a)):
        sides.append(
            f"<section><h2>{_e(who(subs.get(sid)))}</h2><div class='muted small'>submission {_e(sid)}: "
            f"{share:.0%} of this file's code (the stub's and the reference's left out) is also in "
            f"{_e(who(subs.get(other)) or other)}'s; {lines} line{'s' if lines != 1 else ''} highlighted</div>"
            f"<pre>{_highlighted(sources.get(sid, ''), spans)}</pre></section>"
        )
    title = f"{who(subs.get(pair.a))} and {who(subs.get(pair.b))}: similarity {pair.score:.2f}"
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        f"<style>{PAGE_CSS}</style></head><body><main><h1>{_e(title)}</h1>"
        f"<p class='muted'>assignment <code>{_e(assignment.name)}</code>; each file as compared (its canonical form: "
        "parsed and written back, without comments, docstrings or statements that do nothing); highlighted: runs of code the two files "
        f"share (at least {NOISE} characters once every name is replaced by a placeholder), apart from the stub's and "
        "the reference's code, which never count. <a href='../report.html#similarity'>Back to the dashboard</a>.</p>"
        f"<p class='note'>{_e(EVIDENCE)}</p><div class='pair'>{''.join(sides)}</div></main></body></html>"
    )


def write_similarity(out: Path, assignment: Assignment, subs: list, result: Similarity) -> list[Path]:
    """similarity.csv (every pair at or above the threshold) and the top pairs' pages under ``out/similarity/``
    (pages of an earlier run are removed first). Sets each top pair's ``page``; returns the files written."""
    from .gradebook import number, write_csv

    folder = out / FOLDER
    if folder.is_dir():
        for old in folder.glob("*.html"):
            old.unlink()
    by_sid = {s.sid: s for s in subs}
    taken: set[str] = set()
    for pair in result.pairs[: result.settings.top]:
        name, n = f"{_slug(pair.a)}__{_slug(pair.b)}", 2
        while name in taken:
            name, n = f"{_slug(pair.a)}__{_slug(pair.b)}-{n}", n + 1
        taken.add(name)
        folder.mkdir(exist_ok=True)
        pair.page = f"{FOLDER}/{name}.html"
        (out / pair.page).write_text(render_pair(assignment, pair, by_sid, result.sources), encoding="utf-8")
    rows = []
    for rank, pair in enumerate(result.pairs, start=1):
        a, b = by_sid.get(pair.a), by_sid.get(pair.b)
        rows.append(
            [rank, number(pair.score), pair.a, who(a), number(pair.share_a), pair.lines_a]
            + [pair.b, who(b), number(pair.share_b), pair.lines_b, pair.page]
        )
    header = ["rank", "score", "submission_a", "students_a", "share_a", "lines_a"]
    header += ["submission_b", "students_b", "share_b", "lines_b", "page"]
    write_csv(out / "similarity.csv", header, rows)
    return [out / "similarity.csv"]
