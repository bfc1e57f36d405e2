"""Build a release: student_template/<a>/ and dist/<a>/{student,autograder}.zip.

A release is a pure function of the sources (solutions/, assignments/,
autograder/): stubs are generated, never edited; zips are byte-identical
from the same sources (fixed timestamps, order and permissions). Nothing is
written to dist/ unless the self-check passes (see :mod:`.selfcheck`).
"""

from __future__ import annotations

import ast
import datetime as dt
import io
import re
import shutil
import sys
import tempfile
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .config import KIT_ROOT, STUDENT_USER, Assignment, ConfigError, list_assignments, load_assignment
from .markers import BEGIN, END, MarkerError, _enclosing_names, make_stub

if TYPE_CHECKING:
    from .course import Course, CourseEntry

TEMPLATES = Path(__file__).parent / "templates"
ZIP_DATE = (1980, 1, 1, 0, 0, 0)
ENGINE_EXCLUDE = {"__pycache__"}
OTTER_TORCH_INDEX_URL = "https://download.pytorch.org/whl/cpu"


def torch_version() -> str:
    for line in (KIT_ROOT / "requirements.txt").read_text().splitlines():
        if line.startswith("torch=="):
            return line.split("==", 1)[1].strip()
    raise ConfigError("requirements.txt does not pin torch (torch==X.Y.Z)")


# -- the student's folder ---------------------------------------------------------
HINTS = re.compile(r"\n?<!-- BEGIN HINTS -->.*?<!-- END HINTS -->\n?", re.DOTALL)
STUDENT_REQUIREMENTS = "requirements-student.txt"
STUDENT_LAB_REQUIREMENTS = "requirements-student-lab.txt"  # the student's requirements-lab.txt (notebook, otter check)


def handout_text(assignment: Assignment, hints: bool = False, refresh_numbers: bool = False, dates: str = "") -> str:
    """The student's README.md: the handout with the set-up section, pins and measured numbers.

    * ``dates`` (the course's release and due dates, :func:`.course.dates_line`) is the line
      under the title;
    * ``<!-- SETUP -->`` becomes ``templates/student_setup.md`` (install lines per platform,
      the same in every assignment); ``@PIN:package@`` the version in requirements-student.txt;
    * the optional code-level hints between ``<!-- BEGIN HINTS -->`` and ``<!-- END HINTS -->``
      are kept only when the course file says ``hints = true`` for this assignment; the two
      markers stay (invisible when rendered) so that the release's check for solution code
      knows which lines the instructor chose to give (:func:`solution_code_check`);
    * ``{{name}}`` is a number measured on the reference (:mod:`.handout_numbers`).
    """
    handout = assignment.root / "handout.md"
    if not handout.is_file():
        raise ConfigError(f"{assignment.name}: the handout {handout} is missing")
    text = handout.read_text()
    if not hints:
        text = HINTS.sub("\n", text)
    if dates:
        title, _, rest = text.partition("\n")
        text = f"{title}\n\n{dates}\n\n{rest.lstrip(chr(10))}" if title.startswith("#") else f"{dates}\n\n{text}"
    setup = (TEMPLATES / "student_setup.md").read_text().rstrip("\n")
    if "<!-- SETUP -->" not in text:
        text = text.rstrip("\n") + "\n\n<!-- SETUP -->\n"
    from .notebooks import public_tests_by_function

    first = next(iter(public_tests_by_function(assignment)), assignment.module)
    setup = setup.replace("@NAME@", assignment.name).replace("@MODULE@", assignment.module).replace("@FIRST@", first)
    text = fill_pins(text.replace("<!-- SETUP -->", setup))
    from .handout_numbers import fill_numbers

    return fill_numbers(assignment, text, refresh=refresh_numbers)


def student_pins() -> dict[str, str]:
    """{package: version} from requirements-student.txt and requirements-student-lab.txt."""
    pins = {}
    lines = (KIT_ROOT / STUDENT_REQUIREMENTS).read_text().splitlines()
    lines += (KIT_ROOT / STUDENT_LAB_REQUIREMENTS).read_text().splitlines()
    for line in lines:
        if "==" in line and not line.lstrip().startswith(("#", "-")):
            name, version = line.split("==", 1)
            pins[name.strip().lower()] = version.split(";")[0].strip()
    return pins


def fill_pins(text: str) -> str:
    pins = student_pins()

    def pin(match: re.Match) -> str:
        if match.group(1).lower() not in pins:
            raise ConfigError(f"the text quotes @PIN:{match.group(1)}@, which {STUDENT_REQUIREMENTS} does not pin")
        return pins[match.group(1).lower()]

    return re.sub(r"@PIN:([A-Za-z0-9_.-]+)@", pin, text)


def ship_reference(stub: str, solution: str, names: set[str] | frozenset[str]) -> str:
    """The stub with the reference code of the top-level functions/classes ``names`` put back.

    Used only for an instructor's dated choice in course.toml (``[[assignment.ships]]``):
    e.g. a later release may contain an earlier assignment's function once its deadline passed.
    """
    if not names:
        return stub
    solution_tree, stub_tree = ast.parse(solution), ast.parse(stub)
    solution_lines, stub_lines = solution.splitlines(), stub.splitlines()
    found = {n.name: n for n in solution_tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    missing = set(names) - set(found)
    if missing:
        raise ConfigError(f"course.toml ships {', '.join(sorted(missing))}, which the reference does not define")
    targets = [n for n in stub_tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in names]
    for node in sorted(targets, key=lambda n: -n.lineno):
        ref = found[node.name]
        first = min([ref.lineno, *(d.lineno for d in ref.decorator_list)])
        code = [line for line in solution_lines[first - 1 : ref.end_lineno] if not MARKER_LINE.match(line)]
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        stub_lines[start - 1 : node.end_lineno] = code
    return "\n".join(stub_lines) + "\n"


MARKER_LINE = re.compile(r"^\s*# (BEGIN|END) (SOLUTION|HIDDEN)\s*$")


def student_files(
    assignment: Assignment,
    shipped: frozenset[str] = frozenset(),
    hints: bool | None = None,
    refresh_numbers: bool = False,
    entry: CourseEntry | None = None,
) -> dict[str, bytes]:
    """Every file of the student's folder, by relative path (the stub generated here).

    ``entry``: the assignment in the course (default: read from the kit's course.toml), whose
    dates the handout states; ``shipped``: top-level names whose reference code the course chose
    to ship (dated, in course.toml); ``hints``: keep the handout's optional code-level hints
    (default: as the course entry says).
    """
    if not assignment.solution.is_file():
        raise ConfigError(f"{assignment.name}: the reference solution {assignment.solution} is missing")
    solution = assignment.solution.read_text()
    try:
        stub = make_stub(solution, str(assignment.solution))
    except MarkerError as exc:
        raise ConfigError(str(exc)) from None
    if entry is None:
        from .course import load_course

        entry = load_course(_kit_root(assignment)).entry(assignment.name)
    from .course import dates_line

    hints = entry.hints if hints is None else hints
    stub = ship_reference(stub, solution, shipped)
    files: dict[str, bytes] = {assignment.submit_file: stub.encode()}
    files["README.md"] = handout_text(assignment, hints, refresh_numbers, dates_line(entry)).encode()
    files["requirements.txt"] = (KIT_ROOT / STUDENT_REQUIREMENTS).read_bytes()
    files["requirements-lab.txt"] = (KIT_ROOT / STUDENT_LAB_REQUIREMENTS).read_bytes()
    conftest = (TEMPLATES / "student_conftest.py").read_text().replace("@MODULE@", assignment.module)
    files["conftest.py"] = conftest.replace('"@BANNED@"', repr(list(assignment.banned))).encode()
    files["autograder/banned.py"] = (Path(__file__).parent / "banned.py").read_bytes()  # local banned-name scan
    files["pytest.ini"] = (TEMPLATES / "student_pytest.ini").read_bytes()
    files["autograder/__init__.py"] = b'"""Only the checks the public tests use; the real grader is not shipped."""\n'
    files["autograder/checks.py"] = (Path(__file__).parent / "checks.py").read_bytes()
    public = assignment.tests_dir / "public"
    for test in sorted(public.glob("*.py")):
        files[f"public_tests/{test.name}"] = test.read_bytes()
    from .notebooks import build_notebook, otter_test_files

    files.update(otter_test_files(assignment))
    if (assignment.root / "notebook.py").is_file():
        files[f"{assignment.name}_lab.ipynb"] = build_notebook(assignment, refresh_numbers).encode()
    return files


def _kit_root(assignment: Assignment) -> Path:
    """The kit an assignment belongs to (assignments/<name>/ lies in it)."""
    return assignment.root.parent.parent


def write_student_template(assignment: Assignment, kit_root: Path = KIT_ROOT) -> Path:
    """Regenerate student_template/<a>/ from the sources and the kit's course.toml (it is committed,
    never hand-edited)."""
    target = kit_root / "student_template" / assignment.name
    files = student_files(assignment)
    # Only what changed is rewritten (atomically) and only what is gone is removed, so that a
    # regeneration that changes nothing touches nothing (tests may be reading the folder).
    for rel, data in files.items():
        path = target / rel
        if path.is_file() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_bytes(data)
        temporary.replace(path)
    if target.is_dir():
        for path in sorted(target.rglob("*"), reverse=True):
            rel = path.relative_to(target).as_posix()
            if path.is_file() and rel not in files and "__pycache__" not in path.parts:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    return target


# -- no solution code in the student's folder -------------------------------------
HINT_SECTION = re.compile(r"<!-- BEGIN HINTS -->(.*?)<!-- END HINTS -->", re.DOTALL)
DISTINCTIVE = 25  # a reference line longer than this (stripped) is the reference's own, not a common idiom
HINT_RUN = 3  # this many distinctive reference lines in a row, quoted by the hints, are a block of the answer


@dataclass(frozen=True)
class SolutionLine:
    """One line of the reference's SOLUTION/HIDDEN code."""

    text: str  # stripped, as the release compares it everywhere but in the hints
    code: str  # without a trailing comment, as a hint quotes it
    function: str  # qualified name of the function it sits in ("module" outside any)

    @property
    def distinctive(self) -> bool:
        """Long enough to be the reference's own line (comments included, as compared outside the hints)."""
        return len(self.text) > DISTINCTIVE and not self.text.startswith(("#", '"""', "def ", "class "))

    @property
    def substantive(self) -> bool:
        """Its code alone is long enough to be the reference's own (as compared inside the hints)."""
        return len(self.code) > DISTINCTIVE and not self.code.startswith(('"""', "def ", "class "))


def _code_part(line: str) -> str:
    text = line.strip()
    for i, char in enumerate(text):
        if char == "#" and text[:i].count('"') % 2 == 0 and text[:i].count("'") % 2 == 0:
            return text[:i].rstrip()
    return text


def solution_lines(assignment: Assignment) -> list[SolutionLine]:
    """Every non-blank line between the reference's BEGIN and END markers, with its function."""
    source = assignment.solution.read_text()
    names = _enclosing_names(source)
    lines, inside = [], False
    for number, line in enumerate(source.splitlines(), start=1):
        if BEGIN.match(line) or END.match(line):
            inside = bool(BEGIN.match(line))
            continue
        if inside and len(_code_part(line)) >= 4:  # a closing ")" or "])" says nothing of the answer
            lines.append(SolutionLine(line.strip(), _code_part(line), names.get(number, "module")))
    return lines


@dataclass
class SolutionCheck:
    """What :func:`solution_code_check` found: ``found`` refuses a release; ``hinted`` is allowed."""

    found: list[str]  # solution code in the student's folder, each with where
    hinted: list[str]  # single reference lines the shipped hints quote (the instructor's choice)

    def text(self) -> str:
        """The self-check's line: says what it found, in the words of the finding."""
        if self.found:
            return f"student.zip holds solution code (found: {self.found[:3]})"
        if self.hinted:
            return (
                f"student.zip holds no solution code (its code-level hints quote {len(self.hinted)} line(s) of the "
                f"reference one at a time, as course.toml's hints = true chooses: {self.hinted[:3]})"
            )
        return "student.zip holds no solution code"


_BUILDING: Course | None = None  # the course the running release builds from (release --course), see course_entry


def course_entry(name: str) -> CourseEntry:
    """``name``'s entry in the course the running release builds from (default: the kit's course.toml):
    the self-check judges student.zip by the same hints and ships the release built it with."""
    from .course import load_course

    return (_BUILDING or load_course()).entry(name)


def solution_code_check(assignment: Assignment, files: dict[str, bytes], entry: CourseEntry | None = None) -> SolutionCheck:
    """Is any of the reference's solution code in the student's files?

    Everywhere but the handout's code-level hints, a distinctive reference line (longer than
    ``DISTINCTIVE`` characters, stripped) found verbatim is a finding. The hints section (between
    the README's ``<!-- BEGIN HINTS -->`` markers, shipped only when course.toml says ``hints =
    true``) is the instructor's choice to give single lines away: a quoted line there is allowed,
    but not the whole body of a function (two lines or more, every one quoted) nor ``HINT_RUN``
    distinctive lines in a row (a block of the answer). Functions the course ships
    (``[[assignment.ships]]``) are the instructor's choice too and are not looked at.
    """
    shipped = {name for ship in (entry.ships if entry else ()) for name in ship.names}
    lines = [line for line in solution_lines(assignment) if line.function.split(".")[0] not in shipped]
    hints, rest = [], []
    for rel, data in sorted(files.items()):
        text = data.decode("utf-8", "replace")
        if rel == "README.md":
            hints += HINT_SECTION.findall(text)
            text = HINT_SECTION.sub("", text)
        rest.append(text)
    everywhere, hinted_text = "\n".join(rest), "\n".join(hints)
    found = [f"{line.text!r} ({line.function})" for line in lines if line.distinctive and line.text in everywhere]
    hinted: list[str] = []
    if hinted_text:
        by_function: dict[str, list[SolutionLine]] = {}
        for line in lines:
            by_function.setdefault(line.function, []).append(line)
        for function, body in by_function.items():
            quoted = [bool(line.code) and line.code in hinted_text for line in body]
            if len(body) >= 2 and all(quoted):
                found.append(f"the hints quote the whole body of {function} ({len(body)} lines)")
                continue
            run = 0
            for line, is_quoted in zip(body, quoted):
                run = run + line.substantive if is_quoted else 0
                if run >= HINT_RUN:
                    found.append(f"the hints quote {HINT_RUN} lines in a row of {function}'s body (up to {line.code!r})")
                    break
            hinted += [line.code for line, is_quoted in zip(body, quoted) if is_quoted and line.substantive]
    return SolutionCheck(found, list(dict.fromkeys(hinted)))


# -- the autograder ---------------------------------------------------------------
def autograder_files(assignment: Assignment, kit_root: Path = KIT_ROOT) -> dict[str, bytes]:
    """Every file of autograder.zip: scripts at the root, engine, this assignment's tests and reference."""
    setup = (TEMPLATES / "setup.sh").read_text()
    setup = setup.replace("@TORCH_VERSION@", torch_version()).replace("@STUDENT_USER@", STUDENT_USER)
    files: dict[str, bytes] = {
        "setup.sh": setup.encode(),
        "run_autograder": (TEMPLATES / "run_autograder").read_bytes(),
        "requirements.txt": (kit_root / "requirements.txt").read_bytes(),
    }
    engine = Path(__file__).parent
    for path in sorted(engine.rglob("*")):
        if path.is_file() and not ENGINE_EXCLUDE & set(path.parts) and path.suffix in (".py", ".sh", ".ini", ""):
            files[f"autograder/{path.relative_to(engine).as_posix()}"] = path.read_bytes()
    for path in sorted(assignment.root.rglob("*")):
        rel = path.relative_to(assignment.root)
        if (
            path.is_file()
            and not ENGINE_EXCLUDE & set(rel.parts)
            and rel.parts[0] not in ("handout.md", "notebook.py", "do_nothing.py")
        ):
            files[f"assignments/{assignment.name}/{rel.as_posix()}"] = path.read_bytes()
    files[f"solutions/{assignment.name}/{assignment.submit_file}"] = assignment.solution.read_bytes()
    return files


def make_zip(files: dict[str, bytes], prefix: str = "") -> bytes:
    """A reproducible zip: sorted entries, fixed dates, fixed permissions."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel in sorted(files):
            info = zipfile.ZipInfo(prefix + rel, date_time=ZIP_DATE)
            executable = Path(rel).name in ("setup.sh", "run_autograder")
            info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            zf.writestr(info, files[rel])
    return buffer.getvalue()


def otter_autograder_zip(assignment: Assignment, files: dict[str, bytes]) -> bytes:
    """Otter's own Gradescope zip (``otter generate``) from the same checks, repacked reproducibly."""
    import subprocess

    with tempfile.TemporaryDirectory(prefix="kit-otter-") as tmp:
        folder = Path(tmp) / "student"
        for rel, data in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(data)
        requirements = Path(tmp) / "requirements.txt"
        requirements.write_text(
            "# Otter installs these on Gradescope; torch from the CPU wheel index (the default wheel is CUDA).\n"
            f"--extra-index-url {OTTER_TORCH_INDEX_URL}\ntorch=={torch_version()}+cpu\n"
            + "".join(
                line + "\n"
                for line in (KIT_ROOT / "requirements.txt").read_text().splitlines()
                if line.startswith(("numpy==", "pytest=="))
            )
        )
        out = Path(tmp) / "otter-autograder.zip"
        proc = subprocess.run(
            [
                str(Path(sys.executable).parent / "otter"),
                "generate",
                "-t",
                "tests",
                "-o",
                str(out),
                "--no-config",
                "--no-environment",
                "-r",
                str(requirements),
                "public_tests",
                "autograder",
            ],
            cwd=folder,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise ConfigError(f"{assignment.name}: otter generate failed:\n{proc.stdout[-1500:]}{proc.stderr[-1500:]}")
        with zipfile.ZipFile(out) as zf:
            return make_zip({info.filename: zf.read(info) for info in zf.infolist() if not info.is_dir()})


def build_zips(
    assignment: Assignment,
    shipped: frozenset[str] = frozenset(),
    hints: bool | None = None,
    refresh_numbers: bool = False,
    otter: bool = False,
    entry: CourseEntry | None = None,
) -> dict[str, bytes]:
    """student.zip and autograder.zip; with ``otter``, also Otter's own Gradescope zip
    (``release --otter``; see the README's "Otter or the kit's zip"). ``hints`` and the dates in the
    handout come from ``entry`` (default: the kit's course.toml) unless ``hints`` is given."""
    student = student_files(assignment, shipped, hints, refresh_numbers, entry)
    zips = {
        "student.zip": make_zip(student, prefix=f"{assignment.name}/"),
        "autograder.zip": make_zip(autograder_files(assignment)),
    }
    if otter:
        zips["otter-autograder.zip"] = otter_autograder_zip(assignment, student)
    return zips


def student_files_from_zip(data: bytes) -> dict[str, bytes]:
    """The files of a student.zip, without its top folder."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {info.filename.split("/", 1)[1]: zf.read(info) for info in zf.infolist() if not info.is_dir()}


def main(
    names: list[str],
    check: bool = True,
    out: Path = KIT_ROOT / "dist",
    as_of: dt.date | None = None,
    otter: bool = False,
    cache: Path | None = None,
    course_file: Path | None = None,
) -> int:
    """``python -m autograder release``: regenerate, build, self-check, then write dist/.

    Assignments are built in the course's order (``course.toml``, or ``course_file``), each with
    its hints and dates and what the course ships on ``as_of`` (default today). Before anything is
    written, every student.zip is checked to hold none of its own reference's solution code
    (:func:`solution_code_check`: the hints the course ships may quote single lines) and no code
    that answers another assignment (:mod:`.course`); one cross-assignment finding refuses the
    whole release. Assignments are then self-checked two at a time (each grades with two
    processes): the serial parts of one (unzipping, the public tests, the simulated Gradescope
    run) overlap with the gradings of the other. student_template/ is regenerated only from the
    kit's own course.toml (another ``course_file`` builds dist/ alone).
    """
    from .answer_check import course_findings
    from .course import COURSE_FILE, load_course

    if not names:
        print("error: no assignments found under assignments/", file=sys.stderr)
        return 2
    global _BUILDING
    as_of = as_of or dt.date.today()
    course = _BUILDING = load_course(path=course_file)
    own_course = course_file is None or Path(course_file).resolve() == (KIT_ROOT / COURSE_FILE).resolve()
    if not own_course:
        print(f"course: {course_file} (student_template/ is left as the kit's course.toml makes it)")
    names = sorted(names, key=lambda n: course.order.index(n) if n in course.order else len(course.order))
    failures = 0
    why: dict[str, str] = {}  # assignment -> what failed, for the summary at the end
    built: list[tuple[Assignment, dict[str, bytes]]] = []
    for name in names:
        try:
            assignment = load_assignment(name)
            entry = course.entry(name)
            shipped = frozenset(n for ns in entry.shipped(as_of).values() for n in ns)
            zips = build_zips(assignment, shipped, entry.hints, refresh_numbers=True, otter=otter, entry=entry)
            leaks = solution_code_check(assignment, student_files_from_zip(zips["student.zip"]), entry)
            if leaks.found:
                raise ConfigError(
                    leaks.text() + ". Take it out of the handout, notebook or tests (the hints may quote single lines)."
                )
            built.append((assignment, zips))
            if own_course:
                write_student_template(assignment)
            if shipped:
                print(f"[{name}] ships earlier reference code (course.toml, as of {as_of}): {', '.join(sorted(shipped))}")
            if entry.hints:
                print(f"[{name}] ships the handout's code-level hints (course.toml: hints = true)")
        except ConfigError as exc:
            print(f"[{name}] cannot build: {exc}", file=sys.stderr)
            failures += 1
            why[name] = f"cannot build: {exc}"
            _remove_stale(out, name)
    findings = course_findings({a.name: student_files_from_zip(zips["student.zip"]) for a, zips in built}, course, as_of)
    for finding in findings:
        print(f"answer leak: {finding}", file=sys.stderr)
    if findings:
        print(
            "release refused: a student.zip holds code that answers another assignment. Remove it, make it the "
            "student's own work, or ship it as a dated choice in course.toml ([[assignment.ships]]).",
            file=sys.stderr,
        )
        return 1
    print(f"cross-assignment check: no student.zip of {', '.join(a.name for a, _ in built)} answers another assignment")
    tables: dict[str, str] = {}
    with ThreadPoolExecutor(max_workers=2 if check else 1) as pool:
        # the longest first (the training suites), so the two lanes finish together
        order = sorted(built, key=lambda item: -item[0].test_timeout)
        futures = [pool.submit(_release_one, assignment, zips, check, out, cache) for assignment, zips in order]
        futures_names = {f: a.name for f, (a, _) in zip(futures, order)}
        for future in as_completed(futures):
            try:
                name, table, problems = future.result()
            except Exception as exc:  # noqa: BLE001 - one broken assignment must not hide the others' results
                name, table, problems = futures_names[future], None, [f"{type(exc).__name__}: {exc}"]
            if table is None:
                failures += 1
                why[name] = "self-check failed: " + "; ".join(problems[:5]) + (" ..." if len(problems) > 5 else "")
                _remove_stale(out, name)
            elif table:
                tables[name] = table
    if built and not failures:
        out.mkdir(parents=True, exist_ok=True)
        (out / "course.md").write_text(course.schedule() + f"\nBuilt on {as_of}.\n")
    if not failures and set(tables) == set(list_assignments()):  # a partial release leaves the README's table alone
        write_readme_block("mutation", "\n\n".join(tables[n] for n in sorted(tables)))
    print(_summary(names, why, out, check), file=sys.stderr if why else sys.stdout)
    return 1 if failures else 0


def _remove_stale(out: Path, name: str) -> None:
    """A refused assignment keeps no zips from an earlier release: dist/ never looks released when it is not."""
    target = out / name
    if target.exists():
        shutil.rmtree(target)


def _summary(names: list[str], why: dict[str, str], out: Path, checked: bool = True) -> str:
    done_how = "built and self-checked" if checked else "built, NOT self-checked (--no-check; not for real releases)"
    if not why:
        return f"release: {len(names)} assignment(s) {done_how} into {out}/: {', '.join(names)}"
    lines = [f"release FAILED for {len(why)} of {len(names)} assignment(s) (their {out}/<name>/ folders were removed):"]
    lines += [f"  - {name}: {reason}" for name, reason in why.items()]
    done = [n for n in names if n not in why]
    if done:
        lines.append(f"  {done_how}: {', '.join(done)}")
    return "\n".join(lines)


def _release_one(
    assignment: Assignment, zips: dict[str, bytes], check: bool, out: Path, cache: Path | None = None
) -> tuple[str, str | None, list[str]]:
    """Self-check one assignment's zips and write dist/<name>/; (name, mutation table or None if
    refused, the self-check's problems)."""
    from .selfcheck import DEFAULT_CACHE, self_check

    name = assignment.name
    started = time.monotonic()
    table = ""
    with tempfile.TemporaryDirectory(prefix=f"kit-release-{name}-") as tmp:
        staged = Path(tmp)
        for file_name, data in zips.items():
            (staged / file_name).write_bytes(data)
        if check:
            report = self_check(assignment, staged, cache or DEFAULT_CACHE)
            with _PRINT:
                print(report.text(), flush=True)
            if not report.ok:
                print(f"[{name}] self-check FAILED: dist/{name}/ was not written.", file=sys.stderr, flush=True)
                return name, None, list(report.problems)
            (staged / "selfcheck.txt").write_text(report.text() + "\n")
            table = report.markdown_table()
        target = out / name
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for path in staged.iterdir():
            shutil.copyfile(path, target / path.name)
    print(f"[{name}] wrote {target}/student.zip and {target}/autograder.zip ({time.monotonic() - started:.0f} s)", flush=True)
    return name, table, []


_PRINT = threading.Lock()


def write_readme_block(name: str, text: str, readme: Path = KIT_ROOT / "README.md") -> None:
    """Replace the generated block ``<!-- name:start -->...<!-- name:end -->`` in the README."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    content = readme.read_text()
    if start not in content:
        return
    head, rest = content.split(start, 1)
    tail = rest.split(end, 1)[1]
    readme.write_text(f"{head}{start}\n<!-- generated by `make release`; do not edit -->\n{text}\n{end}{tail}")
