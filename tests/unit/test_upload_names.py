"""Uploads named as students name them: the upload's only .py under another name is graded, with a note;
an empty file is told it is empty (issue 48)."""

import zipfile

import pytest

from autograder.grading.submission import SubmissionProblem, UnpackBudget, find_submission_file, is_blank, normalise_source

GRADED = frozenset({"softmax", "causal_mask", "padding_mask", "scaled_dot_product_attention"})


def _find(upload, tmp_path):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return find_submission_file(upload, "attention.py", work, UnpackBudget(), GRADED)


@pytest.mark.parametrize("name", ["attention_final.py", "hw3.py", "my attention v2.py"])
def test_the_only_py_under_another_name_is_graded_with_a_note(tmp_path, name):
    (tmp_path / "upload").mkdir()
    (tmp_path / "upload" / name).write_text("import torch\n\ndef softmax(x, dim=-1):\n    return x\n")
    (tmp_path / "upload" / "notes.txt").write_text("my notes")
    found, note = _find(tmp_path / "upload", tmp_path)
    assert found.name == name
    assert note == f"graded {name} as attention.py (the only .py file in the upload); please name it exactly attention.py."


def test_the_rules_before_it_are_unchanged(tmp_path):
    (tmp_path / "caps").mkdir()
    (tmp_path / "caps" / "Attention.py").write_text("def softmax(x):\n    return x\n")
    found, note = _find(tmp_path / "caps", tmp_path)
    assert found.name == "Attention.py" and note == "graded Attention.py as attention.py (the name's capitals differ)."
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "attention (1).py").write_text("def softmax(x):\n    return x\n")
    found, note = _find(tmp_path / "copy", tmp_path)
    assert found.name == "attention (1).py" and "please name the file exactly attention.py" in note


def test_in_a_zip_the_note_names_its_place(tmp_path):
    with zipfile.ZipFile(tmp_path / "work.zip", "w") as zf:
        zf.writestr("hw/attn_final.py", "def causal_mask(n):\n    return n\n")
        zf.writestr("__MACOSX/hw/._attn_final.py", "junk")
    found, note = _find(tmp_path / "work.zip", tmp_path)
    assert found.name == "attn_final.py" and note.startswith("graded work.zip/hw/attn_final.py as attention.py")


def test_what_is_not_taken(tmp_path):
    cases = {
        "notes": {"notes.py": "x = 1\n"},  # defines none of the graded functions
        "another assignment's file": {"decoding.py": "def causal_mask(n):\n    return n\n"},
        "two candidates": {"a.py": "def softmax(x):\n    return x\n", "b.py": "def softmax(x):\n    return x\n"},
    }
    for case, files in cases.items():
        folder = tmp_path / case.replace(" ", "_").replace("'", "")
        folder.mkdir()
        for name, text in files.items():
            (folder / name).write_text(text)
        with pytest.raises(SubmissionProblem, match="no file named attention.py was found"):
            _find(folder, tmp_path)
    (tmp_path / "draft").mkdir()
    (tmp_path / "draft" / "draft.py").write_text("def broken(:\n")
    with pytest.raises(SubmissionProblem, match="no file named attention.py was found"):
        _find(tmp_path / "draft", tmp_path)
    work = tmp_path / "work"
    found, _ = find_submission_file(tmp_path / "draft", "attention.py", work, UnpackBudget())  # no graded list: any
    assert found.name == "draft.py"


def test_a_syntax_error_in_a_graded_function_is_still_graded(tmp_path):
    (tmp_path / "upload").mkdir()
    (tmp_path / "upload" / "final.py").write_text("def softmax(x:\n    return x\n")
    assert _find(tmp_path / "upload", tmp_path)[0].name == "final.py"


@pytest.mark.parametrize("text", ["", "   \n\t\n", "# attention.py\n# TODO: write softmax\n\n", "\ufeff# saved with a BOM\n"])
def test_an_empty_file_is_told_it_is_empty(tmp_path, text):
    (tmp_path / "attention.py").write_text(text, encoding="utf-8")
    with pytest.raises(SubmissionProblem, match=r"^your file attention.py is empty \(did you upload before saving\?\)$"):
        normalise_source(tmp_path / "attention.py", tmp_path / "out.py")
    assert is_blank(text)


def test_an_empty_file_under_another_name_is_found_then_told_it_is_empty(tmp_path):
    (tmp_path / "upload").mkdir()
    (tmp_path / "upload" / "attention_final.py").write_text("\n")
    found, _ = _find(tmp_path / "upload", tmp_path)
    with pytest.raises(SubmissionProblem, match="your file attention_final.py is empty"):
        normalise_source(found, tmp_path / "out.py")


def test_a_file_with_code_is_not_empty(tmp_path):
    for text in ('"""only a docstring"""\n', "pass\n", "#!/usr/bin/env python\nimport torch\n"):
        assert not is_blank(text)
        (tmp_path / "attention.py").write_text(text)
        normalise_source(tmp_path / "attention.py", tmp_path / "out.py")
