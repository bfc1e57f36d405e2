"""One grading environment: student code runs against exactly the packages the platform installs, on every path.

The kit's venv holds matplotlib, copydetect, jupyter... and grading must not: a file that imports one of them
grades the same through `grade`, `grade-all` and both platforms' simulations (and, in the proofs, in a venv made
the way setup.sh makes it), because every path starts its workers with the grading environment
(autograder/release/grading_env.py) and applies one import rule (autograder/grading/imports.py).
"""

import json
import os
import subprocess
import sys

import pytest
from conftest import KIT, reference_source, run_cli

from autograder.grading.imports import leave_out_foreign_imports
from autograder.release.grading_env import GRADING_PYTHON, closure, distributions, pinned_requirements

# An unused top-level import (left out, with a note: costs nothing) and an import inside causal_mask (runs
# when called, against the grading environment, which has no matplotlib: causal_mask's tests fail).
IMPORT_CASE = (
    reference_source("attention")
    + "\nimport matplotlib.pyplot as plt\n\n_causal = causal_mask\n\n\ndef causal_mask(t, device=None):\n"
    "    import matplotlib  # noqa: F401\n\n    return _causal(t, device)\n"
)
NOTE = "imports `matplotlib.pyplot` (line"


def test_the_grading_environment_holds_the_pins_and_nothing_else():
    python = os.environ[GRADING_PYTHON]
    assert python.startswith(str(KIT / ".grading-env")), python
    held = distributions(python)
    expected = {name: dist.version for name, dist in closure(pinned_requirements(KIT / "requirements.txt")).items()}
    assert held == expected
    assert "matplotlib" not in held and "copydetect" not in held and "attention-kit" not in held
    kit_venv = distributions(sys.executable)
    assert "matplotlib" in kit_venv, "the kit's venv holds what grading must not see (else this test proves nothing)"
    probe = subprocess.run([python, "-I", "-c", "import matplotlib"], capture_output=True, text=True)
    assert probe.returncode != 0 and "No module named 'matplotlib'" in probe.stderr


def test_requirements_pin_every_package_grading_installs():
    """setup.sh installs requirements.txt; a package it pulls in unpinned would be whatever is newest on the day
    the platform builds its image, and the grading environment could not be the platform's."""
    requirements = pinned_requirements(KIT / "requirements.txt")
    exact = {r.name.lower().replace("_", "-") for r in requirements if str(r.specifier).startswith("==")}
    needed = set(closure(requirements))
    assert needed <= exact, f"pin these in requirements.txt too: {sorted(needed - exact)}"


def test_the_import_rule_keeps_line_numbers_and_names_what_it_left_out():
    source = "import torch\nimport matplotlib.pyplot as plt\nfrom tqdm import (tqdm,\n  trange)\nimport os; import scipy\n"
    kept, note = leave_out_foreign_imports(source, "attention.py")
    assert kept.count("\n") == source.count("\n") and "matplotlib" not in kept and "import torch" in kept
    assert "import os; pass" in kept
    for said in ("`matplotlib.pyplot` (line 2, binding `plt`)", "`tqdm` (line 3", "`scipy` (line 5"):
        assert said in note
    guarded = "try:\n    import pandas\nexcept ImportError:\n    pandas = None\n"
    assert leave_out_foreign_imports(guarded, "attention.py") == (guarded, ""), "a guarded import is the student's own rule"


def _text(document: dict) -> str:
    return json.dumps(document)


@pytest.mark.proof  # four whole gradings, one per path (about 30 s): `make proofs`
def test_one_score_and_the_same_words_on_every_path(tmp_path):
    upload = tmp_path / "attention.py"
    upload.write_text(IMPORT_CASE)
    scores = {}

    results = tmp_path / "grade.json"
    proc = run_cli("grade", "attention", str(upload), "--results", str(results))
    assert proc.returncode == 0, proc.stderr[-2000:]
    document = json.loads(results.read_text())
    scores["grade"] = document["score"]
    assert NOTE in _text(document)

    export = tmp_path / "export"
    (export / "submission_1").mkdir(parents=True)
    (export / "submission_1" / "attention.py").write_text(IMPORT_CASE)
    (export / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n  - :name: Ada Lovelace\n    :sid: '111'\n    :email: ada@example.edu\n"
        "  :created_at: 2026-11-01 10:00:00.000000000 -08:00\n"
    )
    out = tmp_path / "out"
    proc = run_cli("grade-all", "attention", str(export), "--out", str(out), "--jobs", "1")
    assert proc.returncode == 0, proc.stderr[-2000:]
    gradebook = (out / "gradebook.csv").read_text(encoding="utf-8-sig").splitlines()
    header, row = gradebook[0].split(","), gradebook[1].split(",")
    scores["grade-all"] = float(row[header.index("total")])
    assert any(NOTE in p.read_text(errors="replace") for p in out.rglob("*.json")), "grade-all's record keeps the note"

    for platform in ("gradescope", "prairielearn"):
        results = tmp_path / f"{platform}.json"
        proc = run_cli("simulate", platform, "attention", str(upload), "--results", str(results))
        assert proc.returncode == 0, proc.stderr[-2000:] + proc.stdout[-2000:]
        document = json.loads(results.read_text())
        scores[platform] = document["score"] if platform == "gradescope" else round(100 * document["score"], 2)
        assert NOTE in _text(document), platform

    assert len(set(scores.values())) == 1, scores
    assert 0 < scores["grade"] < 100, "the unused import costs nothing; the import causal_mask runs costs its tests"


def test_simulate_refuses_what_it_cannot_grade_with_what_to_do(tmp_path):
    proc = run_cli("simulate", "gradescope", "attention", str(tmp_path / "missing.py"))
    assert proc.returncode == 2 and "does not exist; pass the student's file, folder or zip" in proc.stderr
    proc = run_cli("simulate", "gradescope", "atention", str(tmp_path))
    assert proc.returncode == 2 and "attention" in proc.stderr


@pytest.mark.proof
def test_a_venv_made_as_setup_sh_makes_it_grades_the_same(tmp_path):
    """setup.sh's own lines (python3 -m venv; pip install -r requirements.txt, torch from this machine's pip: the
    CPU index cannot be reached here), then the zip's run_autograder with that venv's python3 first on PATH."""
    from autograder.release import gradescope_sim

    venv = tmp_path / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True)
    pip = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "-r", str(KIT / "requirements.txt")],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert pip.returncode == 0, pip.stderr[-2000:]
    made = {k: v for k, v in distributions(str(venv / "bin" / "python")).items() if k != "pip"}
    assert made == distributions(os.environ[GRADING_PYTHON]), "the grading environment is what setup.sh installs"
    root = tmp_path / "gs"
    gradescope_sim.lay_out(KIT / "dist" / "attention" / "autograder.zip", {"attention.py": IMPORT_CASE.encode()}, root)
    env = gradescope_sim.environment(root)
    env["PATH"] = str(venv / "bin") + os.pathsep + env["PATH"]
    proc = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True, text=True, timeout=900)
    document = json.loads((root / "results" / "results.json").read_text())
    upload = tmp_path / "attention.py"
    upload.write_text(IMPORT_CASE)
    results = tmp_path / "grade.json"
    assert run_cli("grade", "attention", str(upload), "--results", str(results)).returncode == 0
    assert document["score"] == json.loads(results.read_text())["score"], proc.stderr[-2000:]
    assert NOTE in _text(document)


def test_the_students_pytest_applies_the_same_rule_whatever_their_venv_holds(tmp_path):
    """The kit's venv has matplotlib, as a student's lab venv does: the public tests still see the import left
    out, say so in grading's words, and fail where the name is used."""
    import shutil

    folder = tmp_path / "attention"
    shutil.copytree(KIT / "student_template" / "attention", folder)
    (folder / "attention.py").write_text(
        reference_source("attention") + "\nimport matplotlib.pyplot as plt\n\n_sm = softmax\n\n\ndef softmax(x, dim=-1):\n"
        "    plt.figure\n    return _sm(x, dim)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert NOTE in proc.stdout, proc.stdout[-3000:]
    assert "NameError: name 'plt' is not defined" in proc.stdout
    failed = {line.split("::")[-1].split(" ")[0] for line in proc.stdout.splitlines() if line.startswith("FAILED")}
    assert "test_softmax_course_example" in failed and "test_causal_mask" not in " ".join(failed), failed
