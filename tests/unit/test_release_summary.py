"""A release that fails leaves no stale zips and ends with one summary of what failed and why."""

from __future__ import annotations

from autograder.release.build import _summary
from autograder.release.build import main as release_main


def test_a_failed_assignment_loses_its_old_zips_and_is_summarised(tmp_path, capsys):
    stale = tmp_path / "nosuch"
    stale.mkdir()
    (stale / "student.zip").write_bytes(b"old")
    status = release_main(["nosuch"], check=False, out=tmp_path)
    assert status == 1
    assert not stale.exists(), "an assignment that failed must not keep an earlier release's zips"
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith("  - nosuch: cannot build: unknown assignment")


def test_the_summary_names_what_failed_and_what_was_built(tmp_path):
    text = _summary(["attention", "multihead"], {"multihead": "self-check failed: stub scores 3"}, tmp_path)
    assert "FAILED for 1 of 2" in text and "multihead: self-check failed: stub scores 3" in text
    assert "built and self-checked: attention" in text
    assert _summary(["attention"], {}, tmp_path).startswith("release: 1 assignment(s) built")
