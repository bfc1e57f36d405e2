"""A release that fails keeps the last good dist/<a>/ and ends with one summary of what failed and why.

Each assignment is built and self-checked beside dist/<a>/ (dist/.building/) and swapped in only when proven; the
cheap checks (points, the catalogue's declarations) refuse in a second, before anything is built."""

from __future__ import annotations

import re
import shutil
import time

from conftest import KIT

from autograder.config import load_assignment
from autograder.release import build, selfcheck
from autograder.release.build import _summary
from autograder.release.build import main as release_main
from autograder.release.dist_folder import BUILDING
from autograder.release.proofs import Report


def _files(folder) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_failed_assignment_keeps_its_last_release_and_is_summarised(tmp_path, capsys):
    kept = tmp_path / "nosuch"
    kept.mkdir()
    (kept / "student.zip").write_bytes(b"old")
    status = release_main(["nosuch"], check=False, out=tmp_path)
    assert status == 1
    assert (kept / "student.zip").read_bytes() == b"old", "a refused assignment keeps its last good release"
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith("  - nosuch: cannot build: unknown assignment")
    assert f"{kept}/ is unchanged: it keeps the last good release" in err


def test_the_summary_names_what_failed_and_what_was_built(tmp_path):
    text = _summary(["attention", "multihead"], {"multihead": "self-check failed: stub scores 3"}, tmp_path)
    assert "FAILED for 1 of 2" in text and "multihead: self-check failed: stub scores 3" in text
    assert "keeps its last good release" in text and "built and self-checked: attention" in text
    assert _summary(["attention"], {}, tmp_path).startswith("release: 1 assignment(s) built")
    points = _summary(["attention"], {"attention": "self-check failed: the points of all tests ... (got 101)"}, tmp_path)
    assert "(check it in a second: `python -m autograder points attention`)" in points


def test_a_refused_self_check_keeps_the_last_good_release(tmp_path, monkeypatch, capsys):
    """The self-check runs on the build in dist/.building/, never on dist/<a>/; a refusal leaves dist/<a>/ byte for
    byte as the last good release made it, and a proven build replaces it whole."""
    out, course = tmp_path / "dist", tmp_path / "course.toml"
    shutil.copyfile(KIT / "course.toml", course)  # another course file: student_template/ and the docs are left alone
    target = out / "attention"
    verdict = {"ok": True, "run": 0}

    def fake_self_check(assignment, staged, cache, entry, jobs):
        verdict["run"] += 1
        assert staged.parent == out / BUILDING and (staged / "student.zip").is_file() and (staged / "autograder.zip").is_file()
        if target.exists():
            assert _files(target) == last, "dist/<a>/ is not touched while the build is proven"
        report = Report(assignment.name)
        report.check(verdict["ok"], f"run {verdict['run']}: the points of all tests add up to exactly 100 (got 101)")
        return report

    monkeypatch.setattr(selfcheck, "self_check", fake_self_check)
    last: dict[str, bytes] = {}
    assert release_main(["attention"], out=out, course_file=course) == 0
    last = _files(target)
    assert "student.zip" in last and "run 1:" in last["selfcheck.txt"].decode()

    verdict["ok"] = False
    assert release_main(["attention"], out=out, course_file=course) == 1
    assert _files(target) == last, "a refused release keeps the last good dist/<a>/"
    assert not (out / BUILDING).exists(), "the refused build is removed"
    err = capsys.readouterr().err
    assert f"[attention] self-check FAILED: {target}/ is unchanged: it keeps the last good release (built " in err
    assert "(check it in a second: `python -m autograder points attention`)" in err.strip().splitlines()[-1]

    verdict["ok"] = True
    assert release_main(["attention"], out=out, course_file=course) == 0
    now = _files(target)
    assert "run 3:" in now["selfcheck.txt"].decode() and now["student.zip"] == last["student.zip"]
    assert sorted(p.name for p in out.iterdir()) == ["attention", "course.md"]


def test_points_that_do_not_add_up_are_refused_in_a_second_before_anything_is_built(tmp_path, monkeypatch, capsys):
    root, out, course = tmp_path / "kit", tmp_path / "dist", tmp_path / "course.toml"
    shutil.copyfile(KIT / "course.toml", course)  # another course file: student_template/ and the docs are left alone
    shutil.copytree(KIT / "assignments" / "attention", root / "assignments" / "attention")
    shutil.copytree(KIT / "solutions" / "attention", root / "solutions" / "attention")
    toml = root / "assignments" / "attention" / "assignment.toml"
    text = toml.read_text()
    first = re.search(r'^"public/[^"]+" = (\d+)$', text, re.M)
    toml.write_text(text[: first.start(1)] + str(int(first.group(1)) + 1) + text[first.end(1) :])  # 101 points
    (out / "attention").mkdir(parents=True)
    (out / "attention" / "student.zip").write_bytes(b"the last good release")

    def never(*args, **kwargs):
        raise AssertionError("nothing is built for an assignment whose points do not add up")

    monkeypatch.setattr(build, "load_assignment", lambda name: load_assignment(name, root))
    monkeypatch.setattr(build, "build_zips", never)
    started = time.monotonic()
    assert release_main(["attention"], out=out, course_file=course) == 1
    seconds = time.monotonic() - started
    assert seconds < 5, f"the points check took {seconds:.1f} s"
    assert (out / "attention" / "student.zip").read_bytes() == b"the last good release"
    err = capsys.readouterr().err
    first_line = err.splitlines()[0]
    assert first_line.startswith("[attention] refused before building: ") and "points add up to 101, not 100" in first_line
    assert "(check it in a second: `python -m autograder points attention`)" in first_line
    assert f"{out / 'attention'}/ is unchanged: it keeps the last good release" in first_line
