"""Each corpus entry with its injected bug, graded on the whole suite: it loses points and names no mistake
but the ones its `BUG_NAMES` allow.

The release grades such a file only on the tests of the mistakes it may be named as (their `CAUGHT_BY`, as a
catalogued mistake is graded), which keeps seq2seq's attention and decoder bugs from training 1,000 steps each
in every cold release. This proof keeps the whole-suite guard in CI: public code nobody here wrote, with one
known defect, must not be told a mistake it does not have on any test (the gradings are cached beside the
release's, keyed on everything a grading reads, so a second run is quick).
"""

from __future__ import annotations

import pytest
from conftest import ASSIGNMENTS, KIT

from autograder.catalogue import read_catalogue
from autograder.config import load_assignment
from autograder.release.catalogue_grading import bugged_source, grade_sources

pytestmark = pytest.mark.proof  # whole-suite gradings: `make proofs`


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_each_corpus_bug_on_the_whole_suite_loses_points_and_is_named_correctly_or_not_at_all(name):
    assignment = load_assignment(name, KIT)
    corpus = [entry for entry in read_catalogue(assignment, "corpus") if entry.bug]
    sources = {f"corpus-bug:{entry.name}": bugged_source(assignment, entry) for entry in corpus}
    graded = grade_sources(assignment, sources, jobs_n=1)
    problems = []
    for entry in corpus:
        document = graded[f"corpus-bug:{entry.name}"]
        named = {m for t in document["tests"] for m in t.get("extra_data", {}).get("mistakes", [])}
        if document["_exit_code"] != 0 or document["score"] is None or document["score"] >= 100:
            problems.append(f"{entry.name}: scores {document['score']} (exit {document['_exit_code']})")
        if named - set(entry.bug_names):
            problems.append(f"{entry.name}: named {sorted(named)}, allowed {entry.bug_names}")
    assert not problems, problems
