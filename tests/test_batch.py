"""grade-all on a Gradescope export and a plain folder: results, dashboard, gradebooks, regrade diff, resume."""

import csv
import json
import shutil
import zipfile

from conftest import KIT, reference_source, run_cli, stub_source

from autograder.catalogue import read_catalogue, submission_source
from autograder.config import load_assignment
from autograder.report import mistake_title

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
            with zipfile.ZipFile(folder / sid / name, "w") as zf:
                zf.writestr("attn_final.py", source)
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
            "submission_1005": ("work.zip", reference_source("attention")),  # a zip holding only attn_final.py
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
