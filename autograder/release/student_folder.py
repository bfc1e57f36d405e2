"""The student's folder: the stub, the handout and everything else a student unzips.

One job: :func:`student_files`, every file of ``student.zip`` by relative path: the stub
generated from the reference's solution markers (with the functions the course ships on a
date put back, :func:`ship_reference`), the handout with its dates, set-up section, pins,
optional hints and measured numbers (:func:`handout_text`), the requirements, the public
tests and their checks, the Otter tests and the lab notebook; and
:func:`write_student_template`, which regenerates the committed ``student_template/<a>/``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import ENGINE, KIT_ROOT, Assignment, ConfigError
from .markers import MARKER, MarkerError, make_stub

if TYPE_CHECKING:
    from .course import CourseEntry

TEMPLATES = ENGINE / "templates"
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
        code = [line for line in solution_lines[first - 1 : ref.end_lineno] if not MARKER.match(line)]
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        stub_lines[start - 1 : node.end_lineno] = code
    return "\n".join(stub_lines) + "\n"


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
    files["autograder/banned.py"] = (ENGINE / "banned.py").read_bytes()  # local banned-name scan
    files["pytest.ini"] = student_pytest_ini(assignment).encode()
    files["autograder/__init__.py"] = b'"""Only the checks the public tests use; the real grader is not shipped."""\n'
    files["autograder/checks.py"] = (ENGINE / "checks.py").read_bytes()
    files["autograder/imports.py"] = (ENGINE / "grading" / "imports.py").read_bytes()  # grading's import rule
    # what checks.py imports, without the grader's bookkeeping for replays (templates/student_context.py; never
    # named like a test file, *_test.py or test_*.py: pytest run above two unzipped folders would collect it)
    files["autograder/context.py"] = (TEMPLATES / "student_context.py").read_bytes()
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


def student_pytest_ini(assignment: Assignment) -> str:
    """The students' pytest.ini: one marker per function this assignment grades (``functions.py``), so
    ``pytest -m <function>`` selects its public tests; generated per assignment, so adding an assignment
    never changes another's files."""
    from .functions import graded_functions

    names = graded_functions(assignment)
    markers = "\n".join(f"    {name}: the public tests of {name}" for name in names)
    text = (TEMPLATES / "student_pytest.ini").read_text()
    return text.replace("@MARKERS@", markers).replace("@FIRST@", names[0] if names else "<function>")
