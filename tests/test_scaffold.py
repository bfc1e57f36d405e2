"""`python -m autograder new <name>`: a scaffolded assignment releases on day one, self-check included.

The end-to-end test copies the kit (its git files, as a fresh clone has them) into a temporary folder,
scaffolds `toy_scale` there, fills in nothing, and runs the release with its full self-check on that
assignment alone (`release toy_scale`, the `make release` of one assignment, with an empty cache): it
must exit 0, and the student.zip's stub must raise NotImplementedError; the kit's own tests that read
every assignment (markers, catalogue, handouts, release) pass with it. The kit's own course.toml and
assignments are never touched. The fast tests check the refusals and the course entry.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
import time
import types
import zipfile
from pathlib import Path

import pytest
import torch
from conftest import KIT

from autograder.config import load_assignment
from autograder.release import scaffold
from autograder.release.markers import make_stub

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# A proof of the kit's design rather than a unit of it: run by `make proofs` (CI), kept out of `make test`'s
# four minutes.
pytestmark = pytest.mark.proof

NAME = "toy_scale"


def _copy_kit(target: Path) -> Path:
    """The kit's files as git knows them (tracked, and new files not ignored), without .venv, dist/ or caches."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=KIT, capture_output=True, check=True
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        source = KIT / rel
        if source.is_file():  # a tracked file deleted in the working tree is skipped
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / rel)
    return target


def _cli(kit: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """The CLI of the copied kit (cwd first on sys.path), with this interpreter (the kit's .venv)."""
    return subprocess.run([sys.executable, "-m", "autograder", *args], cwd=kit, capture_output=True, text=True, timeout=timeout)


def test_a_scaffolded_assignment_releases_with_its_self_check(tmp_path):
    kit = _copy_kit(tmp_path / "kit")
    course_before = (kit / "course.toml").read_text()

    others_before = {p: p.read_bytes() for p in (kit / "student_template").rglob("*") if p.is_file()}
    made = _cli(kit, "new", NAME, "--function", "scale", "--function", "shift", "--root", str(kit))
    assert made.returncode == 0, made.stdout + made.stderr
    assert (kit / "solutions" / NAME / f"{NAME}.py").is_file()
    folder = kit / "assignments" / NAME
    made_files = [p for p in folder.rglob("*") if p.is_file() and p.relative_to(folder).parts[0] != "mistakes"]
    # assignment.toml, handout, do_nothing, one public test file and a hidden test file per function (the catalogued
    # mistakes, files under mistakes/, are counted below)
    assert len(made_files) == 6, made_files
    files = sorted((kit / "assignments" / NAME / "mistakes").glob("*.py"))
    assert len(files) == 2 * len(scaffold.MISTAKES) >= 20  # the catalogue is files, the one form of the six assignments
    assert "mistakes" not in tomllib.loads((kit / "assignments" / NAME / "assignment.toml").read_text())
    # the new [[assignment]] comes last in the course's order, written before the term's rules (nothing else changes)
    course_after, before = tomllib.loads((kit / "course.toml").read_text()), tomllib.loads(course_before)
    assert course_after["assignment"][:-1] == before["assignment"] and course_after["assignment"][-1]["name"] == NAME
    assert {k: v for k, v in course_after.items() if k != "assignment"} == {k: v for k, v in before.items() if k != "assignment"}
    assert f'name = "{NAME}"' in (kit / "course.toml").read_text()
    assert (kit / "student_template" / NAME / f"{NAME}.py").is_file()
    ini = (kit / "student_template" / NAME / "pytest.ini").read_text()
    assert "    scale: the public tests of scale" in ini and "    shift: the public tests of shift" in ini
    changed = [str(p) for p, data in others_before.items() if not p.is_file() or p.read_bytes() != data]
    assert not changed, f"new changed other assignments' files: {changed}"
    for function in ("scale", "shift"):  # the student's folder selects each function's public test
        folder = kit / "student_template" / NAME
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "--collect-only", "-m", function, "-p", "no:cacheprovider"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert f"test_{function}_example" in run.stdout and run.stdout.count("::test_") == 1, run.stdout + run.stderr

    again = _cli(kit, "new", NAME, "--root", str(kit))
    assert again.returncode == 2 and "exists already" in again.stderr, again.stderr

    started = time.monotonic()
    release = _cli(kit, "release", NAME, "--out", str(tmp_path / "dist"), timeout=1800)
    seconds = time.monotonic() - started
    print(f"\nscaffold-to-release: `release {NAME}` with its self-check took {seconds:.0f} s")
    assert release.returncode == 0, f"release failed after {seconds:.0f} s:\n{release.stdout[-4000:]}\n{release.stderr[-3000:]}"
    assert "at least 10 catalogued mistakes (20)" in release.stdout

    with zipfile.ZipFile(tmp_path / "dist" / NAME / "student.zip") as zf:
        stub = zf.read(f"{NAME}/{NAME}.py").decode()
    module = types.ModuleType(NAME)
    exec(compile(stub, f"{NAME}.py", "exec"), module.__dict__)  # noqa: S102 - the stub the release built
    with pytest.raises(NotImplementedError, match="scale is not implemented yet"):
        module.scale(torch.ones(2, 3), 2.0)
    with zipfile.ZipFile(tmp_path / "dist" / NAME / "autograder.zip") as zf:
        assert f"solutions/{NAME}/{NAME}.py" in zf.namelist()

    # the kit's own tests that read every assignment still pass with the new one (make test stays green)
    kit_tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/unit/test_student_markers.py",
         "tests/unit/test_catalogue.py", "tests/unit/test_handouts.py", "tests/test_release.py",
         "-k", f"{NAME} or registers_each_graded_function"],
        cwd=kit, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert kit_tests.returncode == 0 and "passed" in kit_tests.stdout, kit_tests.stdout[-3000:]

    if shutil.which("ruff", path=str(Path(sys.executable).parent)):  # the generated code is lint-clean as written
        lint = subprocess.run(
            [sys.executable, "-m", "ruff", "check", f"solutions/{NAME}", f"assignments/{NAME}"],
            cwd=kit,
            capture_output=True,
            text=True,
        )
        assert lint.returncode == 0, lint.stdout


# -- the fast part: refusals, the course entry, the files ------------------------------------
@pytest.mark.parametrize(
    "name, why",
    [
        ("2fast", "not a valid assignment name"),
        ("Toy", "not a valid assignment name"),
        ("toy-scale", "not a valid assignment name"),
        ("class", "not a valid assignment name"),
        ("test_scale", "reserved"),
        ("autograder", "reserved"),
        ("torch", "importable module"),
        ("json", "importable module"),
        ("embeddings", "exists already"),
    ],
)
def test_names_that_cannot_be_an_assignment_are_refused(name, why):
    with pytest.raises(scaffold.ScaffoldError, match=why):
        scaffold.check_name(name, KIT)


def test_a_refused_name_writes_nothing(tmp_path):
    (tmp_path / "assignments" / "taken").mkdir(parents=True)
    (tmp_path / "course.toml").write_text('title = "C"\n')
    with pytest.raises(scaffold.ScaffoldError, match="exists already"):
        scaffold.scaffold("taken", root=tmp_path)
    with pytest.raises(scaffold.ScaffoldError, match="--function"):
        scaffold.scaffold("fresh_one", function="class", root=tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "assignments",
        "assignments/taken",
        "course.toml",
    ]
    assert (tmp_path / "course.toml").read_text() == 'title = "C"\n'


def test_the_course_entry_comes_a_week_after_the_last_deadline():
    text = '[[assignment]]\nname = "a"\nrelease = 2027-01-01\ndue = 2027-01-08\n\n[[assignment]]\nname = "b"\ndue = 2027-02-01\n'
    entry = scaffold.course_entry("toy", text)
    data = scaffold.tomllib.loads(text + entry)["assignment"][-1]
    assert data["name"] == "toy" and data["release"] == dt.date(2027, 2, 1) and data["due"] == dt.date(2027, 2, 8)
    assert "release" not in scaffold.tomllib.loads(scaffold.course_entry("toy", 'title = "undated"\n'))["assignment"][0]


def test_the_files_are_consistent_for_another_function_name(tmp_path):
    """--function renames the toy everywhere: the points' keys, the mistakes' CAUGHT_BY and PATCH, the stub."""
    files = scaffold.assignment_files("toy", function="double_it")
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assignment = load_assignment("toy", tmp_path)
    assert assignment.total_points == 100
    assert set(assignment.points) == {
        "public/test_toy_public.py::test_double_it_example",
        "hidden/test_double_it.py::test_matches_reference",
    }
    assert "def double_it(x, factor):" in make_stub(files["solutions/toy/toy.py"])
    from autograder.catalogue import read_catalogue, submission_source

    mistakes = read_catalogue(assignment, "mistake")
    assert len(mistakes) >= 10 and all(m.caught_by == ["hidden/test_double_it.py::test_matches_reference"] for m in mistakes)
    x = torch.randn(2, 3, dtype=torch.float64)
    for entry in mistakes:  # every PATCH applies, and changes the toy's result (a 2-D float64 x, a negative fraction)
        module: dict = {}
        exec(compile(submission_source(assignment, entry), entry.name, "exec"), module)  # noqa: S102 - our own catalogue
        out = module["double_it"](x, -1.5)
        assert out.shape != x.shape or out.dtype != x.dtype or not torch.allclose(out, x * -1.5), entry.name


def test_two_functions_get_their_own_tests_points_mistakes_and_handout_sections(tmp_path):
    files = scaffold.assignment_files("toy", ["scale", "shift"])
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assignment = load_assignment("toy", tmp_path)
    assert assignment.total_points == 100
    assert {k.split("::")[0] for k in assignment.points if k.startswith("hidden/")} == {
        "hidden/test_scale.py",
        "hidden/test_shift.py",
    }
    handout = files["assignments/toy/handout.md"]
    assert "### `scale`" in handout and "### `shift`" in handout
    from autograder.catalogue import read_catalogue

    mistakes = read_catalogue(assignment, "mistake")
    assert len(mistakes) == 20 and {m.caught_by[0].split("::")[0] for m in mistakes} == {
        "hidden/test_scale.py",
        "hidden/test_shift.py",
    }
    with pytest.raises(scaffold.ScaffoldError, match="each function once"):
        scaffold.check_functions(["scale", "scale"], "toy")
