"""Mistake-aware feedback: a submission with two classic mistakes in different functions is told both,
in words, without hidden inputs or reference code, and the score is the same as without diagnosis."""

import json

from conftest import KIT, reference_source, run_cli, write_submission

from autograder.config import load_assignment
from autograder.selfcheck import read_catalogue


def test_two_mistakes_in_different_functions_are_both_named(tmp_path):
    assignment = load_assignment("attention", KIT)
    catalogue = {e.name: e for e in read_catalogue(assignment, "mistake")}
    first, second = catalogue["softmax_no_max"], catalogue["causal_blocks_diagonal"]
    source = reference_source("attention") + "\n\n" + first.path.read_text() + "\n\n" + second.path.read_text()
    upload = write_submission(tmp_path / "s", "attention", source)
    scores = {}
    for flag in ([], ["--no-diagnosis"]):
        results = tmp_path / f"r{len(flag)}.json"
        proc = run_cli("grade", "attention", str(upload), "--results", str(results), *flag)
        assert proc.returncode == 0, proc.stderr
        document = json.loads(results.read_text())
        scores[bool(flag)] = [t["score"] for t in document["tests"]]
        if not flag:
            named = {m for t in document["tests"] for m in t["extra_data"]["mistakes"]}
            assert {first.name, second.name} <= named, named
            text = "\n".join(t["output"] for t in document["tests"])
            assert first.title in text and second.title in text
            assert "BEGIN SOLUTION" not in text
    assert scores[True] == scores[False], "diagnosis must never change a score"
