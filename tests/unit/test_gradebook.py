"""The LMS-ready gradebooks and grade-all's progress events (no grading: results documents made by hand)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from autograder.cohort.class_stats import gradebook_entries, mark_superseded
from autograder.cohort.cohort import regrade_diff
from autograder.cohort.export import Submission, _parse_time
from autograder.cohort.gradebook import safe_cell, short_column, write_gradebooks, write_regrade_diff
from autograder.config import load_assignment
from autograder.pool.parallel import EVENT_PREFIX, parse_event, progress_event

KIT = Path(__file__).resolve().parents[2]
ATTENTION = load_assignment("attention", KIT)


def person(name: str, sid: str, email: str = "") -> dict:
    return {"name": name, "sid": sid, "email": email}


def result(name: str, score: float, max_score: float, key: str) -> dict:
    status = "passed" if score == max_score else "failed"
    return {
        "name": name,
        "score": score,
        "max_score": max_score,
        "status": status,
        "extra_data": {"test": key, "function": name.split(":")[0].split()[0], "mistakes": []},
    }


TESTS = [
    ("softmax: rows sum to 1 [float32]", 1.5, "hidden/test_softmax.py::test_rows"),
    ("softmax: rows sum to 1 [float64]", 1.5, "hidden/test_softmax.py::test_rows"),
    ("scaled_dot_product_attention: matches, within 1e-10 ≈ float64", 7.0, "hidden/test_sdpa.py::test_matches"),
    ("softmax and scaled_dot_product_attention: by hand", 90.0, "hidden/test_sdpa.py::test_by_hand"),
]


def graded(*scores: float) -> dict:
    tests = [result(name, s, m, key) for (name, m, key), s in zip(TESTS, scores)]
    return {"score": sum(scores), "tests": tests, "output": ""}


def cohort() -> tuple[list[Submission], dict[str, dict]]:
    subs = [
        Submission(
            "10",
            Path("."),
            name="Ada",
            student_id="1",
            created_at="2026-11-01 10:00:00.000000000 -08:00",
            submitters=[person("Ada", "1")],
        ),
        Submission(
            "11",
            Path("."),
            name="Ada",
            student_id="1",
            created_at="2026-11-02 09:00:00.000000000 -08:00",
            submitters=[person("Ada", "1")],
        ),
        Submission(
            "12",
            Path("."),
            name="José Núñez, Kim",
            student_id="7;8",
            created_at="2026-11-01 08:00:00 -08:00",
            submitters=[person("José Núñez", "7", "jose@x.edu"), person("Kim", "8")],
        ),
        Submission("plain_folder_student", Path(".")),
    ]
    documents = {
        "10": graded(1.5, 1.5, 7, 90),
        "11": graded(1.5, 0, 7, 0),
        "12": graded(1.5, 1.5, 3.5, 90),
        "plain_folder_student": {"score": 0, "tests": [], "output": "Score 0: the upload is empty"},
    }
    return subs, documents


def read(path: Path) -> list[dict]:
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf"), f"{path.name} has no UTF-8 BOM (Excel would garble accented names)"
    return list(csv.DictReader(raw.decode("utf-8-sig").splitlines()))


def test_one_row_per_student_groups_expanded_latest_submission_counts(tmp_path):
    subs, documents = cohort()
    write_gradebooks(tmp_path, ATTENTION, subs, documents)
    rows = read(tmp_path / "gradebook.csv")
    by_id = {r["student_id"] or r["submission"]: r for r in rows}
    assert sorted(by_id) == ["1", "7", "8", "plain_folder_student"]
    assert by_id["1"]["submission"] == "11" and by_id["1"]["total"] == "8.50", "the latest submission counts"
    assert "also 10 (100.00)" in by_id["1"]["notes"]
    assert by_id["7"]["total"] == by_id["8"]["total"] == "96.50" and by_id["7"]["name"] == "José Núñez"
    assert by_id["plain_folder_student"]["flags"] == "ungradable zero"


def test_short_ascii_headers_one_number_format_and_a_legend(tmp_path):
    subs, documents = cohort()
    write_gradebooks(tmp_path, ATTENTION, subs, documents)
    header = (tmp_path / "gradebook.csv").read_text(encoding="utf-8-sig").splitlines()[0].split(",")
    # a test counts under the one function it declares (here "softmax"), as in the summary
    assert header[6:9] == ["total", "softmax", "sdpa"] and "softmax_sdpa" not in header
    assert all(re.fullmatch(r"[a-z0-9_]{1,20}", h) for h in header), header
    for name in ("gradebook.csv", "gradebook_tests.csv", "canvas.csv"):
        for row in read(tmp_path / name):
            for column, value in row.items():
                if column in ("total", "softmax", "sdpa", ATTENTION.title) or re.fullmatch(r"t\d\d", column):
                    assert re.fullmatch(r"\d+\.\d\d", value), f"{name} {column}={value!r}"
    legend = {r["column"]: r for r in read(tmp_path / "gradebook_legend.csv")}
    assert legend["sdpa"]["full_name"].startswith("scaled_dot_product_attention") and legend["sdpa"]["max_points"] == "7.00"
    assert legend["t03"]["full_name"] == TESTS[2][0] and legend["t03"]["test_key"] == TESTS[2][2]
    assert legend["total"]["max_points"] == "100.00"


def test_canvas_csv_has_the_import_columns(tmp_path):
    subs, documents = cohort()
    write_gradebooks(tmp_path, ATTENTION, subs, documents, canvas_column="Attention (4242)")
    rows = read(tmp_path / "canvas.csv")
    assert list(rows[0]) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Attention (4242)"]
    jose = next(r for r in rows if r["SIS User ID"] == "7")
    assert jose["Student"] == "José Núñez" and jose["SIS Login ID"] == "jose@x.edu" and jose["Attention (4242)"] == "96.50"


def test_superseded_submissions_are_marked():
    subs, _ = cohort()
    mark_superseded(subs)
    assert [s.superseded_by for s in subs] == ["11", "", "", ""]
    assert [e.key for e in gradebook_entries(subs)] == ["1", "7", "8", "plain_folder_student"]


def test_regrade_diff_csv(tmp_path):
    subs, documents = cohort()
    earlier = json.loads(json.dumps(documents))
    earlier["12"]["tests"][2]["score"] = 7.0
    earlier["12"]["score"] = 100.0
    write_regrade_diff(tmp_path / "regrade_diff.csv", subs, regrade_diff(earlier, documents))
    (row,) = read(tmp_path / "regrade_diff.csv")
    assert row["submission"] == "12" and row["change"] == "-3.50" and row["tests_changed"] == "1"
    assert row["tests"] == f"{TESTS[2][0]}: 7.00 -> 3.50"


def test_short_columns_are_unique_ascii():
    taken: set[str] = set()
    assert short_column("scaled_dot_product_attention", taken) == "sdpa"
    assert short_column("MultiHeadAttentionWithAVeryLongName", taken) == "mhawavln"
    assert short_column("softmax", taken) == "softmax" and short_column("softmax", taken) == "softmax_2"
    assert short_column("total", taken) == "total_2"


def test_progress_counts_events_never_human_output():
    line = progress_event("/x/submission_1", 87.5)
    assert parse_event(line) == {"event": "graded", "upload": "/x/submission_1", "score": 87.5}
    assert parse_event("....F.." + line) is not None, "pytest's dots before the event on the same line"
    for noise in (
        "/x/submission_1: 87.5",
        'File "x.py", line 3: in softmax',
        EVENT_PREFIX + "{not json",
        EVENT_PREFIX + '{"event": "other"}',
    ):
        assert parse_event(noise) is None, noise


def test_gradescope_times_parse():
    moment = _parse_time("2026-11-01 10:00:00.123456789 -08:00")
    assert moment is not None and moment.utcoffset().total_seconds() == -8 * 3600 and moment.microsecond == 123456
    assert _parse_time("2026-11-02T00:00Z") > moment and _parse_time("") is None and _parse_time("soon") is None


# Cells a spreadsheet would run as formulas (OWASP's CSV-injection list), from names, e-mails,
# file names and the canvas column: each must come out as text.
HOSTILE = ['=HYPERLINK("http://x","y")', "@SUM(A1:A9)", "+1-2+3", "-2+3+cmd|' /C calc'!A0", "\tTAB", "\rCR"]


def test_safe_cell_quotes_formulas_and_keeps_numbers():
    for text in HOSTILE:
        assert safe_cell(text) == "'" + text
    for number in ["-3.00", "+1.50", "0.00", "12", "-0.5", "1e3"]:
        assert safe_cell(number) == number, "a plain number stays a number"
    for plain in ["Ada", "José Núñez", "", "'quoted", "a=b", "x@y.edu"]:
        assert safe_cell(plain) == plain
    assert safe_cell(3) == 3 and safe_cell(None) is None


def test_every_csv_cell_that_could_start_a_formula_is_text(tmp_path):
    subs, documents = cohort()
    evil_name, evil_email, evil_sid = HOSTILE[0], HOSTILE[1], HOSTILE[2]
    subs.append(
        Submission(
            HOSTILE[3],
            Path("."),
            name=evil_name,
            student_id=evil_sid,
            email=evil_email,
            submitters=[person(evil_name, evil_sid, evil_email)],
            notes=[HOSTILE[4]],
        )
    )
    documents[HOSTILE[3]] = graded(1.5, 1.5, 7, 90)
    written = write_gradebooks(tmp_path, ATTENTION, subs, documents, canvas_column="=1+1")
    earlier = json.loads(json.dumps(documents))
    earlier[HOSTILE[3]]["score"] = 98.5
    earlier[HOSTILE[3]]["tests"][0]["score"] = 0.0
    write_regrade_diff(
        tmp_path / "regrade_diff.csv",
        subs,
        regrade_diff(earlier, documents)
        + [{"sid": "11", "old": 11.5, "new": 8.5, "change": -3.0, "tests": [("=cmd", 1.0, None)]}],
    )
    for path in [*written, tmp_path / "regrade_diff.csv"]:
        text = path.read_bytes().decode("utf-8-sig")
        for row in csv.reader(text.splitlines()):
            for cell in row:
                number = re.fullmatch(r"[+-]?[\d.]+", cell)
                assert number or not cell.startswith(("=", "+", "-", "@", "\t", "\r")), (path.name, cell)
    rows = read(tmp_path / "gradebook.csv")
    assert any(r["name"] == "'" + evil_name and r["email"] == "'" + evil_email for r in rows)
    assert "'=1+1" in (tmp_path / "canvas.csv").read_text(encoding="utf-8-sig").splitlines()[0]
    diff = {r["submission"]: r for r in read(tmp_path / "regrade_diff.csv")}
    assert diff["11"]["change"] == "-3.00", "a negative score change stays a number"
    assert diff["'" + HOSTILE[3]]["name"] == "'" + evil_name
