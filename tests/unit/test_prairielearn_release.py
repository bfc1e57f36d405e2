"""What the release writes for PrairieLearn (dist/<a>/prairielearn/), and course.toml's `platforms` (no grading)."""

import json
import re
import subprocess
import sys
import uuid

import pytest

from autograder.config import KIT_ROOT, ConfigError, list_assignments, load_assignment
from autograder.platforms.prairielearn import PL_MAX_TIMEOUT_S, grading_timeout
from autograder.release import prairielearn_sim
from autograder.release.course import PLATFORMS, load_course
from autograder.release.markers import make_stub
from autograder.release.prairielearn_question import (
    ENTRYPOINT,
    KIT_VENV,
    image_name,
    package_name,
    prairielearn_files,
    requirement_pins,
    torch_index_url,
    write_tree,
)
from autograder.release.proofs import Evidence, Report
from autograder.release.student_folder import TEMPLATES
from autograder.release.zips import autograder_files, torch_version

KIT = KIT_ROOT
# PrairieLearn's question schema (infoQuestion, strict): the keys the kit may write
QUESTION_KEYS = {"uuid", "type", "title", "topic", "tags", "singleVariant", "gradingMethod", "externalGradingOptions"}
GRADING_KEYS = {"enabled", "image", "entrypoint", "serverFilesCourse", "timeout", "enableNetworking", "environment"}


def _files(name: str) -> dict[str, bytes]:
    assignment = load_assignment(name, KIT)
    return prairielearn_files(assignment, make_stub(assignment.solution.read_text()), "Attention and Transformers")


@pytest.mark.parametrize("name", list_assignments(KIT))
def test_info_json_is_an_externally_graded_question_within_prairielearns_limits(name):
    assignment = load_assignment(name, KIT)
    files = _files(name)
    info = json.loads(files[f"questions/{name}/info.json"])
    assert set(info) <= QUESTION_KEYS and info["type"] == "v3" and info["gradingMethod"] == "External"
    uuid.UUID(info["uuid"])  # a UUID, the same at every release
    assert info["uuid"] == json.loads(_files(name)[f"questions/{name}/info.json"])["uuid"]
    options = info["externalGradingOptions"]
    assert set(options) <= GRADING_KEYS and options["enabled"] is True
    assert options["image"] == image_name() == f"attention-kit/grader:{torch_version()}"
    assert isinstance(options["timeout"], int) and assignment.run_timeout < options["timeout"] <= PL_MAX_TIMEOUT_S
    assert options["timeout"] == grading_timeout(assignment)
    package = package_name(assignment)
    assert options["serverFilesCourse"] == [f"{package}/"]
    assert options["entrypoint"] == f"/grade/serverFilesCourse/{package}/{ENTRYPOINT}"
    assert f"serverFilesCourse/{package}/{ENTRYPOINT}" in files


def test_question_html_uploads_the_module_and_shows_the_graders_results():
    assignment = load_assignment("attention", KIT)
    page = _files("attention")["questions/attention/question.html"].decode()
    active = re.sub(r"\{\{!.*?\}\}", "", page, flags=re.S)  # mustache comments are not rendered
    assert '<pl-file-upload file-names="attention.py"></pl-file-upload>' in active
    assert "<pl-question-panel>" in active and "<pl-submission-panel>" in active
    assert "<pl-external-grader-results></pl-external-grader-results>" in active
    assert "pl-file-editor" not in active, "the editor is the alternative, in a comment: never both"
    assert '<pl-file-editor file-name="attention.py"' in page and 'source-file-name="initial_code.py"' in page
    assert _files("attention")["questions/attention/initial_code.py"].decode() == make_stub(assignment.solution.read_text())


def test_the_question_tests_are_the_suite_and_the_package_is_autograder_zips_files():
    assignment = load_assignment("attention", KIT)
    files = _files("attention")
    tests = {k.split("/tests/", 1)[1] for k in files if k.startswith("questions/attention/tests/")}
    assert {
        p.relative_to(assignment.tests_dir).as_posix() for p in assignment.tests_dir.rglob("*.py") if "__pycache__" not in p.parts
    } == tests
    assert any(t.startswith("hidden/") for t in tests)
    prefix = f"serverFilesCourse/{package_name(assignment)}/"
    package = {k[len(prefix) :]: v for k, v in files.items() if k.startswith(prefix)}
    expected = {k: v for k, v in autograder_files(assignment).items() if k not in ("setup.sh", "run_autograder")}
    assert {k: v for k, v in package.items() if k != ENTRYPOINT} == expected
    assert not [k for k in files if not k.startswith(("questions/attention/", prefix)) and k != "Dockerfile"]


def test_the_dockerfile_pins_everything_grading_needs():
    docker = _files("attention")["Dockerfile"].decode()
    setup = (TEMPLATES / "setup.sh").read_text()
    assert f'TORCH_INDEX_URL="${{TORCH_INDEX_URL:-{torch_index_url()}}}"' in setup
    assert f"ARG TORCH_INDEX_URL={torch_index_url()}\n" in docker
    assert f'--index-url "$TORCH_INDEX_URL" "torch=={torch_version()}"' in docker
    pins = requirement_pins()
    assert {p.split("==")[0] for p in pins} >= {"numpy", "einops", "pytest", "psutil"}
    for pin in pins:
        assert pin in docker, f"{pin} is in requirements.txt but not pinned in the Dockerfile"
    assert "python3-venv" in docker and "useradd --system --no-create-home --shell /usr/sbin/nologin kit-student" in docker
    assert f"ENV KIT_VENV={KIT_VENV}\n" in docker and not re.search(r"@[A-Z_]+@", docker), "a placeholder is left"


def test_the_entrypoint_leaves_valid_results_when_the_grader_crashes_at_once(tmp_path):
    """An engine that dies before writing anything (a broken image): run_grader.sh still writes a
    results file PrairieLearn reads (exit 0), not gradable, so the student loses no attempt."""
    tree = write_tree(_files("attention"), tmp_path / "tree")
    root = tmp_path / "grade"
    entrypoint = prairielearn_sim.lay_out(tree, "attention", {"attention.py": b"x = 1\n"}, root)
    (entrypoint.parent / "autograder" / "__main__.py").write_text("import os\nos._exit(9)\n")
    proc = prairielearn_sim.run(root, entrypoint, timeout=60)
    assert proc.returncode == 0, proc.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["gradable"] is False and results["tests"] == [] and "could not start" in results["format_errors"][0]


def _course_file(tmp_path, line: str):
    """The kit's course.toml with its `platforms` line replaced by ``line``."""
    text = re.sub(r"(?m)^platforms = .*\n", "", (KIT / "course.toml").read_text())
    path = tmp_path / "course.toml"
    path.write_text(text.replace('timezone = "UTC"\n', f'timezone = "UTC"\n{line}\n', 1))
    return path


def _course(tmp_path, line: str):
    return load_course(KIT, _course_file(tmp_path, line))


def test_course_toml_chooses_the_platforms(tmp_path):
    assert load_course(KIT).platforms == PLATFORMS == ("gradescope", "prairielearn")
    assert _course(tmp_path, "").platforms == PLATFORMS
    assert _course(tmp_path, 'platforms = ["prairielearn"]').platforms == ("prairielearn",)
    assert _course(tmp_path, 'platforms = ["prairielearn", "gradescope"]').platforms == PLATFORMS
    for bad in ('platforms = ["moodle"]', "platforms = []", 'platforms = "gradescope"'):
        with pytest.raises(ConfigError, match="platforms"):
            _course(tmp_path, bad)


def test_the_release_writes_only_the_chosen_platforms(tmp_path):
    course = _course_file(tmp_path, 'platforms = ["prairielearn"]')
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "release",
            "attention",
            "--no-check",
            "--course",
            str(course),
            "--out",
            str(tmp_path / "dist"),
        ],
        cwd=KIT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    written = {p.name for p in (tmp_path / "dist" / "attention").iterdir()}
    assert written == {"student.zip", "prairielearn"}, written
    assert (tmp_path / "dist" / "attention" / "prairielearn" / "questions" / "attention" / "info.json").is_file()


def _staged(tmp_path, name: str = "attention"):
    """A release's staging folder for ``name``: autograder.zip and the prairielearn/ tree, as the release writes them."""
    from autograder.release.zips import make_zip

    assignment = load_assignment(name, KIT)
    (tmp_path / "autograder.zip").write_bytes(make_zip(autograder_files(assignment)))
    write_tree(_files(name), tmp_path / "prairielearn")
    return assignment


def _prove(assignment, staged) -> Report:
    from autograder.release.prairielearn_proofs import prairielearn_question

    report = Report(assignment.name)
    prairielearn_question(Evidence(assignment, staged=staged), report)
    return report


def test_the_self_check_refuses_a_prairielearn_question_that_grades_wrong(tmp_path, monkeypatch):
    """The registered proof, with the simulated grading replaced: the tree the release writes passes; a stub
    scoring 0.5 is a refusal; a release that does not build PrairieLearn has nothing to prove."""
    assignment = _staged(tmp_path)
    scores = iter([0.0, 0.5])
    monkeypatch.setattr(prairielearn_sim, "simulate", lambda *args, **kwargs: {"gradable": True, "score": next(scores)})
    assert _prove(assignment, tmp_path).ok
    report = _prove(assignment, tmp_path)
    assert len(report.problems) == 1 and "untouched stub to 0.0" in report.problems[0]
    report = _prove(assignment, tmp_path / "no-prairielearn")
    assert report.lines == [] and report.ok


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ("questions/attention/tests/hidden/test_softmax.py", "question tests/hidden/test_softmax.py differs"),
        ("serverFilesCourse/attention_kit_attention/autograder/checks.py", "autograder/checks.py differs"),
        ("serverFilesCourse/attention_kit_attention/solutions/attention/attention.py", "attention.py differs"),
        ("serverFilesCourse/attention_kit_attention/autograder/extra.py", "autograder/extra.py not in autograder.zip"),
        ("info.json timeout", "timeout 30 s"),
    ],
)
def test_a_prairielearn_tree_that_is_not_autograder_zips_grading_is_refused(tmp_path, monkeypatch, edit, said):
    """The reference is not graded again in the PrairieLearn tree: what stands for that grading is that the tree
    grades with autograder.zip's files and time. Attack each: a hidden test, an engine file and the reference
    edited in the tree, a file added to the package, a shorter timeout (the stub, which fails at once, would
    never meet it) -- each is a refusal that names the file, even with the stub's run at 0.0."""
    assignment = _staged(tmp_path)
    monkeypatch.setattr(prairielearn_sim, "simulate", lambda *args, **kwargs: {"gradable": True, "score": 0.0})
    tree = tmp_path / "prairielearn"
    if edit == "info.json timeout":
        info_path = tree / "questions" / "attention" / "info.json"
        info = json.loads(info_path.read_text())
        info["externalGradingOptions"]["timeout"] = 30
        info_path.write_text(json.dumps(info))
    else:
        target = tree / edit
        assert target.parent.is_dir(), edit
        target.write_text((target.read_text() if target.is_file() else "") + "\n# edited in the tree\n")
    report = _prove(assignment, tmp_path)
    assert not report.ok and any(said in problem for problem in report.problems), report.problems
