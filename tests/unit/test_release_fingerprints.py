"""A re-release regrades only what a change can affect: the keys of the self-check's caches.

The gradings' key (``_fingerprint``) covers what a grading reads: the grading engine, the assignment's tests,
points, helpers and mistakes, and the reference. A handout, the lab notebook, a variant or corpus file (each
source is keyed by its own text), course.toml and the release's own code leave it as it is. The slow proofs
key on the artefact they run (``artefact_hash``): a student.zip whose handout changed runs the same notebook.
"""

from __future__ import annotations

import shutil
import zipfile

import pytest
from conftest import KIT

from autograder.config import load_assignment
from autograder.release.catalogue_grading import _fingerprint, proofs_fingerprint
from autograder.release.zip_proofs import artefact_hash

NAME = "embeddings"


@pytest.fixture
def copied(tmp_path):
    for folder in ("assignments", "solutions"):
        shutil.copytree(KIT / folder / NAME, tmp_path / folder / NAME)
    return tmp_path


def _edit(path):
    path.write_text(path.read_text() + "\n# edited\n")


@pytest.mark.parametrize("what", ["handout.md", "notebook.py", "variants", "corpus"])
def test_a_change_no_grading_reads_keeps_every_grading(copied, what):
    assignment = load_assignment(NAME, copied)
    before = _fingerprint(assignment), proofs_fingerprint(assignment)
    target = assignment.root / what
    _edit(target if target.is_file() else sorted(target.glob("*.py"))[0])
    assert (_fingerprint(assignment), proofs_fingerprint(assignment)) == before


@pytest.mark.parametrize("what", ["assignment.toml", "tests/hidden", "mistakes", "reference"])
def test_a_change_a_grading_reads_regrades(copied, what):
    assignment = load_assignment(NAME, copied)
    before = _fingerprint(assignment)
    if what == "reference":
        _edit(assignment.solution)
    else:
        target = assignment.root / what
        _edit(target if target.is_file() else sorted(target.glob("*.py"))[0])
    assert _fingerprint(assignment) != before


def test_a_proof_keys_on_the_artefact_it_runs_not_on_its_handout(tmp_path):
    def zipped(name, handout, code):
        path = tmp_path / name
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("a/README.md", handout)
            zf.writestr("a/a.py", code)
        return path

    one, other_handout = zipped("1.zip", "v1", "x = 1"), zipped("2.zip", "v2", "x = 1")
    other_code = zipped("3.zip", "v1", "x = 2")
    assert artefact_hash(one, (".md",)) == artefact_hash(other_handout, (".md",))
    assert artefact_hash(one) != artefact_hash(other_handout)
    assert artefact_hash(one, (".md",)) != artefact_hash(other_code, (".md",))
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "info.json").write_text("{}")
    before = artefact_hash(tmp_path / "tree")
    (tmp_path / "tree" / "info.json").write_text('{"timeout": 1}')
    assert artefact_hash(tmp_path / "tree") != before
