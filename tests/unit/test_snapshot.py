"""The whole-catalogue snapshot records every case of a parametrized test (a change in any case shows)."""

from __future__ import annotations

from autograder.release import snapshot


def _case(key: str, score: float, kind: str, mistakes: list[str]) -> dict:
    return {"name": key, "score": score, "extra_data": {"test": key, "kind": kind, "mistakes": mistakes}}


def _take(monkeypatch, tests: list[dict]) -> dict:
    monkeypatch.setattr(snapshot, "catalogue_sources", lambda assignment: ({}, {}, None))
    monkeypatch.setattr(snapshot, "grade_sources", lambda *a, **k: {"mistake:m": {"score": 1.0, "tests": tests}})
    return snapshot.take(object())


def test_each_case_of_a_parametrized_test_is_kept_and_a_change_in_an_early_case_shows(monkeypatch):
    before = _take(
        monkeypatch,
        [_case("t.py::a", 0.0, "wrong", ["m"]), _case("t.py::a", 0.0, "wrong", []), _case("t.py::b", 2.0, "passed", [])],
    )
    assert list(before["mistake:m"]["tests"]) == ["t.py::a#1", "t.py::a#2", "t.py::b"]
    after = _take(
        monkeypatch,
        [_case("t.py::a", 1.0, "passed", []), _case("t.py::a", 0.0, "wrong", []), _case("t.py::b", 2.0, "passed", [])],
    )
    points, names = snapshot.changes(before, after)
    assert points == ["mistake:m t.py::a#1: 0.0 -> 1.0"] and names == []
    renamed = _take(
        monkeypatch,
        [_case("t.py::a", 0.0, "wrong", ["m"]), _case("t.py::a", 0.0, "wrong", ["n"]), _case("t.py::b", 2.0, "passed", [])],
    )
    assert snapshot.changes(before, renamed) == ([], ["mistake:m t.py::a#2: kind wrong -> wrong, named [] -> ['n']"])
