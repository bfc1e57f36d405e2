"""The release's slow proofs (the lab notebook, another seed) refuse what they must, and only a
passed proof is remembered (crafted notebooks and runs; no kernel, no grading)."""

import subprocess

import nbformat

from autograder.config import KIT_ROOT, load_assignment
from autograder.release import zip_proofs
from autograder.release.catalogue_grading import _fingerprint
from autograder.release.notebooks import notebook_problem


def _notebook(check_output: str, plot: bool = True) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    check = nbformat.v4.new_code_cell('grader.check("softmax")')
    check.outputs = [nbformat.v4.new_output("stream", text=check_output)]
    plot_cell = nbformat.v4.new_code_cell("plt.plot([1, 2])")
    if plot:
        plot_cell.outputs = [nbformat.v4.new_output("display_data", data={"image/png": "iVBOR", "text/plain": "<Figure>"})]
    nb.cells = [check, plot_cell]
    return nb


def test_the_reference_notebook_must_pass_every_check_and_draw():
    assert notebook_problem(_notebook("softmax results: All test cases passed!"), solution=True) == ""
    assert "fails" in notebook_problem(_notebook("softmax results: 1 of 2 failed"), solution=True)
    assert "no plot" in notebook_problem(_notebook("All test cases passed!", plot=False), solution=True)


def test_the_stub_notebook_must_say_what_is_unfinished():
    assert notebook_problem(_notebook("softmax: not implemented yet"), solution=False) == ""
    assert "unfinished" in notebook_problem(_notebook("softmax results: 1 of 2 failed"), solution=False)


def test_a_failed_seed_is_reported_and_not_remembered(monkeypatch, tmp_path):
    assignment = load_assignment("embeddings", KIT_ROOT)
    proven = zip_proofs.Proven(tmp_path, assignment, _fingerprint(assignment))
    failed = subprocess.CompletedProcess([], 1, "seed 1: ppmi: values differ\n", "")
    monkeypatch.setattr(zip_proofs.subprocess, "run", lambda *a, **k: failed)
    report = zip_proofs.Report("embeddings")
    zip_proofs._check_other_seed(assignment, report, proven)
    assert not report.ok and "seed 1" in report.problems[0] and "seed1" not in proven

    passed = subprocess.CompletedProcess([], 0, "", "")
    monkeypatch.setattr(zip_proofs.subprocess, "run", lambda *a, **k: passed)
    report = zip_proofs.Report("embeddings")
    zip_proofs._check_other_seed(assignment, report, proven)
    assert report.ok and "seed1" in proven
    monkeypatch.setattr(zip_proofs.subprocess, "run", lambda *a, **k: failed)  # remembered: not run again
    report = zip_proofs.Report("embeddings")
    zip_proofs._check_other_seed(assignment, report, proven)
    assert report.ok and "(cached)" in report.lines[0]


def test_the_gradescope_run_is_remembered_for_the_same_zip_and_reference_only(monkeypatch, tmp_path):
    from autograder.release import gradescope_sim

    assignment = load_assignment("embeddings", KIT_ROOT)
    proven = zip_proofs.Proven(tmp_path / "cache", assignment, _fingerprint(assignment))
    runs = []
    clean = {"score": 100.0, "tests": [], "extra_data": {"kind": "graded"}}
    stopped = {"score": 90.0, "tests": [], "extra_data": {"kind": "graded", "stopped": ["a hang"]}}
    monkeypatch.setattr(gradescope_sim, "simulate", lambda path, files: runs.append(path) or dict(answer))
    zipped = tmp_path / "autograder.zip"
    zipped.write_bytes(b"one")

    answer = stopped  # a grading where something was stopped is never remembered
    assert zip_proofs.check_gradescope_zip(assignment, zipped, zip_proofs.Report("x"), proven)["score"] == 90.0
    answer = clean
    zip_proofs.check_gradescope_zip(assignment, zipped, zip_proofs.Report("x"), proven)
    again = zip_proofs.check_gradescope_zip(assignment, zipped, zip_proofs.Report("x"), proven)
    assert len(runs) == 2 and again["score"] == 100.0  # the third run is the remembered one
    zipped.write_bytes(b"two")  # another autograder.zip is graded again
    zip_proofs.check_gradescope_zip(assignment, zipped, zip_proofs.Report("x"), proven)
    assert len(runs) == 3
