"""Self-check advice that names the cause (autograder/release/caught_by.py): a mistake failing tests outside its
CAUGHT_BY, or losing more points than its declared tests, is said, with the CAUGHT_BY that matches; a mistake
"not named" because it passes a declared test is told so; a PATCH error names the entry and its file."""

from __future__ import annotations

import shutil

import pytest
from conftest import KIT
from test_selfcheck import ASSIGNMENT, _perfect, _test

from autograder.catalogue import read_catalogue, submission_source
from autograder.config import ConfigError, load_assignment
from autograder.release import caught_by, selfcheck

KEYS = list(ASSIGNMENT.points)
MISTAKE = read_catalogue(ASSIGNMENT, "mistake")[0]
OUTSIDE = next(k for k in KEYS if k not in MISTAKE.caught_by and k.startswith("hidden/"))


def _graded(lose: list[str]) -> dict:
    return {"score": 100 - sum(ASSIGNMENT.points[k] for k in lose), "tests": [_test(k, 0, ASSIGNMENT.points[k]) for k in lose]}


def test_a_mistake_failing_tests_outside_its_caught_by_is_said_with_the_list_that_matches():
    line = caught_by.advice(ASSIGNMENT, MISTAKE, _graded([*MISTAKE.caught_by, OUTSIDE]))
    assert f"mistake {MISTAKE.name} (assignments/embeddings/mistakes/{MISTAKE.name}.py)" in line
    assert f"outside its CAUGHT_BY: [{OUTSIDE!r}]" in line
    declared = sum(ASSIGNMENT.points[k] for k in MISTAKE.caught_by)
    assert f"loses {declared + ASSIGNMENT.points[OUTSIDE]:g} points, not the {declared:g} of its declared tests" in line
    matching = [k for k in KEYS if k in {*MISTAKE.caught_by, OUTSIDE}]
    assert line.endswith(f"CAUGHT_BY = {matching!r} matches what it fails")
    assert caught_by.advice(ASSIGNMENT, MISTAKE, _graded(list(MISTAKE.caught_by))) == "", "a true declaration: no advice"
    assert caught_by.advice(ASSIGNMENT, MISTAKE, dict(_graded([OUTSIDE]), _exit_code=1)) == "", "a broken grading says nothing"


def test_a_declared_test_it_passes_is_named_as_the_cause():
    over = MISTAKE.caught_by[0]
    line = caught_by.advice(ASSIGNMENT, MISTAKE, _graded([k for k in MISTAKE.caught_by if k != over] or [OUTSIDE]))
    assert f"CAUGHT_BY names [{over!r}], which it passes" in line and "CAUGHT_BY = [" in line


@pytest.fixture
def self_check(monkeypatch, tmp_path):
    """The self-check on crafted gradings: ``declared`` for the release's (CAUGHT_BY tests only), ``whole`` for a
    mistake graded on every test (None: not in the cache). Returns (report, the labels graded on the whole suite)."""

    def run(declared, whole, whole_cached=False):
        graded_whole: list[str] = []

        def fake_grade(assignment, sources, only=None, cached_only=False, **kwargs):
            docs = _perfect(sources)
            if only is None and all(label.startswith("mistake:") for label in sources):  # whole-suite gradings
                if cached_only and not whole_cached:
                    return {}
                graded_whole.extend([] if cached_only else sources)
                return {label: whole(label, docs[label]) for label in sources}
            declared(docs)
            return docs

        monkeypatch.setattr(selfcheck, "grade_sources", fake_grade)
        monkeypatch.setattr(selfcheck, "_check_zips", lambda *a, **k: {"score": 100, "_exit_code": 0, "tests": []})
        return selfcheck.self_check(ASSIGNMENT, tmp_path, cache=tmp_path / "cache"), graded_whole

    return run


def test_the_release_says_what_a_mistake_really_loses_when_it_is_known(self_check):
    label = f"mistake:{MISTAKE.name}"

    def whole(this, doc):
        if this == label:
            doc = dict(doc, tests=doc["tests"] + [_test(OUTSIDE, 0, ASSIGNMENT.points[OUTSIDE])])
        return doc

    report, graded = self_check(lambda docs: None, whole, whole_cached=True)
    assert report.ok, "advice never refuses a release"
    assert not graded, "a sound catalogue grades nothing more"
    advice = [line for line in report.lines if "[advice]" in line]
    assert len(advice) == 1 and f"mistake {MISTAKE.name}" in advice[0], report.text()
    assert f"outside its CAUGHT_BY, in {OUTSIDE.split('::')[1]} (" in advice[0] and f"caught-by {ASSIGNMENT.name}`" in advice[0]
    report, _ = self_check(lambda docs: None, whole)
    assert any(f"caught-by {ASSIGNMENT.name}` grades them on every test" in line for line in report.lines), report.text()


def test_not_named_because_of_an_over_claim_says_so_and_grades_that_mistake_on_every_test(self_check):
    label = f"mistake:{MISTAKE.name}"
    over = MISTAKE.caught_by[-1]

    def declared(docs):  # it passes one declared test, and the diagnosis then names it nowhere
        docs[label]["tests"] = [
            dict(t, score=t["max_score"]) if t["extra_data"]["test"] == over else t for t in docs[label]["tests"]
        ]
        for t in docs[label]["tests"]:
            t["extra_data"]["mistakes"] = []

    def whole(this, doc):
        return {**doc, "tests": [t for t in doc["tests"] if t["extra_data"]["test"] != over]} if this == label else doc

    report, graded = self_check(declared, whole)
    assert not report.ok
    named = next(p for p in report.problems if "is named in the feedback" in p)
    assert f"its CAUGHT_BY names [{over!r}], which it passes" in named and "`got=`" not in named, named
    assert graded == [label], "only the suspect is graded on the whole suite"
    assert any("[advice]" in line and f"CAUGHT_BY names [{over!r}], which it passes" in line for line in report.lines)


def test_a_patch_that_matches_nothing_names_the_entry_and_its_file(tmp_path):
    root = tmp_path / "kit"
    shutil.copytree(KIT / "assignments" / "attention", root / "assignments" / "attention")
    shutil.copytree(KIT / "solutions" / "attention", root / "solutions" / "attention")
    shutil.copyfile(KIT / "course.toml", root / "course.toml")
    assignment = load_assignment("attention", root)
    mistake = root / "assignments" / "attention" / "mistakes" / "broken_patch.py"
    mistake.write_text('"""A broken patch."""\nCAUGHT_BY = []\nPATCH = [("no such line of the reference\\n", "")]\n')
    entry = next(e for e in read_catalogue(assignment, "mistake") if e.name == "broken_patch")
    with pytest.raises(ConfigError, match=rf"^mistake broken_patch \({mistake}\): .* must match exactly one place"):
        submission_source(assignment, entry)
    variant = root / "assignments" / "attention" / "variants" / "broken_variant.py"
    variant.write_text('"""A broken variant."""\nPATCH = [("no such line either\\n", "")]\n')
    entry = next(e for e in read_catalogue(assignment, "variant") if e.name == "broken_variant")
    with pytest.raises(ConfigError, match=rf"^variant broken_variant \({variant}\)"):
        submission_source(assignment, entry)
    mistake.write_text('"""A malformed patch."""\nPATCH = [("one string only",)]\n')
    with pytest.raises(ConfigError, match=rf"^mistake broken_patch \({mistake}\): PATCH must be"):
        read_catalogue(assignment, "mistake")
