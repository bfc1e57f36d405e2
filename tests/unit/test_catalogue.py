"""The catalogue: mistakes as patches of the reference, so the reference can change."""

from __future__ import annotations

import ast
import dataclasses

import pytest

from autograder.catalogue import apply_patch, changed_names, read_catalogue, submission_source
from autograder.config import ConfigError, list_assignments, load_assignment

SOURCE = """def train(model):
    total = 0.0  # running sum
    for batch in model:
        total += batch
    return total
"""


def test_a_patch_replaces_its_lines_at_their_indentation():
    out = apply_patch(SOURCE, [("total += batch", "total += 2 * batch\nprint(total)")])
    assert "        total += 2 * batch\n        print(total)\n" in out
    assert "running sum" in out  # untouched lines keep their comments


def test_a_patch_ignores_comments_and_indentation_when_matching():
    out = apply_patch(SOURCE, [("total = 0.0\nfor batch in model:", "for batch in model:")])
    assert "total = 0.0" not in out and out.count("for batch in model:") == 1


def test_an_empty_replacement_deletes():
    assert "total += batch" not in apply_patch(SOURCE, [("total += batch", "")])


@pytest.mark.parametrize("old", ["total -= batch", "total"])
def test_a_patch_that_matches_zero_or_several_places_is_refused(old):
    with pytest.raises(ConfigError, match="exactly one place"):
        apply_patch(SOURCE, [(old, "")])


@pytest.mark.parametrize("name", list_assignments())
def test_every_catalogue_entry_builds_and_changes_something(name):
    assignment = load_assignment(name)
    for kind in ("mistake", "variant"):
        for entry in read_catalogue(assignment, kind):
            compile(submission_source(assignment, entry), str(entry.path), "exec")
            if kind == "mistake":
                assert changed_names(assignment, entry), f"{entry.name} changes nothing in the reference"


@pytest.mark.parametrize("name,loop", [("transformer", "train"), ("seq2seq", "train_copy")])
def test_changing_a_line_of_the_reference_loop_touches_no_mistake(name, loop, tmp_path):
    """A new line in the reference's training loop: every patch still applies, and each mistake
    still differs from the (changed) reference only where it did before."""
    assignment = load_assignment(name)
    reference = assignment.solution.read_text()
    tree = ast.parse(reference)
    node = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == loop)
    lines = reference.splitlines(keepends=True)
    first = node.body[-1]  # the return: add a harmless line before it
    indent = lines[first.lineno - 1][: len(lines[first.lineno - 1]) - len(lines[first.lineno - 1].lstrip())]
    lines.insert(first.lineno - 1, f"{indent}_unused_marker = 0\n")
    changed = tmp_path / assignment.solution.name
    changed.write_text("".join(lines))
    moved = dataclasses.replace(assignment, solution=changed)
    patched = [e for e in read_catalogue(moved, "mistake") if e.patch]
    before = {e.name: changed_names(assignment, e) for e in read_catalogue(assignment, "mistake") if e.patch}
    assert any(b == {loop} for b in before.values()), f"{name} should have training-loop mistakes written as patches"
    for entry in patched:
        source = submission_source(moved, entry)
        assert "_unused_marker = 0" in source
        assert changed_names(moved, entry) == before[entry.name]


def test_explanations_are_unwrapped_paragraphs():
    from autograder.catalogue import unwrap

    assert unwrap("one line\n  wrapped here.\n\nSecond paragraph\n  too.") == "one line wrapped here.\n\nSecond paragraph too."


def _with_tables(tmp_path, name: str, tables: str):
    """A copy of ``name``'s assignment folder whose assignment.toml ends with ``tables``."""
    import shutil

    kit = tmp_path / "kit"
    shutil.copytree(load_assignment(name).root, kit / "assignments" / name)
    shutil.copytree(load_assignment(name).solution.parent, kit / "solutions" / name)
    toml = kit / "assignments" / name / "assignment.toml"
    toml.write_text(toml.read_text() + tables)
    return kit


def test_a_mistake_table_in_assignment_toml_is_refused_with_the_one_form(tmp_path):
    """Catalogued mistakes have one form, a file in mistakes/ (the scaffold writes files too): a former
    [mistakes.<id>] table is refused with what to write instead, never silently ignored."""
    table = '\n[mistakes.x]\ntitle = "t"\nexplanation = "e"\ncaught_by = []\npatch = [["a", "b"]]\n'
    kit = _with_tables(tmp_path, "attention", table)
    with pytest.raises(ConfigError, match=r"mistakes/<id>.py"):
        load_assignment("attention", kit)
