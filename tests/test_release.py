"""The release is generated, in sync and reproducible."""

import datetime as dt
import os
import re
import subprocess
import sys
import zipfile

import pytest
from conftest import KIT, load_assignment, run_cli

from autograder.config import list_assignments
from autograder.release.student_folder import student_files
from autograder.release.zips import autograder_files, build_zips


def test_student_template_is_in_sync_with_the_sources(assignment_name):
    """student_template/ is committed; regenerating it must change nothing (run `make release`)."""
    assignment = load_assignment(assignment_name, KIT)
    folder = KIT / "student_template" / assignment_name
    expected = student_files(assignment)
    on_disk = {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    stale = sorted(set(expected) ^ set(on_disk)) + sorted(k for k in expected if k in on_disk and expected[k] != on_disk[k])
    assert not stale, f"student_template/{assignment_name} is stale ({stale}); run `make release`"


_BUILD = """
import hashlib, sys
sys.path.insert(0, {kit!r})
from autograder.config import load_assignment
from autograder.release.build import build_zips
for name, data in sorted(build_zips(load_assignment({name!r})).items()):
    print(name, hashlib.sha256(data).hexdigest())
"""


def test_zips_are_byte_identical_across_builds(assignment_name):
    """Two builds in two fresh processes (different hash seeds, times, temporary names) agree."""
    digests = set()
    for hash_seed in ("1", "2"):
        proc = subprocess.run(
            [sys.executable, "-c", _BUILD.format(kit=str(KIT), name=assignment_name)],
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        digests.add(proc.stdout)
    assert len(digests) == 1, f"two builds of {assignment_name} differ:\n" + "\n".join(digests)


def test_autograder_zip_has_the_contract_files_at_its_root(assignment_name):
    files = autograder_files(load_assignment(assignment_name, KIT))
    for name in ("setup.sh", "run_autograder", "requirements.txt"):
        assert name in files
    requirements = files["requirements.txt"].decode()
    for line in requirements.splitlines():
        if line and not line.startswith("#"):
            assert "==" in line, f"unpinned requirement {line!r}"
    setup = files["setup.sh"].decode()
    assert "TORCH_INDEX_URL=" in setup and "torch==$TORCH_VERSION" in setup


def test_student_zip_has_no_hidden_tests_or_solutions(assignment_name, tmp_path):
    assignment = load_assignment(assignment_name, KIT)
    with zipfile.ZipFile(__import__("io").BytesIO(build_zips(assignment)["student.zip"])) as zf:
        names = zf.namelist()
    assert not [n for n in names if "hidden" in n or "mistakes" in n or "solutions" in n]
    assert f"{assignment_name}/{assignment.submit_file}" in names
    assert f"{assignment_name}/README.md" in names


def test_release_cli_writes_dist_and_leaves_the_catalogue_table_alone(tmp_path):
    """`python -m autograder release <a> --out D`: the zips in D/<a>/ and the course page; a partial
    release does not rewrite the mutation table of docs/measurements/catalogue.md (that needs every assignment).

    `--no-check` here: the self-check itself (every assignment's catalogue graded for real, the
    notebook, another seed, the simulated Gradescope run) is what `make release` runs, and CI runs
    it on a fresh clone before `make test`; its refusals are tested on crafted gradings in
    test_selfcheck.py."""
    page = KIT / "docs" / "measurements" / "catalogue.md"
    table = page.read_text()
    proc = run_cli("release", "embeddings", "--no-check", "--out", str(tmp_path / "dist"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "[embeddings] wrote" in proc.stdout
    assert "cross-assignment check: no student.zip of embeddings answers another assignment" in proc.stdout
    assert "`embeddings`" in (tmp_path / "dist" / "course.md").read_text()
    written = sorted(p.name for p in (tmp_path / "dist" / "embeddings").iterdir())
    assert {"student.zip", "autograder.zip"} <= set(written)
    assert page.read_text() == table

    bad = run_cli("release", "no_such_assignment", "--out", str(tmp_path / "dist"))
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "no_such_assignment" in bad.stderr


def test_the_transformer_zips_attention_class_is_not_the_multihead_answer(tmp_path):
    """course.toml's not_answers claim, proved: the provided class as a multihead submission
    loses every MultiHeadAttention point (it is torch's nn.MultiheadAttention, banned there)."""
    import ast

    from autograder.grading.grade import grade_submission

    def class_lines(source: str) -> tuple[int, int, list[str]]:
        node = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "MultiHeadAttention")
        return node.lineno, node.end_lineno, source.splitlines()[node.lineno - 1 : node.end_lineno]

    multihead = load_assignment("multihead", KIT)
    provided = student_files(load_assignment("transformer", KIT))["transformer.py"].decode()
    lines = multihead.solution.read_text().splitlines()
    start, end, _ = class_lines("\n".join(lines))
    lines[start - 1 : end] = class_lines(provided)[2]
    (tmp_path / "multihead.py").write_text("\n".join(lines) + "\n")
    only = [k for k in multihead.points if "test_mha_" in k or "test_matches_torch_small" in k]
    grade = grade_submission(multihead, tmp_path / "multihead.py", only=only)
    tests = grade.document["tests"]
    assert tests and all(t["name"].startswith("MultiHeadAttention") for t in tests)
    assert [t["name"] for t in tests if t["score"] > 0] == []


# -- every documented course.toml switch releases (issue 25) -----------------------------------
# The switches: `hints` (per assignment), `[[assignment.ships]]` (off, dated but not yet, shipped),
# the dates (`due` as a date in the course's `timezone`, or a TOML date-time) and `not_answers`
# (transformer's provided MultiHeadAttention). Hints live in the README only, so an assignment's
# hints do not interact with another's: all on or all off covers every assignment in both states.
# Built with --no-check (no grading): what the switches change is what the release builds and
# refuses before the self-check; the self-check itself is `make release`'s (CI's) proof.
NOT_YET, SHIPPED = "2027-02-28", "2027-03-01"  # multihead's due date, the table's not_before


def _course_text(hints: bool, ships: bool, datetime_due: bool) -> str:
    text = (KIT / "course.toml").read_text()
    if hints:
        text, n = re.subn(r"(?m)^(builds_on = .*)$", r"\1\nhints = true", text)
        assert n == len(list_assignments(KIT))
    if ships:
        for line in ("[[assignment.ships]]", 'from = "multihead"', 'names = ["sinusoidal_positions"]', "not_before = 2027-03-01"):
            assert f"# {line}\n" in text
            text = text.replace(f"# {line}\n", f"{line}\n")
    if datetime_due:
        text = text.replace('timezone = "UTC"', 'timezone = "America/Los_Angeles"')
        text = text.replace("due = 2027-03-15\n", "due = 2027-03-15T17:00:00-07:00\n")
    return text


def _student_zip(out, name: str) -> dict[str, str]:
    with zipfile.ZipFile(out / name / "student.zip") as zf:
        return {i.filename.split("/", 1)[1]: zf.read(i).decode("utf-8", "replace") for i in zf.infolist()}


@pytest.mark.parametrize("ships", ["off", "not yet", "shipped"])
@pytest.mark.parametrize("hints", [False, True], ids=["hints-off", "hints-on"])
def test_every_course_switch_combination_releases(tmp_path, capsys, hints, ships):
    from autograder.release.build import main as release_main
    from autograder.release.course import load_course

    course_file = tmp_path / "course.toml"
    course_file.write_text(_course_text(hints, ships != "off", datetime_due=hints))
    template = {p: p.read_bytes() for p in (KIT / "student_template").rglob("README.md")}
    as_of = {"off": None, "not yet": NOT_YET, "shipped": SHIPPED}[ships]
    status = release_main(
        list_assignments(KIT),
        check=False,
        out=tmp_path / "dist",
        as_of=dt.date.fromisoformat(as_of) if as_of else None,
        course_file=course_file,
    )
    printed = capsys.readouterr()
    assert status == 0, printed.out[-3000:] + printed.err[-3000:]
    assert "built, NOT self-checked" in printed.out and "self-checked into" not in printed.out
    course = load_course(KIT, course_file)
    for name in list_assignments(KIT):
        files = _student_zip(tmp_path / "dist", name)
        entry = course.entry(name)
        assert f"due {entry.deadline_text()}**" in files["README.md"], name
        assert ("Code-level hints" in files["README.md"]) is hints, name
    if hints:
        assert "due 2027-03-15 17:00 America/Los_Angeles" in _student_zip(tmp_path / "dist", "decoding")["README.md"]
        assert "[transformer] ships the handout's code-level hints" in printed.out
    shipped = "torch.sin(pos * freq)" in _student_zip(tmp_path / "dist", "transformer")["transformer.py"]
    assert shipped is (ships == "shipped"), "multihead's reference ships only on or after its deadline"
    schedule = (tmp_path / "dist" / "course.md").read_text()
    assert "| 5 | `transformer` |" in schedule and ("from 2027-03-01" in schedule) is (ships != "off")
    assert {p: p.read_bytes() for p in (KIT / "student_template").rglob("README.md")} == template, (
        "another course file builds dist/ only"
    )


def test_course_switches_that_make_no_sense_are_refused_with_the_reason(tmp_path, capsys):
    from autograder.config import ConfigError
    from autograder.release.build import main as release_main

    no_reason = tmp_path / "no_reason.toml"
    text = (KIT / "course.toml").read_text()
    no_reason.write_text(re.sub(r"(?m)^not_answers = .*\n", "", text))
    assert release_main(["multihead", "transformer"], check=False, out=tmp_path / "dist", course_file=no_reason) == 1
    err = capsys.readouterr().err
    assert "answer leak: transformer/transformer.py: MultiHeadAttention.__init__ holds multihead: MultiHeadAttention" in err
    assert "release refused" in err and not (tmp_path / "dist").exists()

    early = tmp_path / "early.toml"
    early.write_text(_course_text(False, True, False).replace("not_before = 2027-03-01", "not_before = 2027-02-28"))
    with pytest.raises(ConfigError, match="before multihead's deadline"):
        release_main(["transformer"], check=False, out=tmp_path / "dist", course_file=early)


def test_release_runs_from_any_folder_with_another_course_file(tmp_path):
    """What `attention-kit release` does from elsewhere (the console script is autograder.cli:main):
    the kit's assignments are found, the course file given is used, dist/ goes where --out says."""
    course_file = tmp_path / "course.toml"
    course_file.write_text(_course_text(True, False, False))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from autograder.cli import main; sys.exit(main())",
            "release",
            "transformer",
            "--no-check",
            "--out",
            "out",
            "--course",
            str(course_file),
        ],
        cwd=elsewhere,
        env={**os.environ, "PYTHONPATH": str(KIT)},  # what the editable install puts on the path
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "release: 1 assignment(s) built, NOT self-checked" in proc.stdout
    assert "Code-level hints" in _student_zip(elsewhere / "out", "transformer")["README.md"]
    script = KIT / ".venv" / "bin" / "attention-kit"
    if script.exists():  # installed by `make venv` (pip install -e .)
        help_text = subprocess.run([str(script), "release", "--help"], cwd=elsewhere, capture_output=True, text=True)
        assert help_text.returncode == 0 and "--course" in help_text.stdout
