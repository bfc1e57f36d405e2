"""Handouts as students get them: set-up lines, pins, optional hints, numbers from the reference."""

import pytest

from autograder.config import KIT_ROOT, list_assignments, load_assignment
from autograder.release.handout_numbers import PLACEHOLDER, is_stale, runs_file
from autograder.release.student_folder import handout_text, student_pins

NAMES = [n for n in list_assignments(KIT_ROOT) if (KIT_ROOT / "assignments" / n / "handout.md").is_file()]


def test_student_requirements_pin_what_grading_uses():
    grading = {}
    for line in (KIT_ROOT / "requirements.txt").read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            grading[name.strip()] = version.split(";")[0].strip()
    pins = student_pins()
    for package in ("torch", "numpy", "pytest"):
        assert pins[package] == grading[package], (
            f"requirements-student.txt pins {package} {pins[package]}, grading {grading[package]}"
        )
    for package in ("otter-grader", "matplotlib", "jupyterlab", "einops"):
        assert package in pins
    # torch's CPU index is in the handout's Linux lines, never in the file: where it is unreachable,
    # pip would retry it for every package
    options = [line for line in (KIT_ROOT / "requirements-student.txt").read_text().splitlines() if line.startswith("-")]
    assert not options, options


@pytest.mark.parametrize("name", NAMES)
def test_every_handout_has_the_set_up_lines_and_no_unfilled_placeholder(name):
    text = handout_text(load_assignment(name, KIT_ROOT))
    for platform in ("**Linux**", "**macOS**", "**Windows**", "**Google Colab**"):
        assert platform in text
    assert "python -m pip install -r requirements.txt" in text
    assert "python -m pip install -r requirements-lab.txt" in text
    assert '--index-url "${TORCH_INDEX_URL:-https://download.pytorch.org/whl/cpu}"' in text
    assert "pip install torch pytest" not in text
    assert not PLACEHOLDER.search(text) and "@PIN:" not in text and "<!--" not in text


@pytest.mark.parametrize("name", NAMES)
def test_code_level_hints_ship_only_when_the_instructor_chooses(name):
    assignment = load_assignment(name, KIT_ROOT)
    if "<!-- BEGIN HINTS -->" not in (assignment.root / "handout.md").read_text():
        pytest.skip(f"{name} has no optional hints section")
    assert "Code-level hints" not in handout_text(assignment)
    assert "Code-level hints" in handout_text(assignment, hints=True)


@pytest.mark.parametrize("name", ["attention", "multihead", "transformer"])
def test_the_main_text_gives_no_code_level_answers(name):
    text = handout_text(load_assignment(name, KIT_ROOT))
    for answer in ("reshape(B, T, h, d_h)", "tokens[:, :-1]", "triu(diagonal=1)", "masked_fill(mask", "zero_grad()"):
        assert answer not in text, f"{name}'s main text gives away {answer!r}: move it to the hints section"


@pytest.mark.parametrize("name", [n for n in NAMES if runs_file(load_assignment(n, KIT_ROOT))])
def test_quoted_numbers_were_generated_from_the_current_reference(name):
    assert not is_stale(load_assignment(name, KIT_ROOT)), (
        f"assignments/{name}/numbers.json is stale: run `python -m autograder.release.handout_numbers {name}` (or make release)"
    )


@pytest.mark.parametrize("name", [n for n in NAMES if (KIT_ROOT / "assignments" / n / "notebook.py").is_file()])
def test_each_lab_notebook_has_one_title(name):
    import nbformat

    from autograder.release.notebooks import build_notebook

    nb = nbformat.reads(build_notebook(load_assignment(name, KIT_ROOT)), as_version=4)
    titles = [c.source.splitlines()[0] for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("# ")]
    assert len(titles) == 1, titles
    assert nb.cells[0].source.startswith("# ") and "this notebook imports it" in nb.cells[1].source


def test_the_colab_cell_run_again_keeps_the_students_edited_file(tmp_path):
    """The Colab cell's unzip, as the handout writes it, run a second time (after a restart, as the handout
    invites) keeps the student's edited file instead of putting the stub back."""
    import hashlib
    import re
    import shutil
    import subprocess
    import zipfile

    if shutil.which("unzip") is None:
        pytest.skip("no unzip on this machine")
    text = handout_text(load_assignment("attention", KIT_ROOT))
    line = next(ln for ln in text.splitlines() if ln.startswith("!unzip"))
    assert " -o " not in line, "the Colab line must never overwrite: " + line
    archive = tmp_path / "student.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("attention/attention.py", "# the stub\n")
    command = re.sub(r"/content/student\.zip", str(archive), line[1:]).replace("-d /content", f"-d {tmp_path}")
    subprocess.run(command, shell=True, check=True)
    edited = tmp_path / "attention" / "attention.py"
    edited.write_text("# the student's work\n")
    before = hashlib.md5(edited.read_bytes()).hexdigest()
    subprocess.run(command, shell=True, check=True)  # the cell run again
    assert hashlib.md5(edited.read_bytes()).hexdigest() == before


def test_the_handout_says_one_environment_serves_every_assignment():
    text = handout_text(load_assignment("attention", KIT_ROOT))
    assert "one environment serves them all" in " ".join(text.split())
