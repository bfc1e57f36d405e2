"""An assignment as data: ``assignments/<name>/assignment.toml``.

This file is the one place that sets each test's points and visibility; the
pytest grader, the Otter checks and the release self-check all read it here.
Its keys, their types and values are the schema's (:mod:`.config_schema`,
checked by :mod:`.config_check`); what no type can say (a test that exists,
points adding up to 100, time limits the platforms honour) is checked here.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .config_check import ConfigError, convert, nearest_key
from .config_schema import AssignmentFile

if sys.version_info >= (3, 11):
    import tomllib
else:  # Gradescope's Ubuntu 22.04 image has Python 3.10
    import tomli as tomllib

ENGINE = Path(__file__).resolve().parent  # the autograder package
KIT_ROOT = ENGINE.parent


# The worker's unprivileged account (concurrent graders use kit-student-1, -2, ...); setup.sh creates it.
STUDENT_USER = "kit-student"
# The engine's folders a grading never imports (tests/unit/test_layout.py holds it): the instructor's tools and
# the release's templates. autograder.zip and the PrairieLearn package carry the grading engine without them.
INSTRUCTOR_ONLY = ("release", "cohort", "pool", "templates")


@dataclass(frozen=True)
class Assignment:
    name: str
    title: str
    module: str  # students submit <module>.py
    root: Path  # assignments/<name>
    solution: Path  # solutions/<name>/<module>.py
    points: dict[str, float]  # "hidden/test_x.py::test_y" -> points (split over parametrized cases)
    visibility: dict[str, str] = field(default_factory=dict)
    banned: tuple[str, ...] = ()
    helpers: Path | None = None
    test_timeout: float = 20.0
    run_timeout: float = 420.0
    # what a student sees at once of hidden tests' losses: off, points, categories (default) or causes
    hidden_summary: str = "categories"
    # [uncaught]: hidden tests no catalogued mistake needs to fail -> why (read by the self-check)
    uncaught: dict[str, str] = field(default_factory=dict)
    # [mutants.equivalent]: derived mutants no test can kill -> why (read by ``make mutants``)
    equivalent: dict[str, str] = field(default_factory=dict)
    # [untested_functions]: functions of the stub no test names -> how they are graded (functions.py)
    untested: dict[str, str] = field(default_factory=dict)

    @property
    def submit_file(self) -> str:
        return f"{self.module}.py"

    @property
    def trains(self) -> bool:
        """The reference uses ``torch.optim`` (seq2seq, transformer): the worker template prepares an optimiser.
        Read when a grading starts its template, once per grading."""
        return re.search(r"\boptim\b", self.solution.read_text()) is not None

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def mistakes_dir(self) -> Path:
        return self.root / "mistakes"

    @property
    def variants_dir(self) -> Path:
        return self.root / "variants"

    @property
    def graded_functions(self) -> frozenset[str]:
        """The functions and classes the tests grade (their ``pytest.mark.grades("f")``, read as text: a notebook
        upload that defines none of them is the lab notebook, ``notebook_upload``)."""
        files = sorted(self.tests_dir.rglob("test_*.py"))
        return frozenset(f for p in files for f in _GRADES.findall(p.read_text(encoding="utf-8", errors="replace")))

    @property
    def total_points(self) -> float:
        return sum(self.points.values())

    def visibility_of(self, test_key: str) -> str:
        if test_key in self.visibility:
            return self.visibility[test_key]
        return "visible" if test_key.startswith("public/") else "after_published"


def list_assignments(kit_root: Path = KIT_ROOT) -> list[str]:
    return sorted(p.parent.name for p in (kit_root / "assignments").glob("*/assignment.toml"))


def read_toml(path: Path) -> dict:
    """``path`` parsed (assignment.toml, course.toml); not valid TOML is a ConfigError naming the file."""
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None


def _test_names(path: Path) -> set[str]:
    """The top-level test functions a test file defines (read by their ``def`` lines, not imported or parsed: this
    runs at every grading; none when the file is missing)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return set()
    return set(_TOP_LEVEL_TEST.findall(text))


_GRADES = re.compile(r"""\bgrades\(\s*["'](\w+)["']""")
_TOP_LEVEL_TEST = re.compile(r"^(?:async\s+)?def\s+(test\w*)\s*\(", re.MULTILINE)


def load_assignment(name: str, kit_root: Path = KIT_ROOT) -> Assignment:
    root = kit_root / "assignments" / name
    path = root / "assignment.toml"
    if not path.is_file():
        known = ", ".join(list_assignments(kit_root)) or "none"
        raise ConfigError(f"unknown assignment {name!r} (no {path}); known assignments: {known}")
    data = read_toml(path)
    former = sorted(FORMER_KEYS.keys() & data.keys())
    if former:
        raise ConfigError(f"{path}: [{former[0]}] is no longer read: {FORMER_KEYS[former[0]]}")
    spec = convert(data, AssignmentFile, path, "assignments/README.md lists every key")
    if not spec.module.isidentifier():
        hint = f" (without .py: {spec.module.removesuffix('.py')!r})" if spec.module.endswith(".py") else ""
        raise ConfigError(f"{path}: module = {spec.module!r} must be the name students import, a Python identifier{hint}")
    points = _points(path, spec.points)
    _check_timeouts(path, spec.test_timeout, spec.run_timeout)
    for key in spec.uncaught:
        if key not in points:
            raise ConfigError(
                f"{path}: [uncaught] names {key}, which is not a test in [points]: {nearest_key(key, sorted(points))}"
            )
    return Assignment(
        name=name,
        title=spec.title,
        module=spec.module,
        root=root,
        solution=kit_root / "solutions" / name / f"{spec.module}.py",
        points=points,
        visibility=dict(spec.visibility),
        banned=tuple(spec.banned),
        helpers=root / spec.worker_helpers if spec.worker_helpers is not None else None,
        test_timeout=float(spec.test_timeout),
        run_timeout=float(spec.run_timeout),
        hidden_summary=spec.feedback.hidden_summary,
        uncaught=dict(spec.uncaught),
        equivalent=dict(spec.mutants.equivalent),
        untested=dict(spec.untested_functions),
    )


# The longest run_timeout both platforms honour: the entry points' last resort fires 90 s after it, PrairieLearn's
# package adds 30 s for the container's start and refuses more than 600 s (Gradescope's default limit is 10 min).
MAX_RUN_TIMEOUT_S = 480


def _check_timeouts(path: Path, test_timeout: float, run_timeout: float) -> None:
    """What the schema cannot say of the time limits (each is a number of seconds above 0 there)."""
    if run_timeout > MAX_RUN_TIMEOUT_S:
        raise ConfigError(
            f"{path}: run_timeout = {run_timeout:g} s is over {MAX_RUN_TIMEOUT_S} s: the grading's last resort fires 90 s "
            "after it, and PrairieLearn's package (600 s at most) and Gradescope's default 10 minutes would stop it "
            "before any results were written. Lower it, or make the suite faster."
        )
    if test_timeout > run_timeout:
        raise ConfigError(
            f"{path}: test_timeout = {test_timeout:g} s is longer than run_timeout = {run_timeout:g} s (the whole run)"
        )


def _points(path: Path, raw: dict[str, float]) -> dict[str, float]:
    """[points], the one form: a value per test key (a number > 0: the schema's), adding up to 100, each key a test
    that its file defines (a misspelt name is refused here, naming the nearest, not found missing at grading)."""
    points = {k: float(v) for k, v in raw.items()}
    tests = path.parent / "tests"
    defined_in: dict[str, set[str]] = {}  # test file -> the tests it defines, each file read once
    for key in points:
        if "::" not in key or not key.split("::")[0].startswith(("public/", "hidden/")):
            raise ConfigError(f"{path}: points key {key!r} must look like 'hidden/test_file.py::test_name'")
        file, name = key.split("::", 1)
        if file not in defined_in:
            defined_in[file] = _test_names(tests / file)
        defined = defined_in[file]
        if name not in defined:
            where = (
                f"{file} defines no {name}: {nearest_key(name, sorted(defined))}"
                if defined
                else f"there is no test file {tests / file}"
            )
            raise ConfigError(f"{path}: [points] names {key}, but {where}")
    total = sum(points.values())
    if abs(total - 100) > 1e-9:
        raise ConfigError(f"{path}: points add up to {total:g}, not 100")
    return points


# Keys of earlier kits, each with what replaced it (one form for each thing an assignment declares).
FORMER_KEYS = {
    "mistakes": "write each catalogued mistake as a file, mistakes/<id>.py (its docstring the title and explanation, "
    "CAUGHT_BY and PATCH), as the shipped assignments do",
    "functions": "give each test its points in [points] (a parametrized test's cases share them); a test declares "
    "its function with @pytest.mark.grades",
}
