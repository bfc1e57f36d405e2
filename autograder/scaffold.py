"""``python -m autograder new <name>``: a new assignment that releases on day one.

It writes, from ``templates/new_assignment/``, a complete assignment around one toy function
(``scale(x, factor)``, or ``--function NAME``) that passes the release's self-check as it is:

* ``solutions/<name>/<name>.py``, the reference with its solution markers;
* ``assignments/<name>/assignment.toml`` (points summing to 100, module, time limits, and the ten
  catalogued mistakes the self-check asks for as ``[mistakes.<id>]`` tables, each a one-line patch
  of the reference that a hidden case catches and the diagnosis names), ``handout.md``,
  ``do_nothing.py``, one public and one hidden test using the kit's fixtures (``student``,
  ``reference``, ``gen``) and ``autograder.checks``;
* an ``[[assignment]]`` table appended to ``course.toml`` (dated a week after the last deadline);
* the toy function's marker registered in the students' ``pytest.ini`` (``templates/student_pytest.ini``,
  the same file in every assignment: ``pytest -m scale``), and ``student_template/`` regenerated, as
  ``make release`` would.

The author then replaces the toy (reference, tests, handout, do-nothing, mistakes) with the real
function, one file at a time, running ``python -m autograder release <name>`` to prove each step.
Nothing is written when the name is taken or is not a lowercase Python identifier; a failure
half-way removes what was written.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import keyword
import re
import shutil
import sys
from pathlib import Path

from .config import KIT_ROOT, ConfigError, load_assignment

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

TEMPLATES = Path(__file__).parent / "templates" / "new_assignment"
NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
# Names a student's module must not take: the kit's own folders and modules next to the student's file
# in student.zip (conftest.py, autograder/), and pytest's test files.
RESERVED = {"autograder", "assignments", "solutions", "student_template", "tests", "conftest", "dist", "build"}
PYTEST_INI = "autograder/templates/student_pytest.ini"  # the students' pytest.ini: one marker per graded function
TOY_LINE = "return x * factor"  # the reference's one solution line, which every mistake patches

# The ten catalogued mistakes of the toy: (id, title, what the student reads, the line replacing TOY_LINE).
# Each fails at least one case of the hidden test (which case is said in the explanation's last words).
MISTAKES = (
    (
        "ignores_factor",
        "@FUNCTION@ returns x unchanged: factor is ignored",
        "Every entry of x must be multiplied by factor; returning x (or a copy of it) is right only for factor 1.",
        "return x.clone()",
    ),
    (
        "adds_factor",
        "@FUNCTION@ adds factor instead of multiplying by it",
        "x + factor shifts every entry by the same amount; scaling multiplies every entry: x * factor.",
        "return x + factor",
    ),
    (
        "divides_by_factor",
        "@FUNCTION@ divides by factor",
        "x / factor scales by 1 / factor; the contract asks for every entry times factor.",
        "return x / factor",
    ),
    (
        "factor_applied_twice",
        "@FUNCTION@ multiplies by factor twice",
        "x * factor * factor scales by factor squared; multiply once.",
        "return x * factor * factor",
    ),
    (
        "abs_factor",
        "@FUNCTION@ drops the sign of a negative factor",
        "Multiplying by abs(factor) gives the right answer only for positive factors: with factor -1.5 every "
        "entry must change sign.",
        "return x * abs(factor)",
    ),
    (
        "int_factor",
        "@FUNCTION@ truncates a fractional factor to an integer",
        "int(factor) turns 0.5 into 0 and -1.5 into -1; multiply by factor itself, a float.",
        "return x * int(factor)",
    ),
    (
        "float32_result",
        "@FUNCTION@ converts the result to float32",
        "x.float() rounds a float64 tensor to float32 (about 7 significant digits instead of 16); the result must "
        "keep the dtype of x.",
        "return x.float() * factor",
    ),
    (
        "sums_entries",
        "@FUNCTION@ returns the sum of the scaled entries",
        "The answer is a tensor of the shape of x, one scaled entry for each entry of x, not their sum.",
        "return (x * factor).sum()",
    ),
    (
        "flattens",
        "@FUNCTION@ flattens the result",
        "reshape(-1) turns a (3, 4) tensor into 12 entries in a row; the result must keep the shape of x.",
        "return (x * factor).reshape(-1)",
    ),
    (
        "first_row_only",
        "@FUNCTION@ scales only the first row",
        "x[0] is the first row (or, for a 1-D x, the first entry); scale the whole tensor.",
        "return x[0] * factor",
    ),
)


class ScaffoldError(ConfigError):
    """The assignment cannot be scaffolded; the message says why (the CLI prints it and exits 2)."""


def check_name(name: str, root: Path) -> None:
    """Refuse a name that is taken or that cannot be the module students submit."""
    if not NAME.match(name) or keyword.iskeyword(name):
        raise ScaffoldError(
            f"{name!r} is not a valid assignment name: it names the file students submit ({name}.py), so it must be a "
            "lowercase Python identifier (letters, digits and underscores, not starting with a digit, not a keyword), "
            "e.g. toy_scale"
        )
    if name in RESERVED or name == "test" or name.startswith("test_") or name.endswith("_test"):
        raise ScaffoldError(f"{name!r} is reserved: students' {name}.py would clash with the kit's files or with pytest's tests")
    if name in getattr(sys, "stdlib_module_names", ()) or importlib.util.find_spec(name) is not None:
        raise ScaffoldError(f"{name!r} is an importable module already: students' {name}.py would shadow it; choose another name")
    for taken in (root / "assignments" / name, root / "solutions" / name):
        if taken.exists():
            raise ScaffoldError(f"assignment {name!r} exists already ({taken}); choose another name or remove that folder")


def check_function(function: str, name: str) -> None:
    if not function.isidentifier() or keyword.iskeyword(function) or function.startswith("_"):
        raise ScaffoldError(f"--function {function!r} is not a public Python function name (an identifier, not a keyword)")
    if function in ("torch", "x", "factor") or function == f"{name}_public":
        raise ScaffoldError(f"--function {function!r} would clash with the toy's import, its arguments or its public test file")


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    return text


def _mistake(function: str, test_key: str, mistake: tuple[str, str, str, str]) -> str:
    """One ``[mistakes.<id>]`` table of assignment.toml (JSON strings are valid TOML basic strings)."""
    mistake_id, title, explanation, line = mistake
    return (
        f"\n[mistakes.{mistake_id}]\n"
        f"title = {json.dumps(title.replace('@FUNCTION@', function))}\n"
        f"explanation = {json.dumps(explanation)}\n"
        f"caught_by = [{json.dumps(test_key)}]\n"
        f"patch = [[{json.dumps(TOY_LINE)}, {json.dumps(line)}]]\n"
    )


def assignment_files(name: str, function: str = "scale", title: str | None = None) -> dict[str, str]:
    """Every file of the new assignment, by path relative to the kit's root."""
    values = {"NAME": name, "MODULE": name, "FUNCTION": function, "TITLE": title or "Scaling a tensor"}
    template = {p.name: p.read_text() for p in TEMPLATES.glob("*.tmpl")}
    a = f"assignments/{name}"
    files = {
        f"solutions/{name}/{name}.py": template["solution.py.tmpl"],
        f"{a}/assignment.toml": template["assignment.toml.tmpl"],
        f"{a}/handout.md": template["handout.md.tmpl"],
        f"{a}/do_nothing.py": template["do_nothing.py.tmpl"],
        f"{a}/tests/public/test_{name}_public.py": template["test_public.py.tmpl"],
        f"{a}/tests/hidden/test_{function}.py": template["test_hidden.py.tmpl"],
    }
    files = {path: _fill(text, values) for path, text in files.items()}
    hidden_key = f"hidden/test_{function}.py::test_matches_reference"
    files[f"{a}/assignment.toml"] += (
        "\n# The classic mistakes the self-check grades and the diagnosis names: each a title, what the student\n"
        "# reads, the tests that must catch it, and the line edits of the reference that make it\n"
        "# (patch = [[old line(s), new line(s)], ...]). A long catalogue may live in mistakes/<id>.py files instead.\n"
    ) + "".join(_mistake(function, hidden_key, mistake) for mistake in MISTAKES)
    return files


def register_marker(ini: str, function: str, name: str) -> str:
    """The students' pytest.ini with ``function``'s marker registered for ``name`` (the file is the same in
    every assignment, so each marker says which assignments grade that function, in name order)."""
    lines = ini.rstrip("\n").split("\n")
    standard = re.compile(rf"^(\s+){re.escape(function)}: the public tests of {re.escape(function)} \((.*)\)\s*$")
    for i, line in enumerate(lines):
        found = standard.match(line)
        if found:
            names = sorted({*(n.strip() for n in found.group(2).split(",")), name})
            lines[i] = f"{found.group(1)}{function}: the public tests of {function} ({', '.join(names)})"
            return "\n".join(lines) + "\n"
        if line.strip().split(":")[0].strip() == function and line[:1].isspace():
            return ini  # registered in a form of its own: left as the author wrote it
    start = next((i for i, line in enumerate(lines) if line.split("=")[0].strip() == "markers"), None)
    if start is None:
        raise ScaffoldError(f"{PYTEST_INI} has no `markers =` setting to register {function} in")
    end = start + 1
    while end < len(lines) and lines[end][:1].isspace() and lines[end].strip():
        end += 1
    lines.insert(end, f"    {function}: the public tests of {function} ({name})")
    return "\n".join(lines) + "\n"


def course_entry(name: str, course_text: str) -> str:
    """The ``[[assignment]]`` table for ``name``: released on the last deadline of the course, due a week later."""
    try:
        entries = tomllib.loads(course_text).get("assignment", [])
    except tomllib.TOMLDecodeError as exc:
        raise ScaffoldError(f"course.toml is not valid TOML ({exc}); fix it before adding an assignment") from None
    dues = [e["due"] for e in entries if isinstance(e.get("due"), dt.date)]
    lines = [
        "",
        "[[assignment]]",
        f'name = "{name}"',
        "# scaffolded by `python -m autograder new`: set the material, dates and builds_on for your term",
        'material = ""',
    ]
    if dues:
        release = max(dues)
        lines += [f"release = {release.isoformat()}", f"due = {(release + dt.timedelta(days=7)).isoformat()}"]
    lines.append("builds_on = []")
    return "\n".join(lines) + "\n"


def _listed(name: str, course_text: str) -> bool:
    try:
        return any(e.get("name") == name for e in tomllib.loads(course_text).get("assignment", []))
    except tomllib.TOMLDecodeError:
        return False


def scaffold(name: str, function: str = "scale", root: Path = KIT_ROOT, title: str | None = None) -> list[str]:
    """Write the assignment ``name`` under the kit ``root``; the lines to print (what was written, what next)."""
    root = Path(root).resolve()
    if not (root / "assignments").is_dir():
        raise ScaffoldError(f"{root} is not the kit's root (it has no assignments/ folder); pass --root")
    check_name(name, root)
    check_function(function, name)
    if title is not None and (not title.strip() or any(c in title for c in '"\\\n')):
        raise ScaffoldError(
            f"--title {title!r}: one line, without double quotes or backslashes (it goes into TOML and a docstring)"
        )
    files = assignment_files(name, function, title)
    course_path = root / "course.toml"
    course_text = course_path.read_text() if course_path.is_file() else None
    ini_path = root / PYTEST_INI
    ini_text = ini_path.read_text() if ini_path.is_file() else None
    created = [root / "assignments" / name, root / "solutions" / name, root / "student_template" / name]
    template_existed = created[2].exists()
    try:
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        assignment = load_assignment(name, root)  # the same reading every command does
        course_note = _add_to_course(name, course_path, course_text)
        if ini_text is not None:
            ini_path.write_text(register_marker(ini_text, function, name))
        from .release import write_student_template

        write_student_template(assignment, root)
    except BaseException:
        for folder in created[:2] + ([] if template_existed else created[2:]):
            shutil.rmtree(folder, ignore_errors=True)
        for path, text in ((course_path, course_text), (ini_path, ini_text)):
            if text is not None:
                path.write_text(text)
        raise
    stale = _regenerate_others(name, root) if ini_text is not None and ini_path.read_text() != ini_text else []
    a = f"assignments/{name}"
    rows = [
        (f"solutions/{name}/{name}.py", "the reference: # BEGIN/END SOLUTION becomes the student's stub"),
        (f"{a}/assignment.toml", f"points (20 public + 80 hidden = 100), time limits, {len(MISTAKES)} catalogued mistakes"),
        (f"{a}/handout.md", "the student's README.md"),
        (f"{a}/tests/public/", "one public test, shipped to students"),
        (f"{a}/tests/hidden/", "one hidden test, 4 cases"),
        (f"{a}/do_nothing.py", "computes nothing; must earn 0"),
        ("course.toml", course_note),
        (PYTEST_INI, f"registers the marker {function} (`pytest -m {function}` in the student's folder)"),
        (f"student_template/{name}/", "generated, as make release does (and every student_template/*/pytest.ini)"),
    ]
    width = max(len(path) for path, _ in rows)
    return [
        f"new assignment {name!r} ({len(files)} files): students submit {name}.py and write one function, {function}",
        *(f"  {path:<{width}}  {what}" for path, what in rows),
        *(f"  note: student_template/{other}/ was not regenerated ({why}); run make stubs" for other, why in stale),
        "",
        "It releases as it is (self-check included):",
        f"  .venv/bin/python -m autograder release {name} --out /tmp/dist-{name}",
        f"Then replace the toy {function} with your function, one file at a time (assignments/README.md, "
        '"Authoring an assignment"), releasing after each step.',
    ]


def _regenerate_others(name: str, root: Path) -> list[tuple[str, str]]:
    """Every other student_template/<a>/ again (their pytest.ini changed); (assignment, why) of those that failed."""
    from .config import list_assignments
    from .release import write_student_template

    failed = []
    for other in list_assignments(root):
        if other != name and (root / "student_template" / other).is_dir():
            try:
                write_student_template(load_assignment(other, root), root)
            except Exception as exc:  # noqa: BLE001 - another assignment's sources are its author's to fix
                failed.append((other, " ".join(str(exc).split())[:200]))
    return failed


def _add_to_course(name: str, course_path: Path, course_text: str | None) -> str:
    if course_text is None:
        return "absent: the course is every assignment, undated"
    if _listed(name, course_text):
        return "lists it already (kept as it is)"
    course_path.write_text(course_text.rstrip("\n") + "\n" + course_entry(name, course_text))
    return "[[assignment]] appended (last in the course's order; check its dates)"


def main(name: str, function: str = "scale", root: Path | None = None, title: str | None = None) -> int:
    for line in scaffold(name, function, root or KIT_ROOT, title):
        print(line)
    return 0
