"""The cohort report: one self-contained HTML page with plots (no server, no assets)."""

from __future__ import annotations

import base64
import html
import io
from collections import Counter
from pathlib import Path

from .config import Assignment


def _png(fig) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode()


def cohort_statistics(documents: dict[str, dict]) -> dict:
    """Scores, pass rate per test and how often each catalogued mistake was recognised."""
    scores = [float(d.get("score", 0)) for d in documents.values()]
    passed: Counter = Counter()
    seen: Counter = Counter()
    mistakes: Counter = Counter()
    for doc in documents.values():
        for t in doc.get("tests", []):
            seen[t["name"]] += 1
            passed[t["name"]] += t["status"] == "passed"
        diagnosed = set()
        for t in doc.get("tests", []):
            diagnosed.update(t.get("extra_data", {}).get("mistakes", []))
        mistakes.update(diagnosed)
    rates = {name: passed[name] / seen[name] for name in seen}
    return {"scores": scores, "pass_rate": rates, "mistakes": mistakes}


def write_report(path: Path, assignment: Assignment, subs: list, documents: dict[str, dict]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stats = cohort_statistics(documents)
    scores, rates, mistakes = stats["scores"], stats["pass_rate"], stats["mistakes"]
    images = []
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.hist(scores, bins=[i * 5 for i in range(21)], color="#4472c4")
    ax.set(xlabel="score", ylabel="submissions", title=f"{assignment.name}: scores (n={len(scores)})")
    images.append(_png(fig))
    plt.close(fig)
    if rates:
        names = sorted(rates, key=lambda n: rates[n])
        fig, ax = plt.subplots(figsize=(7, 0.22 * len(names) + 1))
        ax.barh(range(len(names)), [rates[n] for n in names], color="#70ad47")
        ax.set_yticks(range(len(names)), [n[:70] for n in names], fontsize=6)
        ax.set(xlim=(0, 1), xlabel="fraction of submissions passing", title="pass rate per test")
        images.append(_png(fig))
        plt.close(fig)
    if mistakes:
        common = mistakes.most_common(15)
        fig, ax = plt.subplots(figsize=(7, 0.3 * len(common) + 1))
        ax.barh(range(len(common)), [c for _, c in common], color="#ed7d31")
        ax.set_yticks(range(len(common)), [m[:70] for m, _ in common], fontsize=7)
        ax.invert_yaxis()
        ax.set(xlabel="submissions", title="catalogued mistakes recognised")
        images.append(_png(fig))
        plt.close(fig)
    mean = sum(scores) / len(scores) if scores else 0
    rows = (
        "".join(f"<tr><td>{html.escape(m)}</td><td>{c}</td></tr>" for m, c in mistakes.most_common())
        or "<tr><td colspan=2>no catalogued mistake recognised</td></tr>"
    )
    hardest = "".join(
        f"<tr><td>{html.escape(n)}</td><td>{rates[n]:.0%}</td></tr>" for n in sorted(rates, key=lambda n: rates[n])[:10]
    )
    body = f"""<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(assignment.title)}: cohort report</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}} td,th{{padding:2px 8px;border-bottom:1px solid #ddd}}</style></head><body>
<h1>{html.escape(assignment.title)}: cohort report</h1>
<p>{len(scores)} submissions, mean score {mean:.1f}, {sum(s == 100 for s in scores)} at 100, {sum(s == 0 for s in scores)} at 0.</p>
{"".join(f'<img src="data:image/png;base64,{img}">' for img in images)}
<h2>Mistakes recognised (submissions)</h2><table>{rows}</table>
<h2>Hardest tests</h2><table>{hardest}</table>
</body></html>"""
    path.write_text(body)
