"""grade-all on a Gradescope export and a plain folder: results, dashboard, gradebooks, regrade diff, resume."""

import csv
import html
import json
import shutil
import zipfile

import pytest
from conftest import KIT, reference_source, run_cli, stub_source

from autograder.catalogue import read_catalogue, submission_source
from autograder.cohort.cohort import mistake_title
from autograder.config import load_assignment

METADATA = """\
submission_1001:
  :submitters:
  - :name: Ada Lovelace
    :sid: '111'
    :email: ada@example.edu
  :created_at: 2026-11-01 10:00:00.000000000 -08:00
submission_1002:
  :submitters:
  - :name: Alan Turing
    :sid: '222'
    :email: alan@example.edu
  :created_at: 2026-11-03 10:00:00.000000000 -08:00
submission_1003:
  :submitters:
  - :name: Grace Hopper
    :sid: '333'
    :email: grace@example.edu
  - :name: José Núñez
    :sid: '444'
    :email: jose@example.edu
  :created_at: 2026-11-01 09:00:00.000000000 -08:00
submission_1004:
  :submitters:
  - :name: Ada Lovelace
    :sid: '111'
    :email: ada@example.edu
  :created_at: 2026-10-30 10:00:00.000000000 -08:00
submission_1005:
  :submitters:
  - :name: Barbara Liskov
    :sid: '555'
    :email: barbara@example.edu
  :created_at: 2026-11-01 08:00:00.000000000 -08:00
submission_1006:
  :submitters:
  - :name: Edsger Dijkstra
    :sid: '666'
    :email: edsger@example.edu
  :created_at: 2026-11-01 08:00:00.000000000 -08:00
"""


def _export(folder, files):
    folder.mkdir()
    (folder / "submission_metadata.yml").write_text(METADATA)
    for sid, (name, source) in files.items():
        (folder / sid).mkdir()
        if name.endswith(".zip"):
            with zipfile.ZipFile(folder / sid / name, "w") as zf:  # two candidates, neither named attention.py
                zf.writestr("attn_final.py", source)
                zf.writestr("attn_draft.py", source)
        else:
            (folder / sid / name).write_text(source)
    return folder


def _csv(path):
    raw = path.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf"), f"{path.name}: no UTF-8 BOM"
    return list(csv.DictReader(raw.decode("utf-8-sig").splitlines()))


def test_gradescope_export_dashboard_gradebooks_regrade_diff_and_resume(tmp_path):
    assignment = load_assignment("attention", KIT)
    mistake = read_catalogue(assignment, "mistake")[0]
    export = _export(
        tmp_path / "export",
        {
            "submission_1001": ("attention.py", reference_source("attention")),
            "submission_1002": ("attention.py", stub_source("attention")),
            "submission_1003": ("attention.py", submission_source(assignment, mistake)),  # a group of two
            "submission_1004": ("notes.py", "x = 1\n"),  # Ada's earlier upload, superseded by 1001
            "submission_1005": ("work.zip", reference_source("attention")),  # a zip of attn_final.py and attn_draft.py
            "submission_1006": ("attention.py", reference_source("attention") + "\ndef broken(:\n    pass\n"),
        },
    )
    out = tmp_path / "out"
    proc = run_cli("grade-all", "attention", str(export), "--out", str(out), "--due", "2026-11-02T00:00:00-08:00", "--jobs", "2")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "111 appears in 2 submissions" in proc.stderr
    assert "6/6" in proc.stderr and "7/6" not in proc.stderr, "progress counts each graded submission once"

    rows = _csv(out / "gradebook.csv")
    by_student = {r["student_id"]: r for r in rows}
    assert sorted(by_student) == ["111", "222", "333", "444", "555", "666"], "one row per student, the group expanded"
    # one class mean: the gradebook's rows (latest submission per student, a group for each member), said so
    mean = f"mean {sum(float(r['total']) for r in rows) / len(rows):.1f} over 6 students, latest submission each"
    assert mean in proc.stdout and mean in (out / "report.html").read_text()
    assert "deadline 2026-11-02 00:00 UTC-08:00 (--due, overriding course.toml's 2027-02-22 23:59 UTC)" in proc.stdout
    assert by_student["111"]["submission"] == "submission_1001" and by_student["111"]["total"] == "100.00"
    assert "also submission_1004 (0.00)" in by_student["111"]["notes"]
    assert by_student["222"]["total"] == "0.00" and by_student["222"]["late"] == "yes" and by_student["111"]["late"] == "no"
    assert 0 < float(by_student["333"]["total"]) < 100 and by_student["333"]["total"] == by_student["444"]["total"]
    assert by_student["444"]["name"] == "José Núñez"
    assert by_student["555"]["flags"] == "ungradable zero" and "import-error" in by_student["666"]["flags"]
    header = list(rows[0])
    assert all(h.isascii() and len(h) <= 20 for h in header), header
    function_columns = header[header.index("total") + 1 : header.index("flags")]
    assert "softmax" in function_columns and "sdpa" in function_columns
    assert abs(sum(float(by_student["333"][c]) for c in function_columns) - float(by_student["333"]["total"])) < 0.01
    legend = {r["column"]: r for r in _csv(out / "gradebook_legend.csv")}
    assert set(function_columns) <= set(legend) and legend["sdpa"]["full_name"].startswith("scaled_dot_product_attention")
    assert abs(sum(float(legend[c]["max_points"]) for c in function_columns) - 100) < 0.01
    canvas = _csv(out / "canvas.csv")
    assert [r["SIS User ID"] for r in canvas] == [r["student_id"] for r in rows]

    report = (out / "report.html").read_text()
    attention = report[report.index('<section id="attention">') : report.index("</section>")]
    for sid in ("submission_1002", "submission_1005", "submission_1006"):
        assert f'data-sid="{sid}"' in attention, sid
    assert 'data-sid="submission_1004"' not in attention, "a superseded upload needs no follow-up"
    assert "attn_final.py" in attention and "SyntaxError" in attention
    doc = json.loads((out / "results" / "submission_1003.json").read_text())
    named = {m for t in doc["tests"] for m in t["extra_data"]["mistakes"]}
    assert mistake.name in named
    row = report[report.index(f'<tr data-mistake="{mistake.name}">') :].split("</tr>")[0]
    assert mistake_title(assignment, mistake.name) in row and "<td class=num>2</td>" in row, "two students in the group"

    # A regrade after a change to the tests: compared with an earlier grading (here, the same
    # results with one test's points edited), nothing regraded.
    before = tmp_path / "before"
    shutil.copytree(out / "results", before / "results")
    earlier = json.loads((before / "results" / "submission_1001.json").read_text())
    earlier["tests"][0]["score"] -= 1
    earlier["score"] -= 1
    (before / "results" / "submission_1001.json").write_text(json.dumps(earlier))
    due = ("--due", "2026-11-02T00:00:00-08:00")
    again = run_cli("grade-all", "attention", str(export), "--out", str(out), *due, "--compare", str(before))
    assert again.returncode == 0 and "6 submission(s) already graded" in again.stdout, again.stderr[-2000:]
    assert "1 student's grade changed (1 up, 0 down) in 1 submission" in again.stdout
    (change,) = _csv(out / "regrade_diff.csv")
    assert change["submission"] == "submission_1001" and change["change"] == "+1.00" and change["tests_changed"] == "1"
    assert earlier["tests"][0]["name"] in change["tests"]
    assert "Regrade diff (1 student changed)" in (out / "report.html").read_text()
    assert _csv(out / "gradebook.csv") == rows, "regrading must be deterministic"


def test_bad_folders_get_clear_messages(tmp_path):
    (tmp_path / "empty").mkdir()
    proc = run_cli("grade-all", "attention", str(tmp_path / "empty"), "--out", str(tmp_path / "o1"))
    assert proc.returncode == 2 and "empty" in proc.stderr
    other = tmp_path / "other"
    other.mkdir()
    (other / "alice").mkdir()
    (other / "alice" / "report.txt").write_text("hello")
    proc = run_cli("grade-all", "attention", str(other), "--out", str(tmp_path / "o2"))
    assert proc.returncode == 2 and "another assignment" in proc.stderr
    proc = run_cli("grade-all", "nosuch", str(other), "--out", str(tmp_path / "o3"))
    assert proc.returncode == 2 and "unknown assignment" in proc.stderr


def test_an_export_unzipped_one_level_down_is_found_and_a_class_of_one_nameless_submission_warned(tmp_path):
    """Issue 48: `grade-all attention <folder>` with the export in folder/<export>/ graded the export's folder as
    one plain submission: "1 submission, mean 100", a one-row canvas.csv with blank names, exit 0."""
    holder = tmp_path / "downloads"
    holder.mkdir()
    export = _export(holder / "assignment_123_export", {"submission_1001": ("attention.py", reference_source("attention"))})
    meta = export / "submission_metadata.yml"
    meta.write_text(METADATA[: METADATA.index("submission_1002:")])  # Ada's submission alone
    (holder / "assignment_123_export.zip").write_bytes(b"the zip it came from")
    proc = run_cli("grade-all", "attention", str(holder), "--out", str(tmp_path / "out"), "--jobs", "1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"note: {holder} holds a Gradescope export one level down: grading {export}" in proc.stderr
    assert "not graded beside it: assignment_123_export.zip" in proc.stderr and "makes a class of one" not in proc.stderr
    (row,) = _csv(tmp_path / "out" / "canvas.csv")
    assert row["Student"] == "Ada Lovelace" and row["SIS User ID"] == "111", row
    assert [p.name for p in (tmp_path / "out" / "results").glob("*.json")] == ["submission_1001.json"]

    # several exports inside: which one is for the instructor to say
    shutil.copytree(export, holder / "assignment_456_export")
    proc = run_cli("grade-all", "attention", str(holder), "--out", str(tmp_path / "out2"))
    assert proc.returncode == 2 and "holds 2 Gradescope exports, one level down" in proc.stderr
    assert str(export) in proc.stderr and str(holder / "assignment_456_export") in proc.stderr
    assert not (tmp_path / "out2" / "results").exists()

    # one submission and no student's name (a student's folder passed as the class): graded, and warned
    alone = tmp_path / "alone"
    (alone / "submission_1001").mkdir(parents=True)
    (alone / "submission_1001" / "attention.py").write_text("\n")  # empty: ungradable, and quick
    proc = run_cli("grade-all", "attention", str(alone), "--out", str(tmp_path / "out3"), "--jobs", "1")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"warning: {alone} makes a class of one submission (submission_1001) with no student's name" in proc.stderr


def test_grade_many_forks_every_worker_from_one_template(tmp_path):
    """Batch grading imports torch once: each submission's fresh worker is forked from the template."""
    jobs = []
    for i, source in enumerate((reference_source("attention"), stub_source("attention"), reference_source("attention"))):
        upload = tmp_path / f"upload{i}"
        upload.mkdir()
        (upload / "attention.py").write_text(source)
        jobs.append([str(upload), str(tmp_path / f"results{i}.json")])
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    proc = run_cli("grade-many", "attention", str(tmp_path / "jobs.json"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "3 of 3 workers forked from the template" in proc.stderr
    scores = [json.loads((tmp_path / f"results{i}.json").read_text())["score"] for i in range(3)]
    assert scores == [100, 0, 100]


TERM_METADATA = """\
submission_2001:
  :submitters:
  - :name: Ada Lovelace
    :sid: '111'
    :email: ada@example.edu
  :created_at: 2027-02-22 10:00:00.000000000 +00:00
submission_2002:
  :submitters:
  - :name: Alan Turing
    :sid: '222'
    :email: alan@example.edu
  :created_at: 2027-02-23 00:10:00.000000000 +00:00
submission_2003:
  :submitters:
  - :name: Grace Hopper
    :sid: '333'
    :email: grace@example.edu
  - :name: José Núñez
    :sid: '444'
    :email: jose@example.edu
  :created_at: 2027-02-22 09:00:00.000000000 +00:00
submission_2004:
  :submitters:
  - :name: Barbara Liskov
    :sid: '555'
    :email: barbara@example.edu
  :created_at: 2027-02-24 12:00:00.000000000 +00:00
submission_2005:
  :submitters:
  - :name: Edsger Dijkstra
    :sid: '666'
    :email: edsger@example.edu
  :created_at: 2027-02-25 12:00:00.000000000 +00:00
"""

TERM_COURSE = """\
title = "A term"
timezone = "UTC"

[[assignment]]
name = "attention"
release = 2027-02-15
due = 2027-02-22

[similarity]
threshold = 0.5
top = 3

[late]
grace_minutes = 15
per_day = "10%"
late_days = 1
ledger = "ledger.csv"

[extensions.attention]
"EDSGER@example.edu" = 2027-02-26
"""


@pytest.mark.proof  # a whole grade-all run: `make proofs`, keeping `make test` within its four minutes
def test_similar_pairs_the_late_policy_and_feedback_pages(tmp_path):
    """Five submissions, one (Barbara's) a renamed, reordered copy of another (Ada's) among distinct
    ones: grade-all ranks that pair first; the term's rules of a --course file set each total."""
    from test_similarity import renamed_copy, student_file

    assignment = load_assignment("attention", KIT)
    entries = {e.name: e for e in read_catalogue(assignment, "variant") + read_catalogue(assignment, "corpus")}
    ada = student_file(assignment, entries["einops"].code)
    export = tmp_path / "export"
    export.mkdir()
    (export / "submission_metadata.yml").write_text(TERM_METADATA)
    sources = {
        "submission_2001": ada,
        "submission_2002": student_file(assignment, entries["loops"].code),
        "submission_2003": student_file(assignment, entries["cs336_rearrange"].code),
        "submission_2004": renamed_copy(ada, seed=11),
        "submission_2005": student_file(assignment, entries["annotated_transformer"].code),
    }
    for sid, source in sources.items():
        (export / sid).mkdir()
        (export / sid / "attention.py").write_text(source)
    (tmp_path / "course.toml").write_text(TERM_COURSE)
    out = tmp_path / "grading" / "attention"
    proc = run_cli(
        "grade-all", "attention", str(export), "--out", str(out), "--course", str(tmp_path / "course.toml"), "--jobs", "2"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "late policy: 10 % off per day late; 1 late day per student for the term; 15 minutes' grace" in proc.stdout

    pairs = _check_similar_pairs(out)
    report = (out / "report.html").read_text()
    rows = {r["student_id"]: r for r in _csv(out / "gradebook.csv")}
    assert all(float(r["raw_total"]) == 100 for r in rows.values()), "every file here is correct"
    barbara, alan, edsger = rows["555"], rows["222"], rows["666"]
    assert barbara["late"] == "yes" and barbara["late_days_used"] == "1" and barbara["penalty"] == "10.00"
    assert barbara["total"] == "90.00" and barbara["late_rule"] == "2 days late: 1 late day used, 10 % off the rest"
    assert alan["late"] == "no" and alan["late_rule"] == "on time: within the grace period" and alan["total"] == "100.00"
    assert edsger["late"] == "no" and edsger["late_rule"] == "on time (extension to 2027-02-26 23:59 UTC)"
    assert "canvas.csv" in proc.stdout and "moodle.csv" in proc.stdout
    canvas = {r["SIS User ID"]: r for r in _csv(out / "canvas.csv")}
    moodle = {r["ID number"]: r for r in _csv(out / "moodle.csv")}
    assert canvas["555"][assignment.title] == moodle["555"][assignment.title] == "90.00"
    assert list(moodle["555"]) == ["Full name", "ID number", "Email address", assignment.title]
    ledger = _csv(tmp_path / "grading" / "ledger.csv")
    assert ledger == [{"student": "555", "assignment": "attention", "late_days_used": "1", "submission": "submission_2004"}]
    mean = sum(float(r["total"]) for r in rows.values()) / len(rows)
    assert f"mean {mean:.1f} over 6 students" in proc.stdout.splitlines()[-1] and f"mean {mean:.1f}" in report

    assert all(f'href="students/{sid}.html"' in report for sid in sources), "each submission links to its page"
    feedback = (out / "students" / "submission_2004.html").read_text()
    assert "Autograder results, as the student sees them on Gradescope" in feedback and "100.00 / 100.00" in feedback
    assert (
        "Grade in the gradebooks and the LMS: <b>90.00</b> / 100.00, after the late policy; raw score 100.00 "
        "(2 days late: 1 late day used, 10 % off the rest)"
    ) in feedback
    row = report[report.index('<tr id="s-submission_2004"') :].split("</tr>")[0]
    assert '<td class=num data-sort="90.00"><b>90.00</b><div class="muted small raw">raw 100.00</div></td>' in row
    document = json.loads((out / "results" / "submission_2004.json").read_text())
    assert all(html.escape(t["name"]) in feedback for t in document["tests"])

    again = run_cli("grade-all", "attention", str(export), "--out", str(out), "--course", str(tmp_path / "course.toml"))
    assert again.returncode == 0 and _csv(tmp_path / "grading" / "ledger.csv") == ledger, "a regrade spends no day twice"
    assert _csv(out / "gradebook.csv") == list(rows.values()) and _csv(out / "similarity.csv") == pairs
    _in_the_browser(out, pairs[0]["page"], tmp_path)


def _check_similar_pairs(out) -> list[dict]:
    """The copy (Barbara's of Ada's) is the most similar pair, with its page and the dashboard's section."""
    pairs = _csv(out / "similarity.csv")
    assert {pairs[0]["submission_a"], pairs[0]["submission_b"]} == {"submission_2001", "submission_2004"}, pairs
    assert float(pairs[0]["score"]) >= 0.5 and pairs[0]["page"].startswith("similarity/")
    page = (out / pairs[0]["page"]).read_text()
    assert "<mark>" in page and "Ada Lovelace" in page and "Barbara Liskov" in page
    report = (out / "report.html").read_text()
    section = report[report.index('<section id="similarity">') :].split("</section>")[0]
    assert "never a flag: it changes no grade" in section and pairs[0]["page"] in section
    return pairs


def _in_the_browser(out, pair_page, tmp_path):
    """The dashboard as Chromium renders it at 1280 px: the script runs with the new column, the
    similar pairs and the late rules are there, nothing overflows; the linked pages render."""
    import re

    import pytest
    from test_dashboard import CHROMIUM, WIDTH, _chromium

    if CHROMIUM is None:
        pytest.skip("Chromium is not installed: `apt-get install chromium` (.ci/run installs it)")
    dom = _chromium("--dump-dom", f"{(out / 'report.html').as_uri()}#q=liskov&sort=late-asc", tmp_path=tmp_path).stdout
    assert 'data-ready="yes"' in dom
    shown = [sid for sid, attrs in re.findall(r'<tr id="s-([\w-]+)"([^>]*)>', dom) if "hidden" not in attrs]
    assert shown == ["submission_2004"], shown
    assert re.search(r'<section id="similarity">.*Ada Lovelace.*Barbara Liskov.*side by side', dom, re.S)
    assert "10 % off the rest" in dom
    for page in (pair_page, "students/submission_2004.html"):
        rendered = _chromium("--dump-dom", (out / page).as_uri(), tmp_path=tmp_path).stdout
        assert "Barbara Liskov" in rendered and "report.html" in rendered, page
    from PIL import Image

    shot = tmp_path / "dashboard.png"
    _chromium(f"--window-size={WIDTH},1600", f"--screenshot={shot}", (out / "report.html").as_uri(), tmp_path=tmp_path)
    image = Image.open(shot).convert("RGB")
    assert {image.getpixel((WIDTH - 3, y)) for y in range(0, 1600, 4)} == {(255, 255, 255)}, "nothing wider than 1280 px"


@pytest.mark.proof  # a whole grade-all run: `make proofs`, keeping `make test` within its four minutes
def test_a_killed_grading_leaves_nothing_in_the_results_folder(tmp_path):
    """A grading killed with SIGKILL leaves its 2 MB reserve and an unfinished placeholder; the next
    grade-all removes the reserve and grades that submission again instead of keeping the placeholder."""
    import os
    import signal
    import subprocess
    import sys
    import time

    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "ada.py").write_text(reference_source("attention"))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "autograder", "grade-all", "attention", str(folder), "--out", str(out), "--jobs", "1"]
    proc = subprocess.Popen(command, cwd=KIT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not list((out / "results").glob(".reserve-*")) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    left = sorted(p.name for p in (out / "results").iterdir())
    assert any(n.startswith(".reserve-") for n in left) and "ada.json" in left, left
    assert json.loads((out / "results" / "ada.json").read_text())["extra_data"]["kind"] == "unfinished"

    again = run_cli("grade-all", "attention", str(folder), "--out", str(out))
    assert again.returncode == 0, again.stderr[-2000:]
    assert "removed 1 file(s) a killed grading left" in again.stderr and "left unfinished: graded again" in again.stdout
    assert sorted(p.name for p in (out / "results").iterdir()) == ["ada.json"]
    assert json.loads((out / "results" / "ada.json").read_text())["score"] == 100


def test_stale_files_of_dead_graders_are_removed_and_a_running_graders_kept(tmp_path):
    """What a killed grading leaves goes (its reserve, a half-written result); a reserve named after a
    grader process that still runs stays (a process id reused by a stranger does not count)."""
    import subprocess
    import sys
    import time
    from pathlib import Path as _Path

    from autograder.cohort.batch import clean_stale

    grader = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "autograder"])
    try:
        for _ in range(500):  # until the child has exec'd (before that, /proc shows the parent's command line)
            if b"autograder" in _Path(f"/proc/{grader.pid}/cmdline").read_bytes():
                break
            time.sleep(0.01)
        running = f".reserve-{grader.pid}-z"
        for name in [".reserve-k2j4x9ab", ".reserve-999999999-q1", ".results-a1b2.json", "ada.json", ".other", running]:
            (tmp_path / name).write_bytes(b"\0")
        assert clean_stale(tmp_path) == [".reserve-999999999-q1", ".reserve-k2j4x9ab", ".results-a1b2.json"]
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".other", "ada.json", running])
    finally:
        grader.kill()
        grader.wait()


def test_relative_paths_from_another_folder(tmp_path):
    """The red team's (2026-12-05): `grade-all attention export --out out` run from outside the checkout graded
    every submission 0 ("nothing was uploaded") and wrote the results into the checkout, with exit 0: the grader
    processes run in the checkout and were handed paths relative to the caller's folder."""
    import subprocess
    import sys

    (tmp_path / "export" / "alice").mkdir(parents=True)
    (tmp_path / "export" / "alice" / "attention.py").write_text(reference_source("attention"))
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "--kit-root", str(KIT), "grade-all", "attention", "export", "--out", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert json.loads((tmp_path / "out" / "results" / "alice.json").read_text())["score"] == 100
    assert not (KIT / "out").exists()
