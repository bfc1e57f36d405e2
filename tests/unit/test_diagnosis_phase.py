"""The diagnosis phase runs in a child with its own limits; whatever that child does, the grader keeps its points
and takes back only names of the expected shape (autograder/diagnosis/phase.py)."""

import os
import time

import pytest

from autograder.diagnosis.phase import run_phase, valid_names


def test_an_answer_comes_back_as_data():
    answer, why = run_phase(lambda: {"t::a": ["named", ["m1"]]}, cpu_seconds=10, wall_seconds=30)
    assert answer == {"t::a": ["named", ["m1"]]} and why == ""


def test_a_child_that_raises_hangs_or_eats_memory_has_no_answer_and_the_grader_goes_on():
    def raises():
        raise RuntimeError("a replay bug")

    def hangs():
        time.sleep(60)
        return {}

    def spins():
        while True:
            pass

    def eats():
        hoard = []
        while True:
            hoard.append(bytearray(50 * 2**20))
            hoard[-1][::4096] = b"x" * len(hoard[-1][::4096])  # touched: the child's own pages

    assert run_phase(raises, cpu_seconds=10, wall_seconds=30) == (None, "it stopped with an error (the log says which)")
    started = time.monotonic()
    answer, why = run_phase(hangs, cpu_seconds=10, wall_seconds=1.5)
    assert answer is None and "ran out of time" in why and time.monotonic() - started < 5
    answer, why = run_phase(spins, cpu_seconds=1, wall_seconds=30)
    assert answer is None and "error" in why  # SIGXCPU at the CPU limit
    answer, why = run_phase(eats, cpu_seconds=30, wall_seconds=60)
    assert answer is None and ("memory" in why or "error" in why), why
    assert run_phase(lambda: {}, cpu_seconds=1, wall_seconds=0.1) == (None, "no time was left for it")


def test_the_child_cannot_touch_the_graders_state():
    state = {"points": 10}

    def meddles():
        state["points"] = 100
        os.environ["KIT_MEDDLED"] = "1"
        return {}

    assert run_phase(meddles, cpu_seconds=5, wall_seconds=30)[0] == {}
    assert state == {"points": 10} and "KIT_MEDDLED" not in os.environ


def test_only_names_of_the_expected_shape_are_kept():
    answer = {
        "t::a": ["named", ["m1"]],
        "t::b": ["named", ["not-a-mistake"]],  # not in the catalogue
        "t::c": ["made-up", []],  # not a diagnosis kind
        "t::d": "named",  # not a pair
        "t::other": ["named", ["m1"]],  # not one of this grading's failures
        "t::e": ["together", ["m1", "m2"]],
    }
    kept = valid_names(answer, {"t::a", "t::b", "t::c", "t::d", "t::e"}, {"m1", "m2"})
    assert kept == {"t::a": ("named", ["m1"]), "t::e": ("together", ["m1", "m2"])}


@pytest.mark.proof  # whole gradings: `make proofs` (make test stays under 4 minutes)
def test_a_grading_whose_diagnosis_phase_dies_keeps_every_point_and_says_unavailable(tmp_path, monkeypatch):
    from conftest import KIT

    from autograder.catalogue import read_catalogue, submission_source
    from autograder.config import load_assignment
    from autograder.grading import grade as grading

    assignment = load_assignment("attention", KIT)
    mistake = next(e for e in read_catalogue(assignment, "mistake") if e.name == "scale_by_dk")
    upload = tmp_path / "attention.py"
    upload.write_text(submission_source(assignment, mistake))
    named = grading.grade_submission(assignment, upload).record

    def dies():
        os._exit(3)  # the child's replays crash the interpreter

    real = grading.run_phase
    monkeypatch.setattr(grading, "run_phase", lambda work, cpu, wall: real(dies, cpu, wall))
    unavailable = grading.grade_submission(assignment, upload).record
    assert [t.score for t in unavailable.tests] == [t.score for t in named.tests]
    failed = [t for t in unavailable.tests if t.status != "passed"]
    assert any("scale_by_dk" in t.mistakes for t in named.tests)
    assert failed and all(t.diagnosis == "unavailable" and not t.mistakes for t in failed)


def test_a_grader_running_torch_on_several_threads_still_gets_its_answer():
    """The grader's OpenMP pool does not survive a fork: a child computing on more than one thread waited for it
    forever (found by `make determinism`'s unpinned run, OMP_NUM_THREADS=2)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        a = torch.randn(300, 300)
        float((a @ a).sum())  # the pool runs in the grader

        def computes():
            b = torch.randn(300, 300, dtype=torch.float64)
            return {"sum": float((b @ b).sum()), "exp": float(torch.randn(1000).exp().sum())}

        answer, why = run_phase(computes, cpu_seconds=10, wall_seconds=20)
        assert answer is not None and why == "", why
    finally:
        torch.set_num_threads(threads)
