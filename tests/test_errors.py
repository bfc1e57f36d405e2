"""Bad input gets a message that says what is wrong and what to do, never a bare traceback."""

import shutil

import pytest
from conftest import KIT, run_cli

from autograder.config import ConfigError, load_assignment
from autograder.release.student_folder import student_files


def test_unknown_assignment_lists_the_known_ones():
    proc = run_cli("grade", "attentoin", "x.py")
    assert proc.returncode == 2
    assert "unknown assignment 'attentoin'" in proc.stderr and "attention" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_submission_path(tmp_path):
    proc = run_cli("grade", "attention", str(tmp_path / "nope.py"))
    assert proc.returncode == 2 and "does not exist" in proc.stderr and "Traceback" not in proc.stderr


def _kit_copy(tmp_path):
    root = tmp_path / "kit"
    shutil.copytree(KIT / "assignments" / "attention", root / "assignments" / "attention")
    shutil.copytree(KIT / "solutions" / "attention", root / "solutions" / "attention")
    return root


def test_points_that_do_not_add_up_to_100(tmp_path):
    root = _kit_copy(tmp_path)
    toml = root / "assignments" / "attention" / "assignment.toml"
    line = '"hidden/test_softmax.py::test_large_inputs" = 6'
    assert line in toml.read_text()
    toml.write_text(toml.read_text().replace(line, '"hidden/test_softmax.py::test_large_inputs" = 11', 1))
    with pytest.raises(ConfigError, match="add up to 105"):
        load_assignment("attention", root)


def test_unbalanced_solution_markers_are_refused_with_the_line(tmp_path):
    root = _kit_copy(tmp_path)
    solution = root / "solutions" / "attention" / "attention.py"
    text = solution.read_text()
    solution.write_text(text.replace("    # END SOLUTION\n", "", 1))
    with pytest.raises(ConfigError, match=r"attention\.py:\d+: BEGIN SOLUTION inside the block opened at line \d+"):
        student_files(load_assignment("attention", root))


@pytest.mark.proof  # whole gradings: `make proofs` (make test stays under 4 minutes)
def test_a_module_grading_does_not_have_is_left_out_with_a_note_and_einops_is_allowed(tmp_path):
    """One import rule (grading/imports.py): a top-level import of a package grading does not have is left out and
    said first; unused it costs nothing, used it fails where it is used. einops is the contract's."""
    from conftest import grade, reference_source

    future = "from __future__ import annotations\n"
    body = reference_source("attention").replace(future, "")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "attention.py").write_text(future + "import foobarlib\n" + body)
    document = grade("attention", tmp_path / "a" / "attention.py", tmp_path)
    assert document["score"] == 100
    assert "imports `foobarlib` (line 2, binding `foobarlib`), which grading does not have" in document["output"]
    assert "einops" in document["output"], "the note says what may be imported"
    (tmp_path / "c").mkdir()
    uses = (
        body + "\n_causal = causal_mask\n\n\ndef causal_mask(t, device=None):\n    foobarlib.x\n    return _causal(t, device)\n"
    )
    (tmp_path / "c" / "attention.py").write_text(future + "import foobarlib\n" + uses)
    document = grade("attention", tmp_path / "c" / "attention.py", tmp_path)
    lost = {t["name"].split(":")[0] for t in document["tests"] if t["score"] < t["max_score"]}
    assert lost == {"causal_mask"} and "name 'foobarlib' is not defined" in document["output"], (lost, document["output"][:2000])
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "attention.py").write_text(future + "import einops\n" + body)
    assert grade("attention", tmp_path / "b" / "attention.py", tmp_path)["score"] == 100


def test_student_text_no_terminal_can_print_is_cleaned_on_the_console(tmp_path):
    """The red team's lone surrogate in an exception message made `grade` exit 1 with a traceback when it printed
    the table (results.json was fine); bidi overrides and escape sequences could dress a message as the grader's."""
    import json

    from conftest import reference_source, validate_results

    (tmp_path / "attention.py").write_text(
        reference_source("attention")
        + (
            '\n\ndef causal_mask(n):\n    print("\\u202e printed \\x1b[31m")\n'
            '    raise ValueError("\\ud800 \\u202e\\u2028 \\x1b[2J cleared")\n'
        )
    )
    results = tmp_path / "results.json"
    proc = run_cli("grade", "attention", str(tmp_path / "attention.py"), "--results", str(results))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "causal_mask raised ValueError" in proc.stdout
    document = json.loads(results.read_text())
    validate_results(document)
    assert "[2J cleared" in json.dumps(document, ensure_ascii=False)  # the words stay, without the escape
    assert not {"\u202e", "\u2028", "\x1b", "\ud800"} & set(proc.stdout + json.dumps(document, ensure_ascii=False))
