"""report.html as an instructor sees it: rendered by headless Chromium at 1280 px, filtered, printed.

The dashboard is built from hand-made results documents (every kind of trouble, a group, a
regrade diff), so no grading runs here; tests/test_batch.py covers grade-all end to end.
Skipped, saying why, when Chromium is not installed (`apt-get install chromium`; .ci/run does it).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import KIT

from autograder.cohort.cohort import regrade_diff
from autograder.cohort.export import Submission
from autograder.cohort.report import write_report
from autograder.config import load_assignment

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed, so the dashboard is not rendered: `apt-get install chromium` (.ci/run installs it)",
)
WIDTH = 1280


def _test(name: str, score: float, max_score: float, output: str = "", mistakes: tuple = (), kind: str = "wrong") -> dict:
    status = "passed" if score == max_score else "failed"
    return {
        "name": name,
        "score": score,
        "max_score": max_score,
        "status": status,
        "output": output,
        "extra_data": {
            "test": "hidden/t.py::t",
            "function": name.split(":")[0],
            "mistakes": list(mistakes),
            "kind": "passed" if status == "passed" else kind,
        },
    }


def _doc(tests: list[dict], output: str = "") -> dict:
    kind = "graded" if tests else "ungradable"  # how grading ended, as the grader records it
    return {"score": sum(t["score"] for t in tests), "tests": tests, "output": output, "extra_data": {"kind": kind}}


def _cohort() -> tuple[list[Submission], dict[str, dict]]:
    def good(softmax=30.0, sdpa=60.0, causal=10.0, output="", mistakes=(), kind="wrong"):
        return [
            _test("softmax: rows sum to 1", softmax, 30, "" if softmax == 30 else "rows sum to 0.7", mistakes),
            _test("scaled_dot_product_attention: matches the reference", sdpa, 60, "" if sdpa == 60 else output, kind=kind),
            _test("causal_mask: strict upper triangle", causal, 10, "" if causal == 10 else output, kind=kind),
        ]

    people = [
        ("1001", "Ada Lovelace", good()),
        ("1002", "Alan Turing", good(0, 0, 0, "not implemented")),
        ("1003", "Grace Hopper", good(0, mistakes=("softmax_no_max",))),
        ("1004", "Barbara Liskov", []),
        ("1005", "Edsger Dijkstra", good(30, 60, 0, "causal_mask(4) did not finish within the time limit", kind="timeout")),
        (
            "1006",
            "Niklaus Wirth",
            good(30, 0, 10, "the process exited with status 0 (sys.exit or os._exit in your code?)", kind="exit"),
        ),
        ("1007", "José Núñez", good(30, 45, 10, "weights differ")),
    ]
    subs, documents = [], {}
    for sid, name, tests in people:
        subs.append(
            Submission(
                sid,
                Path("."),
                name=name,
                student_id=sid[-3:],
                email=f"{sid}@example.edu",
                created_at="2026-11-01 10:00:00 -08:00",
            )
        )
        documents[sid] = (
            _doc(tests)
            if tests
            else _doc([], "Score 0: no file named attention.py was found in the upload. Found: attn_final.py.")
        )
    subs[1].late = True
    return subs, documents


def _chromium(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        # Chromium's crash-report folder follows XDG_CONFIG_HOME, not --user-data-dir: keep it in tmp_path.
        env=dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_CACHE_HOME=str(tmp_path / "cache")),
    )


@pytest.fixture
def report(tmp_path) -> Path:
    assignment = load_assignment("attention", KIT)
    subs, documents = _cohort()
    earlier = dict(documents)  # before a fix to a test, José had full marks in it
    earlier["1007"] = _doc([dict(t, score=t["max_score"]) for t in documents["1007"]["tests"]])
    path = tmp_path / "report.html"
    write_report(path, assignment, subs, documents, regrade_diff(earlier, documents), "graded-before/")
    return path


def test_the_browser_runs_the_page_and_the_table_filters(report, tmp_path):
    proc = _chromium("--dump-dom", f"{report.as_uri()}#flag=attention&sort=score-desc", tmp_path=tmp_path)
    dom = proc.stdout
    assert 'data-ready="yes"' in dom, f"the dashboard's script did not run:\n{proc.stderr[-2000:]}"
    attention = re.search(r'<section id="attention">(.*?)</section>', dom, re.S).group(1)
    listed = re.findall(r'data-sid="(\d+)"', attention)
    assert listed[0] == "1006", "a suspected attack comes first"
    assert set(listed) == {"1002", "1004", "1005", "1006"}, "score 0, ungradable, timeout, attack; not a mere 70"
    assert "attn_final.py" in attention and "ran out of time (in: causal_mask" in attention
    body = re.search(r'<table id="students">.*?<tbody>(.*?)</tbody>', dom, re.S).group(1)
    rows = re.findall(r'<tr id="s-(\d+)"([^>]*)>', body)
    shown = [sid for sid, attrs in rows if "hidden" not in attrs]
    assert sorted(shown) == sorted(listed), "#flag=attention shows exactly the students needing attention"
    assert shown[0] == "1005", "sorted by score, highest first (90 points)"
    assert len(re.findall(r'class="hbar"', dom)) == 11, "the score histogram has its 11 bars"
    assert re.search(r'<section id="regrade">.*?Regrade diff \(1 (student )?changed\).*?-15\.00.*?60\.00 → 45\.00', dom, re.S)
    assert 'data-mistake="softmax_no_max"' in dom


def test_screenshot_at_1280_px_shows_the_dashboard(report, tmp_path):
    from PIL import Image

    shot = tmp_path / "dashboard.png"
    proc = _chromium(f"--window-size={WIDTH},1600", f"--screenshot={shot}", report.as_uri(), tmp_path=tmp_path)
    assert shot.is_file(), proc.stderr[-2000:]
    image = Image.open(shot).convert("RGB")
    assert image.size == (WIDTH, 1600)
    # Nothing wider than the window: the right margin column is empty (page background).
    right = {image.getpixel((WIDTH - 3, y)) for y in range(0, 1600, 4)}
    assert right == {(255, 255, 255)}, f"something overflows 1280 px: {sorted(right)[:5]}"
    colours = image.getcolors(maxcolors=1 << 20)
    counts = {rgb: n for n, rgb in colours}

    def near(target: tuple[int, int, int]) -> int:
        return sum(n for rgb, n in counts.items() if all(abs(a - b) <= 6 for a, b in zip(rgb, target)))

    assert near((0xB4, 0x23, 0x18)) > 500, "the red of the needs-attention card and the 0-9 histogram bar"
    assert near((0x44, 0x72, 0xC4)) > 500, "the histogram's blue bars"
    assert near((0x1A, 0x7F, 0x37)) > 500, "the green pass-rate bars and full-marks bar"


def test_print_renders_every_section(report, tmp_path):
    pdf = tmp_path / "dashboard.pdf"
    proc = _chromium("--no-pdf-header-footer", f"--print-to-pdf={pdf}", report.as_uri(), tmp_path=tmp_path)
    assert pdf.is_file() and pdf.read_bytes().startswith(b"%PDF"), proc.stderr[-2000:]
    assert pdf.stat().st_size > 20_000
