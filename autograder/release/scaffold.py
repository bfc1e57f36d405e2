"""``python -m autograder new <name>``: a new assignment that releases on day one.

It writes, from ``templates/new_assignment/``, a complete assignment around one toy function per
``--function`` (``scale(x, factor)`` by default; ``--function a --function b`` for two) that passes the
release's self-check as it is:

* ``solutions/<name>/<name>.py``, the reference with its solution markers (one function each);
* ``assignments/<name>/assignment.toml`` (points summing to 100: 20 public and 80 hidden, shared by the
  functions; module, time limits), ten catalogued mistakes per function, each a file
  ``mistakes/<id>.py`` (title, explanation, ``CAUGHT_BY``, ``PATCH``: a one-line edit of the reference
  that a hidden case catches and the diagnosis names, the form of the six shipped assignments),
  ``handout.md`` (a section per function), ``do_nothing.py``, one public test per function (one file)
  and one hidden test file per function, using the kit's fixtures (``student``, ``reference``,
  ``gen``) and ``autograder.checks``;
* an ``[[assignment]]`` table added to ``course.toml`` (dated a week after the last deadline), after the last
  one and before the term's rules (``[similarity]``, ``[late]``, ``[extensions.*]``): a table at the end of
  the file would take in every line added below it later (an extension, say), as keys of the assignment;
* ``student_template/<name>/`` regenerated, as ``make release`` would: its ``pytest.ini`` registers one
  marker per function (generated per assignment, ``functions.py``), so ``pytest -m <function>`` works
  and no other assignment's files change.

The author then replaces each toy (reference, tests, handout, do-nothing, mistakes) with the real
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
import textwrap
from pathlib import Path

from ..config import KIT_ROOT, ConfigError, load_assignment, tomllib

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "new_assignment"
NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
# Names a student's module must not take: the kit's own folders and modules next to the student's file
# in student.zip (conftest.py, autograder/), and pytest's test files.
RESERVED = {"autograder", "assignments", "solutions", "student_template", "tests", "conftest", "dist", "build"}


def toy_line(function: str) -> str:
    """The toy's one solution line, which each of its mistakes patches (named per function, so it is unique)."""
    return f"{function}_result = x * factor"


# The ten catalogued mistakes of the toy: (id, title, what the student reads, the line replacing toy_line's
# ``return`` form: its expression is what ``<function>_result`` becomes).
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


def check_functions(functions: list[str], name: str) -> None:
    if not functions or len(set(functions)) != len(functions):
        raise ScaffoldError(f"--function: give each function once (got {functions})")
    for function in functions:
        check_function(function, name)


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace(f"@{key}@", value)
    return text


def _mistake(function: str, test_key: str, mistake: tuple[str, str, str, str]) -> str:
    """One catalogued mistake's file, ``mistakes/<id>.py``: its title and explanation (the docstring), the
    tests that must catch it (``CAUGHT_BY``) and the line edit of the reference that makes it (``PATCH``)."""
    _id, title, explanation, line = mistake
    patched = f"{function}_result = {line.removeprefix('return ')}"
    body = textwrap.fill(explanation.replace("@FUNCTION@", function), 100)
    return (
        f'"""{title.replace("@FUNCTION@", function)}\n\n{body}\n"""\n\n'
        f"CAUGHT_BY = [{json.dumps(test_key)}]\n"
        f"PATCH = [({toy_line(function)!r}, {patched!r})]\n"
    )


def _shares(total_quarters: int, n: int) -> list[float]:
    """``total_quarters`` quarter points shared by n functions (the remainder to the first), in points."""
    base, extra = divmod(total_quarters, n)
    return [(base + (1 if i < extra else 0)) / 4 for i in range(n)]


def _points(name: str, functions: list[str]) -> str:
    lines = [f'"public/test_{name}_public.py::test_{f}_example" = {p:g}' for f, p in zip(functions, _shares(80, len(functions)))]
    lines += [
        f'"hidden/test_{f}.py::test_matches_reference" = {p:g}   # its 4 parametrized cases share these points'
        for f, p in zip(functions, _shares(320, len(functions)))
    ]
    return "\n".join(lines) + "\n"


def assignment_files(name: str, function: str | list[str] = "scale", title: str | None = None) -> dict[str, str]:
    """Every file of the new assignment, by path relative to the kit's root (one toy per function)."""
    functions = [function] if isinstance(function, str) else list(function)
    values = {"NAME": name, "MODULE": name, "TITLE": title or "Scaling a tensor"}
    template = {p.name.removesuffix(".tmpl"): p.read_text() for p in TEMPLATES.glob("*.tmpl")}

    def each(piece: str, sep: str) -> str:
        return sep.join(_fill(template[piece], {**values, "FUNCTION": f}).rstrip("\n") for f in functions) + "\n"

    values.update(
        {
            "FUNCTIONS": each("function.py", "\n\n\n"),
            "TESTS": each("test_public_case.py", "\n\n\n"),
            "ROWS": each("handout_row.md", "\n").rstrip("\n"),
            "SECTIONS": each("handout_function.md", "\n\n").rstrip("\n"),
            "POINTS": _points(name, functions).rstrip("\n"),
        }
    )
    a = f"assignments/{name}"
    files = {
        f"solutions/{name}/{name}.py": _fill(template["solution.py"], values),
        f"{a}/assignment.toml": _fill(template["assignment.toml"], values),
        f"{a}/handout.md": _fill(template["handout.md"], values),
        f"{a}/do_nothing.py": _fill(template["do_nothing.py"], {**values, "FUNCTIONS": each("do_nothing_function.py", "\n\n\n")}),
        f"{a}/tests/public/test_{name}_public.py": _fill(template["test_public.py"], values),
    }
    for f in functions:
        files[f"{a}/tests/hidden/test_{f}.py"] = _fill(template["test_hidden.py"], {**values, "FUNCTION": f})
    for f in functions:  # the classic mistakes the self-check grades and the diagnosis names, one file each
        prefix = f"{f}_" if len(functions) > 1 else ""
        for mistake in MISTAKES:
            files[f"{a}/mistakes/{prefix}{mistake[0]}.py"] = _mistake(f, f"hidden/test_{f}.py::test_matches_reference", mistake)
    return files


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


def _write(name: str, root: Path, files: dict[str, str]) -> str:
    """Write the files, the course entry and the student template; undo everything on any failure."""
    course_path = root / "course.toml"
    course_text = course_path.read_text() if course_path.is_file() else None
    created = [root / "assignments" / name, root / "solutions" / name, root / "student_template" / name]
    template_existed = created[2].exists()
    try:
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        assignment = load_assignment(name, root)  # the same reading every command does
        course_note = _add_to_course(name, course_path, course_text)
        from .student_folder import write_student_template

        write_student_template(assignment, root)
    except BaseException:
        for folder in created[:2] + ([] if template_existed else created[2:]):
            shutil.rmtree(folder, ignore_errors=True)
        if course_text is not None:
            course_path.write_text(course_text)
        raise
    return course_note


def scaffold(name: str, function: str | list[str] = "scale", root: Path = KIT_ROOT, title: str | None = None) -> list[str]:
    """Write the assignment ``name`` under the kit ``root``; the lines to print (what was written, what next)."""
    functions = [function] if isinstance(function, str) else list(function)
    root = Path(root).resolve()
    if not (root / "assignments").is_dir():
        raise ScaffoldError(f"{root} is not the kit's root (it has no assignments/ folder); pass --root")
    check_name(name, root)
    check_functions(functions, name)
    if title is not None and (not title.strip() or any(c in title for c in '"\\\n')):
        raise ScaffoldError(
            f"--title {title!r}: one line, without double quotes or backslashes (it goes into TOML and a docstring)"
        )
    files = assignment_files(name, functions, title)
    course_note = _write(name, root, files)
    a, listed = f"assignments/{name}", ", ".join(functions)
    rows = [
        (f"solutions/{name}/{name}.py", "the reference: # BEGIN/END SOLUTION becomes the student's stub"),
        (
            f"{a}/assignment.toml",
            f"points (20 public + 80 hidden = 100), time limits, {len(MISTAKES) * len(functions)} catalogued mistakes",
        ),
        (f"{a}/handout.md", "the student's README.md (a section per function)"),
        (f"{a}/tests/public/", f"one public test per function ({len(functions)}), shipped to students"),
        (f"{a}/tests/hidden/", f"one hidden test file per function ({len(functions)}), 4 cases each"),
        (f"{a}/do_nothing.py", "computes nothing; must earn 0"),
        ("course.toml", course_note),
        (
            f"student_template/{name}/",
            f"generated, as make release does; its pytest.ini has a marker per function (`pytest -m {functions[0]}`)",
        ),
    ]
    width = max(len(path) for path, _ in rows)
    return [
        f"new assignment {name!r} ({len(files)} files): students submit {name}.py and write {len(functions)} "
        f"function{'s' if len(functions) > 1 else ''}: {listed}",
        *(f"  {path:<{width}}  {what}" for path, what in rows),
        "",
        "It releases as it is (self-check included):",
        f"  .venv/bin/python -m autograder release {name} --out /tmp/dist-{name}",
        f"Then replace each toy ({listed}) with your function, one file at a time (assignments/README.md, "
        '"Authoring an assignment"), releasing after each step. No other assignment\'s files were changed.',
    ]


def _add_to_course(name: str, course_path: Path, course_text: str | None) -> str:
    if course_text is None:
        return "absent: the course is every assignment, undated"
    if _listed(name, course_text):
        return "lists it already (kept as it is)"
    text, before = insert_assignment_table(course_text, course_entry(name, course_text))
    course_path.write_text(text)
    where = f"before [{before}]" if before else "at the end"
    return f"[[assignment]] added after the last one, {where} (last in the course's order; check its dates)"


_HEADER = re.compile(r"""^\s*\[\[?\s*([^\[\]#]+?)\s*\]\]?\s*(?:#.*)?$""")


def _table_kind(header: str) -> str:
    """``assignment`` for ``[[assignment]]``, ``[[assignment.ships]]``; ``extensions`` for ``[extensions.x]``."""
    return header.split(".")[0].strip().strip("\"'")


def insert_assignment_table(course_text: str, table: str) -> tuple[str, str]:
    """(``course_text`` with the ``[[assignment]]`` ``table`` after the last one's lines and before the next table
    of another kind, the header it now precedes or "" at the end). Where a comment paragraph introduces that
    table, the new one goes above the comment. The result is parsed: it must read as before plus the new
    assignment, or the table is appended at the end (the schema then refuses a key that falls into it)."""
    lines = course_text.splitlines(keepends=True)
    headers = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _HEADER.match(line))]
    last = max((i for i, h in headers if _table_kind(h) == "assignment"), default=-1)
    later = [(i, h) for i, h in headers if i > last and _table_kind(h) != "assignment"]
    appended = course_text.rstrip("\n") + "\n" + table
    if not later:
        return appended, ""
    at, header = later[0]
    top = at
    while top > 0 and lines[top - 1].lstrip().startswith("#"):
        top -= 1
    if top < at and (top == 0 or lines[top - 1].strip()):  # the comment is not a paragraph of its own
        top = at
    head = "".join(lines[:top])
    gap = "" if not head or head.endswith("\n\n") else "\n"
    text = head + gap + table.strip("\n") + "\n\n" + "".join(lines[top:])
    old, new = tomllib.loads(course_text), tomllib.loads(text)
    expected = {**old, "assignment": [*old.get("assignment", []), tomllib.loads(table)["assignment"][0]]}
    return (text, header) if new == expected else (appended, "")


def main(name: str, function: str | list[str] = "scale", root: Path | None = None, title: str | None = None) -> int:
    for line in scaffold(name, function, root or KIT_ROOT, title):
        print(line)
    return 0
