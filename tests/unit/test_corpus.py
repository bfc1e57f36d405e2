"""The independent-code corpus: every entry names its source and declares one bug that applies once."""

from pathlib import Path

from autograder.catalogue import read_catalogue, submission_source
from autograder.config import list_assignments, load_assignment
from autograder.release.catalogue_grading import bugged_source

KIT = Path(__file__).resolve().parents[2]


def test_corpus_entries_name_their_source_and_inject_one_bug():
    seen = 0
    for name in list_assignments(KIT):
        assignment = load_assignment(name, KIT)
        for entry in read_catalogue(assignment, "corpus"):
            seen += 1
            assert "Source:" in entry.explanation and "Changes" in entry.explanation, entry.name
            assert entry.bug is not None, f"{entry.name} declares no BUG"
            correct, wrong = submission_source(assignment, entry), bugged_source(assignment, entry)
            assert correct != wrong and entry.bug[0] in correct, entry.name
    assert seen >= 3
