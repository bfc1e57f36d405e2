"""Uploads as students really make them: found, normalised, or refused with a clear message."""

import zipfile

import pytest
from conftest import grade, reference_source, stub_source, write_submission


def _zip(path, files):
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def test_zip_with_a_folder_and_macos_junk(tmp_path):
    upload = _zip(
        tmp_path / "upload.zip",
        {
            "my work/attention.py": reference_source("attention"),
            "__MACOSX/my work/._attention.py": "\x00junk",
            "my work/notes.txt": "hello",
        },
    )
    assert grade("attention", upload, tmp_path)["score"] == 100


def test_bom_and_crlf_line_endings(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "attention.py").write_bytes(b"\xef\xbb\xbf" + reference_source("attention").replace("\n", "\r\n").encode())
    assert grade("attention", folder, tmp_path)["score"] == 100


def test_browser_duplicate_name_is_graded_with_a_note(tmp_path):
    path = write_submission(tmp_path / "sub", "attention", reference_source("attention"), name="attention (1).py")
    document = grade("attention", path.parent, tmp_path)
    assert document["score"] == 100 and "attention (1).py" in document["output"]


def test_the_only_py_under_another_name_is_graded_with_a_note(tmp_path):
    path = write_submission(tmp_path / "sub", "attention", reference_source("attention"), name="attention_final.py")
    document = grade("attention", path.parent, tmp_path)
    assert document["score"] == 100
    assert "graded attention_final.py as attention.py (the only .py file in the upload)" in document["output"]


def test_an_empty_file_is_told_it_is_empty(tmp_path):
    path = write_submission(tmp_path / "sub", "attention", "# attention.py\n\n", name="attention.py")
    document = grade("attention", path.parent, tmp_path)
    assert document["score"] == 0 and "your file attention.py is empty (did you upload before saving?)" in document["output"]
    assert "softmax" not in document["output"]


def test_main_block_is_not_run(tmp_path):
    source = reference_source("attention") + "\nif __name__ == '__main__':\n    raise SystemExit('ran main')\n"
    assert grade("attention", write_submission(tmp_path / "s", "attention", source), tmp_path)["score"] == 100


def test_missing_file_lists_what_was_found(tmp_path):
    path = write_submission(tmp_path / "sub", "attention", "x = 1\n", name="solution.py")
    document = grade("attention", path.parent, tmp_path)
    assert document["score"] == 0 and "solution.py" in document["output"] and "attention.py" in document["output"]


def test_empty_upload(tmp_path):
    (tmp_path / "empty").mkdir()
    document = grade("attention", tmp_path / "empty", tmp_path)
    assert document["score"] == 0 and "empty" in document["output"]


def test_unreadable_zip(tmp_path):
    (tmp_path / "bad.zip").write_bytes(b"PK\x03\x04 not really a zip")
    document = grade("attention", tmp_path / "bad.zip", tmp_path)
    assert document["score"] == 0 and "zip" in document["output"]


def test_syntax_error_names_the_line(tmp_path):
    source = reference_source("attention") + "\ndef broken(:\n    pass\n"
    document = grade("attention", write_submission(tmp_path / "s", "attention", source), tmp_path)
    assert document["score"] == 0
    lines = len(reference_source("attention").splitlines()) + 2
    assert f"line {lines}" in document["output"], document["output"]


def test_exception_at_import(tmp_path):
    source = reference_source("attention") + "\nraise RuntimeError('oops at import')\n"
    document = grade("attention", write_submission(tmp_path / "s", "attention", source), tmp_path)
    assert document["score"] == 0 and "oops at import" in document["output"]


def test_missing_function_costs_only_its_tests(tmp_path):
    source = reference_source("attention").replace("def padding_mask(", "def padding_mask_renamed(")
    document = grade("attention", write_submission(tmp_path / "s", "attention", source), tmp_path)
    lost = {t["name"].split(":")[0] for t in document["tests"] if t["score"] < t["max_score"]}
    assert lost == {"padding_mask"} or lost <= {"padding_mask", "scaled_dot_product_attention"}, lost
    assert 0 < document["score"] < 100
    assert any("has no `padding_mask`" in t["output"] for t in document["tests"])


def test_stub_scores_zero_through_a_zip(tmp_path):
    upload = _zip(tmp_path / "stub.zip", {"attention.py": stub_source("attention")})
    assert grade("attention", upload, tmp_path)["score"] == 0


def _notebook(*cells: str) -> str:
    """An nbformat 4 notebook of code cells, as Jupyter writes one (sources as lists of lines, outputs)."""
    import json

    code = [
        {"cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": [], "source": c.splitlines(True)} for c in cells
    ]
    head = {"cell_type": "markdown", "metadata": {}, "source": ["# My work\n"]}
    metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": metadata, "cells": [head, *code]}, indent=1)


@pytest.mark.proof  # two whole gradings through the CLI: `make proofs` (tests/unit/test_notebook_upload.py is the fast check)
def test_a_notebook_upload_is_graded_from_its_code_cells(tmp_path):
    """The reference in a notebook's cells scores 100; so does one whose top level trains for ever and
    plots (left out, and said): a notebook is graded as the module its cells define."""
    folder = tmp_path / "attention-nb"
    folder.mkdir()
    (folder / "attention.ipynb").write_text(_notebook("!pip install einops\nimport torch", reference_source("attention")))
    document = grade("attention", folder, tmp_path)
    assert document["score"] == 100, document["output"]
    assert "graded the code cells of attention.ipynb as attention.py" in document["output"]

    training = (
        "import matplotlib.pyplot as plt\n%matplotlib inline\n"
        "model = TinyCausalLM(vocab_size=8, d_model=16, n_heads=2, n_layers=1, max_len=16)\n"
        "history = train(model, counting_data(64), counting_data(16), epochs=10**9)\n"
        "plt.plot(history['train_loss'])\nprint(generate(model, torch.zeros(1, 1, dtype=torch.long), 5))"
    )
    upload = tmp_path / "transformer-nb.zip"
    _zip(upload, {"Colab Notebooks/transformer.ipynb": _notebook(reference_source("transformer"), training, "model?")})
    document = grade("transformer", upload, tmp_path)
    assert document["score"] == 100, document["output"]
    for said in ("history = train(", "calls train, the notebook's own code", "matplotlib", "model?"):
        assert said in document["output"], said
