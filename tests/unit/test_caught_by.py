"""What a mistake's CAUGHT_BY gets wrong (autograder/release/caught_by.py): a mistake failing tests outside its
CAUGHT_BY, or losing more points than its declared tests, is said, with the CAUGHT_BY that matches; a mistake
"not named" because it passes a declared test is told so; the release refuses a list its gradings contradict, and
`caught-by --write` rewrites the list in the mistake's file; a PATCH error names the entry and its file."""

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
    assert not graded, "a sound catalogue grades nothing more"
    assert len(report.problems) == 1, "a CAUGHT_BY its known grading contradicts is refused, alone"
    problem = report.problems[0]
    assert problem.startswith(f"mistake {MISTAKE.name} (assignments/embeddings/mistakes/{MISTAKE.name}.py): its CAUGHT_BY")
    assert f"misses [{OUTSIDE!r}], which it loses points in" in problem, problem
    assert problem.endswith(f"run `python -m autograder caught-by --write {ASSIGNMENT.name}`"), problem
    report, _ = self_check(lambda docs: None, whole)
    assert report.ok, "graded on its CAUGHT_BY tests only, the release cannot know, and says how to"
    assert any(f"caught-by {ASSIGNMENT.name}` grades them on every test" in line for line in report.lines), report.text()
    report, _ = self_check(lambda docs: None, lambda this, doc: doc, whole_cached=True)
    assert report.ok and any("every CAUGHT_BY is the tests its mistake fails" in line for line in report.lines)


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
    refused = next(p for p in report.problems if p.startswith(f"mistake {MISTAKE.name} (") and "): its CAUGHT_BY " in p)
    assert f"names [{over!r}], which it passes" in refused and "caught-by --write embeddings" in refused, refused


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


# -- caught-by --write -----------------------------------------------------------------------------------------
def _kit_copy(tmp_path, name: str = "attention"):
    """A temporary kit holding one assignment (its files copied), and that assignment loaded from it."""
    root = tmp_path / "kit"
    shutil.copytree(KIT / "assignments" / name, root / "assignments" / name)
    shutil.copytree(KIT / "solutions" / name, root / "solutions" / name)
    return root, load_assignment(name, root)


def test_write_rewrites_only_the_list_and_keeps_its_layout(tmp_path):
    root, assignment = _kit_copy(tmp_path)
    one_line = root / "assignments" / "attention" / "mistakes" / "causal_additive_float_mask.py"
    several = root / "assignments" / "attention" / "mistakes" / "causal_blocks_diagonal.py"
    text = one_line.read_text()  # a list on one line, as authors write a short one
    start = text.index("CAUGHT_BY = [")
    one_line.write_text(
        text[:start] + 'CAUGHT_BY = ["hidden/test_masks.py::test_causal_mask"]\n' + text[text.index("]\n", start) + 2 :]
    )
    before = {p: p.read_text() for p in (one_line, several)}
    keys = list(assignment.points)
    tests = ["hidden/test_masks.py::test_causal_mask", keys[0]]
    assert caught_by.rewrite_caught_by(one_line, tests)
    assert caught_by.rewrite_caught_by(several, tests[:1])
    assert not caught_by.rewrite_caught_by(one_line, tests), "a list already right is not written again"
    after = {p: p.read_text() for p in (one_line, several)}
    assert f'CAUGHT_BY = ["hidden/test_masks.py::test_causal_mask", "{keys[0]}"]\n' in after[one_line], "one line stays one"
    assert 'CAUGHT_BY = [\n    "hidden/test_masks.py::test_causal_mask",\n]\n' in after[several], "one test a line stays so"
    for path in (one_line, several):  # every other byte as it was
        head, tail = before[path].split("CAUGHT_BY = ", 1)
        assert after[path].startswith(head) and after[path].endswith(tail.split("]\n", 1)[1])
    entries = {e.name: e for e in read_catalogue(assignment, "mistake")}
    assert entries["causal_additive_float_mask"].caught_by == tests
    assert entries["causal_blocks_diagonal"].caught_by == tests[:1]
    long = [k for k in keys if k.startswith("hidden/")][:5]
    caught_by.rewrite_caught_by(one_line, long)  # too long for one line: one test a line
    assert one_line.read_text().count('\n    "hidden/') == 5
    assert read_catalogue(assignment, "mistake")[0].caught_by == long


def test_caught_by_write_makes_every_list_what_its_mistake_fails(tmp_path, monkeypatch, capsys):
    """`caught-by --write attention` on a copy: a list missing a test it fails and one naming a test it passes
    are rewritten (declared order kept, the new test after), a true list and the other files are not touched."""
    root, assignment = _kit_copy(tmp_path)
    keys = list(assignment.points)
    mistakes = {e.name: e for e in read_catalogue(assignment, "mistake")}
    lose = {name: list(e.caught_by) for name, e in mistakes.items()}
    extra = next(k for k in keys if k not in lose["no_scaling"])
    lose["no_scaling"].append(extra)  # fails a test its CAUGHT_BY misses
    over = lose["k_dot_T"].pop()  # passes a test its CAUGHT_BY names
    assert lose["k_dot_T"], "k_dot_T still fails a test"
    folder = root / "assignments" / "attention" / "mistakes"
    before = {p.name: p.read_text() for p in folder.glob("*.py")}

    def fake_grade(assignment, sources, **kwargs):
        return {
            label: {
                "score": 0,
                "_exit_code": 0,
                "tests": [_test(k, 0, assignment.points[k]) for k in lose[label.split(":", 1)[1]]],
            }
            for label in sources
        }

    monkeypatch.setattr("autograder.config.load_assignment", lambda name: load_assignment(name, root))
    assert caught_by.main(["attention"], grade=fake_grade) == 1, "without --write: said, not written"
    assert {p.name: p.read_text() for p in folder.glob("*.py")} == before
    assert caught_by.main(["attention"], grade=fake_grade, write=True) == 0
    out = capsys.readouterr().out
    assert f"wrote CAUGHT_BY of no_scaling ({folder / 'no_scaling.py'}): added [{extra!r}], removed []" in out, out
    assert f"wrote CAUGHT_BY of k_dot_T ({folder / 'k_dot_T.py'}): added [], removed [{over!r}]" in out, out
    assert "23 of 25 mistakes' CAUGHT_BY match the tests they fail, 2 rewritten" in out
    changed = sorted(p.name for p in folder.glob("*.py") if p.read_text() != before[p.name])
    assert changed == ["k_dot_T.py", "no_scaling.py"]
    again = {e.name: e.caught_by for e in read_catalogue(assignment, "mistake")}
    assert again["no_scaling"] == [*mistakes["no_scaling"].caught_by, extra]
    assert again["k_dot_T"] == lose["k_dot_T"]
    assert caught_by.main(["attention"], grade=fake_grade) == 0, "the lists now agree with the gradings"
