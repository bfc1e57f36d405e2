"""A notebook upload is graded as the module its code cells define (autograder/grading/notebook_upload.py):
what is kept, what is left out and said, and the notebook found in an upload with no .py."""

from __future__ import annotations

import json
import zipfile

import pytest

from autograder.grading.notebook_upload import NotebookProblem, notebook_module
from autograder.grading.submission import SubmissionProblem, UnpackBudget, find_submission_file


def notebook(*cells: str, language: str = "python") -> bytes:
    """An nbformat 4 notebook of code cells (sources split in lines, as Jupyter writes them)."""
    return json.dumps(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "metadata": {"kernelspec": {"name": "python3", "language": language, "display_name": "Python 3"}},
            "cells": [
                {"cell_type": "markdown", "metadata": {}, "source": ["# My attention\n"]},
                *(
                    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": c.splitlines(True)}
                    for c in cells
                ),
            ],
        }
    ).encode()


def module_of(*cells: str) -> tuple[dict, str, list[str]]:
    extracted = notebook_module(notebook(*cells), "toy.ipynb", "toy")
    namespace: dict = {}
    exec(compile(extracted.source, "toy.py", "exec"), namespace)  # the kit's own test cells: trusted
    return namespace, extracted.source, extracted.dropped


def test_definitions_imports_and_constants_are_kept_and_running_code_is_not():
    namespace, source, dropped = module_of(
        "!pip install einops\n%matplotlib inline\nimport math\nimport matplotlib.pyplot as plt\nfrom google.colab import files",
        'EPS = 1e-9\nNEG_INF = float("-inf")\nSCALE = 1 / math.sqrt(4)\n\n\ndef double(x):\n    """Twice x."""\n    return 2 * x',
        "print(double(3))\nresult = double(4)\nlater = result + 1\ndouble?",
        "for epoch in range(10**12):\n    double(epoch)",
        "if __name__ == '__main__':\n    raise SystemExit('ran main')",
        "class Box:\n    size = EPS\n\n\nBox.twice = double\nTABLE = {'a': [1, 2]}\nTABLE['b'] = TABLE['a']",
        "text = open('corpus.txt').read()\nwith open('x') as f:\n    pass",
        "try:\n    import einops\nexcept ImportError:\n    einops = None",
    )
    assert namespace["double"](5) == 10 and namespace["EPS"] == 1e-9 and namespace["NEG_INF"] == float("-inf")
    assert namespace["SCALE"] == 0.5 and namespace["Box"].twice is namespace["double"] and namespace["TABLE"]["b"] == [1, 2]
    assert "einops" in namespace and "text" not in namespace and "result" not in namespace and "plt" not in namespace
    said = " | ".join(dropped)
    for left_out in ("!pip install einops", "%matplotlib inline", "matplotlib", "google", "print(double(3))", "result = double(4)",
                     "later = result + 1", "double?", "for epoch", "__main__", "open('corpus.txt')", "with open"):  # fmt: skip
        assert left_out in said, (left_out, said)
    assert "calls double, the notebook's own code" in said and "uses result, which only left-out code sets" in said


def test_cells_run_in_order_a_later_definition_wins_and_a_broken_cell_is_left_out_whole():
    namespace, source, dropped = module_of(
        "def f():\n    return 1", "def f(:\n    return 2", "from __future__ import annotations\ndef f() -> Later:\n    return 3"
    )
    assert namespace["f"]() == 3 and source.index("from __future__") < source.index("def f")  # a file's first statement
    assert any(d.startswith("cell 2 (not Python") for d in dropped), dropped


def test_cell_magics():
    namespace, _, dropped = module_of("%%bash\necho hi", "%%time\nA = 1\nprint(A)", "%%writefile toy.py\ndef g():\n    return 7")
    assert namespace["A"] == 1 and namespace["g"]() == 7
    assert any("%%bash" in d for d in dropped)


def test_a_percent_in_a_string_is_code():
    namespace, _, dropped = module_of('FORMAT = """\n%d items\n!important\n"""')
    assert namespace["FORMAT"] == "\n%d items\n!important\n" and not dropped


@pytest.mark.parametrize(
    "raw, says",
    [
        (b'{"cells": [', "its JSON is broken at line 1"),
        (b"\xff\xfe not text", "not UTF-8"),
        (b"[1, 2]", "no cells"),
        (notebook("x <- 1", language="R"), "R notebook"),
        (notebook("from toy import double\ndouble(2)"), "imports toy rather than defining its functions"),
    ],
)
def test_what_is_no_notebook_of_the_module_says_so(raw, says):
    with pytest.raises(NotebookProblem, match=says) as problem:
        notebook_module(raw, "toy.ipynb", "toy")
    assert "toy" in str(problem.value)


def test_an_upload_without_the_py_is_graded_from_its_notebook(tmp_path):
    upload = tmp_path / "upload.zip"
    with zipfile.ZipFile(upload, "w") as zf:
        zf.writestr("work/attention.ipynb", notebook("def softmax(x):\n    return x", "softmax(1)"))
        zf.writestr("work/.ipynb_checkpoints/attention-checkpoint.ipynb", "{broken")
        zf.writestr("work/notes.txt", "hi")
    found, note = find_submission_file(upload, "attention.py", tmp_path, UnpackBudget())
    assert found.name == "attention.py" and "def softmax" in found.read_text() and "softmax(1)" not in found.read_text()
    assert "graded the code cells of attention.ipynb as attention.py" in note and "`softmax(1)`: calls softmax" in note


def test_the_py_wins_over_a_notebook_and_a_lone_notebook_of_another_name_is_graded(tmp_path):
    folder = tmp_path / "both"
    folder.mkdir()
    (folder / "attention.py").write_text("X = 1\n")
    (folder / "attention.ipynb").write_bytes(notebook("X = 2"))
    found, note = find_submission_file(folder, "attention.py", tmp_path, UnpackBudget())
    assert found == folder / "attention.py" and note == "Also in the upload, not graded: attention.ipynb (only attention.py is)."
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "Untitled1.ipynb").write_bytes(notebook("X = 3"))
    found, note = find_submission_file(lone, "attention.py", tmp_path, UnpackBudget())
    assert "X = 3" in found.read_text() and "Untitled1.ipynb" in note
    two = tmp_path / "two"
    two.mkdir()
    (two / "a.ipynb").write_bytes(notebook("X = 3"))
    (two / "b.ipynb").write_bytes(notebook("X = 4"))
    with pytest.raises(SubmissionProblem, match="no file named attention.py"):
        find_submission_file(two, "attention.py", tmp_path, UnpackBudget())


def test_a_broken_notebook_is_a_clear_problem(tmp_path):
    (tmp_path / "attention.ipynb").write_text('{"cells": [}')
    with pytest.raises(SubmissionProblem, match="attention.ipynb is not a readable notebook .*upload attention.py"):
        find_submission_file(tmp_path / "attention.ipynb", "attention.py", tmp_path / "work", UnpackBudget())


@pytest.mark.parametrize(
    "raw",
    [b"[" * 200_000 + b"]" * 200_000, notebook("X = " + "-" * 100_000 + "1"), notebook("X = " + " + ".join(["1"] * 5_000))],
    ids=["brackets", "unary-chain", "binary-chain"],
)
def test_a_notebook_nested_too_deeply_is_a_clear_problem_not_an_internal_error(tmp_path, raw):
    """The red team's notebooks (2026-12-05): the grader's JSON reader or its code rewriting recursed past
    Python's limit, and the grading ended as "the grader hit an internal error (RecursionError)"."""
    (tmp_path / "attention.ipynb").write_bytes(raw)
    said = "attention.ipynb (nests too deeply|is too large) for the grader to read .*upload attention.py"
    with pytest.raises(SubmissionProblem, match=said):
        find_submission_file(tmp_path / "attention.ipynb", "attention.py", tmp_path / "work", UnpackBudget())


def test_the_file_graded_is_chosen_by_its_place_in_the_upload_wherever_the_upload_sits(tmp_path):
    """The red team's (2026-12-05): a top-level attention.py beside old.zip holding another was chosen by the
    depth of absolute paths: the zip's copy (unpacked under /tmp) won in a deep class folder and lost in
    Gradescope's /autograder/submission, so the same upload scored 100 in one and 0 in the other."""
    chosen = set()
    for depth in (1, 8):
        upload = tmp_path.joinpath(*[f"d{depth}"] * depth) / "submission"
        upload.mkdir(parents=True)
        (upload / "attention.py").write_text("TOP = 1\n")
        with zipfile.ZipFile(upload / "old.zip", "w") as zf:
            zf.writestr("attention.py", "ZIPPED = 1\n")
        work = tmp_path / f"work{depth}"
        work.mkdir()
        found, note = find_submission_file(upload, "attention.py", work, UnpackBudget())
        chosen.add(found.read_text())
        assert note == "Also in the upload, not graded: old.zip/attention.py (only attention.py is)."
    assert chosen == {"TOP = 1\n"}


def test_a_projects_git_folder_is_neither_walked_nor_counted(tmp_path):
    """A correct attention.py beside a .git of 2,100 files scored 0: "the upload unpacks to more than 2000 files"."""
    (tmp_path / "upload" / ".git" / "objects").mkdir(parents=True)
    for i in range(2_100):
        (tmp_path / "upload" / ".git" / "objects" / str(i)).write_text("x")
    (tmp_path / "upload" / "attention.py").write_text("X = 1\n")
    found, note = find_submission_file(tmp_path / "upload", "attention.py", tmp_path / "work", UnpackBudget())
    assert found.name == "attention.py" and note is None


@pytest.mark.parametrize("name", ["attention", "multihead", "transformer", "embeddings", "seq2seq", "decoding"])
def test_the_lab_notebook_uploaded_for_the_module_says_which_file_to_upload(name):
    """Each lab imports the module and defines helpers of its own (`todo`): graded as the module, every test
    failed with "has no softmax" and the cause only in a note. It is the upload's problem now."""
    from autograder.config import KIT_ROOT, load_assignment

    lab = KIT_ROOT / "student_template" / name / f"{name}_lab.ipynb"
    graded = load_assignment(name).graded_functions
    with pytest.raises(NotebookProblem, match=rf"imports {name} rather than defining its functions .*Upload your {name}\.py"):
        notebook_module(lab.read_bytes(), lab.name, name, graded)


def test_a_notebook_that_imports_the_module_and_defines_a_graded_function_is_graded():
    raw = notebook("import toy\ndef todo():\n    pass", "def double(x):\n    return 2 * x", "toy.double(2)")
    extracted = notebook_module(raw, "toy.ipynb", "toy", frozenset({"double", "triple"}))
    assert "def double" in extracted.source and "import toy" not in extracted.source
    with pytest.raises(NotebookProblem, match=r"it uses double from toy\.py"):  # helpers alone: the lab
        notebook_module(
            notebook("import toy as t\ndef todo():\n    pass", "t.double(2)"), "toy.ipynb", "toy", frozenset({"double"})
        )


def test_a_line_of_spaces_is_read_in_linear_time():
    """The red team's (round 5): one notebook line of 300,000 spaces and an `x` held the grader 90 s in the pattern
    that recognises `files = !ls` (quadratic), where no timer could stop it; grade-all graded nobody meanwhile."""
    import time

    started = time.process_time()
    extracted = notebook_module(notebook("def softmax(x):\n    return x", " " * 300_000 + "x"), "toy.ipynb", "toy")
    assert time.process_time() - started < 2.0 and "def softmax" in extracted.source
