"""The course as data (``course.toml``), and the proof that no release answers another.

``course.toml`` at the kit's root orders the assignments, dates their release and
deadline, says what each builds on, and records the instructor's dated choices to
ship an earlier assignment's reference inside a later release. Its dates reach the
students (a line at the top of each handout, :func:`dates_line`) and grading
(``grade-all`` flags submissions after :attr:`CourseEntry.deadline` unless ``--due``
says otherwise).

:func:`answer_findings` is the cross-assignment check the release runs over every
``student.zip``: each function body (and each run of statements) in the files a
student receives is normalised with ``ast`` (docstrings dropped, local names
renamed in order of appearance) and compared with the solution code of every
other assignment's reference. A student file that defines a name another
assignment asks students to write is reported too, unless the course says why it
is not that answer (``not_answers``) or ships it as a dated choice (``ships``).
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .config import KIT_ROOT, ConfigError, list_assignments, load_assignment

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

COURSE_FILE = "course.toml"
DEFAULT_TIMEZONE = "UTC"  # course.toml's `timezone`: where a `due` date's end of day falls
DUE_TIME = dt.time(23, 59, 59)  # a `due` given as a date means the end of that day
WINDOW = 3  # consecutive statements compared as one run (catches a body copied with a line added)
MIN_NODES = 12  # smaller bodies or runs (``return x``, ``super().__init__()``) are not answers


@dataclass(frozen=True)
class Shipment:
    """Reference code of ``source`` (``names``) shipped in a later release from ``not_before`` on."""

    source: str
    names: tuple[str, ...]
    not_before: dt.date


@dataclass(frozen=True)
class CourseEntry:
    name: str
    material: str = ""
    release: dt.date | None = None
    due: dt.date | None = None
    builds_on: tuple[str, ...] = ()
    hints: bool = False
    ships: tuple[Shipment, ...] = ()
    not_answers: dict[str, str] = field(default_factory=dict)  # name -> why it is not the other assignment's answer
    deadline: dt.datetime | None = None  # the moment `due` means (time zone aware); later submissions are late
    timezone: str = DEFAULT_TIMEZONE  # the course's time zone, named in what the dates say

    def deadline_text(self) -> str:
        """``2027-02-22 23:59 UTC``: the deadline as students and instructors read it ("" if none)."""
        return format_deadline(self.deadline, self.timezone) if self.deadline else ""

    def shipped(self, as_of: dt.date) -> dict[str, set[str]]:
        """{earlier assignment: names of its reference shipped in this release} on ``as_of``."""
        out: dict[str, set[str]] = {}
        for ship in self.ships:
            if as_of >= ship.not_before:
                out.setdefault(ship.source, set()).update(ship.names)
        return out


@dataclass(frozen=True)
class Course:
    title: str
    entries: tuple[CourseEntry, ...]
    path: Path | None = None

    @property
    def order(self) -> list[str]:
        return [e.name for e in self.entries]

    def entry(self, name: str) -> CourseEntry:
        for e in self.entries:
            if e.name == name:
                return e
        return CourseEntry(name=name)

    def schedule(self) -> str:
        """The course's schedule as a Markdown table (written to dist/course.md)."""
        lines = [
            f"# {self.title}: release schedule",
            "",
            "| # | assignment | material | release | due | builds on | ships earlier reference | hints |",
            "| ---: | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for i, e in enumerate(self.entries, start=1):
            ships = "; ".join(f"{s.source}: {', '.join(s.names)} (from {s.not_before})" for s in e.ships) or "none"
            lines.append(
                f"| {i} | `{e.name}` | {e.material} | {e.release or '?'} | {e.deadline_text() or '?'} | "
                f"{', '.join(e.builds_on) or '-'} | {ships} | {'shipped' if e.hints else 'no'} |"
            )
        lines += [
            "",
            "Each handout (the README.md of each student.zip) states its release and due dates; `grade-all` flags "
            "submissions after the due time as late unless `--due` overrides it.",
        ]
        return "\n".join(lines) + "\n"


def format_deadline(moment: dt.datetime, zone: str = DEFAULT_TIMEZONE) -> str:
    """``2027-02-22 23:59 UTC`` (in the course's zone), or ``2026-11-02 00:00 UTC-08:00`` for another offset."""
    try:
        from zoneinfo import ZoneInfo

        local = moment.astimezone(ZoneInfo(zone))
        if local.utcoffset() == moment.utcoffset():
            return f"{local:%Y-%m-%d %H:%M} {zone}"
    except Exception:  # noqa: BLE001 - an unknown zone was refused when the course was read; print the offset
        pass
    offset = moment.utcoffset() or dt.timedelta(0)
    sign = "-" if offset < dt.timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return f"{moment:%Y-%m-%d %H:%M} UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def dates_line(entry: CourseEntry) -> str:
    """What a handout says of its dates (from course.toml), or "" for an undated assignment."""
    parts = []
    if entry.release:
        parts.append(f"released {entry.release.isoformat()}")
    if entry.deadline:
        parts.append(f"due {entry.deadline_text()}")
    if not parts:
        return ""
    text = ", ".join(parts)
    return f"**{text[0].upper()}{text[1:]}** (the course's schedule, course.toml)."


def _date(value: object, where: str) -> dt.date | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise ConfigError(f"{where}: {value!r} is not a date (YYYY-MM-DD)") from None


def _deadline(value: object, zone: str, where: str) -> dt.datetime | None:
    """The moment a ``due`` means: a date is the end of that day in the course's zone; a TOML
    date-time with an offset is that moment; one without an offset is in the course's zone."""
    from zoneinfo import ZoneInfo

    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=ZoneInfo(zone))
    day = _date(value, where)
    return dt.datetime.combine(day, DUE_TIME, tzinfo=ZoneInfo(zone)) if day else None


def _timezone(value: object, where: str) -> str:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    zone = str(value or DEFAULT_TIMEZONE)
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(f"{where}: timezone {zone!r} is not a time zone name (e.g. UTC, America/Los_Angeles)") from None
    return zone


def load_course(kit_root: Path = KIT_ROOT, path: Path | None = None) -> Course:
    """Read ``course.toml`` (or ``path``); assignments it does not list come last, undated, with a warning."""
    path = path or kit_root / COURSE_FILE
    existing = list_assignments(kit_root)
    if not path.is_file():
        return Course("Course", tuple(CourseEntry(n) for n in existing), None)
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    zone = _timezone(data.get("timezone"), path.name)
    entries: list[CourseEntry] = []
    for raw in data.get("assignment", []):
        name = raw.get("name")
        where = f"{path.name}, assignment {name!r}"
        if name not in existing:
            if name is None:
                raise ConfigError(f"{path}: every [[assignment]] needs a name")
            continue  # listed but not (yet) authored: nothing to release
        if any(e.name == name for e in entries):
            raise ConfigError(f"{where}: listed twice")
        release, due = _date(raw.get("release"), where), _date(raw.get("due"), where)
        deadline = _deadline(raw.get("due"), zone, where)
        if deadline is not None:
            due = deadline.date()
        if release and due and due < release:
            raise ConfigError(f"{where}: due {due} is before its release {release}")
        earlier = {e.name: e for e in entries}
        builds_on = tuple(raw.get("builds_on", ()))
        for dep in builds_on:
            if dep not in earlier:
                raise ConfigError(f"{where}: builds_on {dep!r}, which is not an earlier assignment in the course")
        ships = []
        for ship in raw.get("ships", []):
            source, names = ship.get("from"), tuple(ship.get("names", ()))
            not_before = _date(ship.get("not_before"), where)
            if source not in earlier:
                raise ConfigError(f"{where}: ships from {source!r}, which is not an earlier assignment in the course")
            if not names or not_before is None:
                raise ConfigError(f"{where}: a [[assignment.ships]] needs names and a not_before date")
            source_due = earlier[source].due
            if source_due is None or not_before < source_due:
                raise ConfigError(
                    f"{where}: ships {source}'s reference from {not_before}, before {source}'s deadline "
                    f"({source_due or 'not set'}): that would hand out an answer before it is due"
                )
            ships.append(Shipment(source, names, not_before))
        entries.append(
            CourseEntry(
                name=name,
                material=str(raw.get("material", "")),
                release=release,
                due=due,
                builds_on=builds_on,
                hints=bool(raw.get("hints", False)),
                ships=tuple(ships),
                not_answers={str(k): str(v) for k, v in raw.get("not_answers", {}).items()},
                deadline=deadline,
                timezone=zone,
            )
        )
    listed = {e.name for e in entries}
    for name in existing:
        if name not in listed:
            print(f"warning: {path.name} does not list assignment {name!r}; it is released last, undated", file=sys.stderr)
            entries.append(CourseEntry(name, timezone=zone))
    return Course(str(data.get("title", "Course")), tuple(entries), path)


# -- the cross-assignment answer check ------------------------------------------------
class _Rename(ast.NodeTransformer):
    """Rename identifiers in order of first appearance and blank out strings (a copy with new names still matches)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _new(self, name: str) -> str:
        return self.names.setdefault(name, f"_v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.copy_location(ast.Name(id=self._new(node.id), ctx=ast.Load()), node)

    def visit_arg(self, node: ast.arg) -> ast.AST:
        return ast.copy_location(ast.arg(arg=self._new(node.arg)), node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:  # messages are not answers: any text matches
        return ast.copy_location(ast.Constant(value=""), node)

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.copy_location(ast.Constant(value=""), node) if isinstance(node.value, str) else node


def _normalise(statements: list[ast.stmt]) -> tuple[str, int]:
    """(canonical dump, node count) of a run of statements."""
    module = ast.Module(body=[_strip(s) for s in statements], type_ignores=[])
    module = _Rename().visit(module)
    return ast.dump(module, annotate_fields=False), sum(1 for _ in ast.walk(module))


def _strip(node: ast.stmt) -> ast.stmt:
    """A copy without docstrings or type annotations."""
    node = ast.parse(ast.unparse(node)).body[0]
    for sub in ast.walk(node):
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if sub.body and isinstance(sub.body[0], ast.Expr) and isinstance(getattr(sub.body[0], "value", None), ast.Constant):
                if isinstance(sub.body[0].value.value, str):
                    sub.body = sub.body[1:] or [ast.Pass()]
        if isinstance(sub, ast.AnnAssign) or isinstance(sub, ast.arg):
            sub.annotation = None
        if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
            sub.returns = None
    return node


def _body(node: ast.AST) -> list[ast.stmt]:
    body = list(getattr(node, "body", []))
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]
    return body


def _definitions(tree: ast.AST, prefix: str = ""):
    """(qualified name, node) of every function and class, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            qual = f"{prefix}.{node.name}" if prefix else node.name
            yield qual, node
            yield from _definitions(node, qual)
        elif not isinstance(node, (ast.expr,)):
            yield from _definitions(node, prefix)


def _blocks(tree: ast.AST):
    """Every statement list in the tree (bodies of functions, loops, ifs, with...)."""
    for node in ast.walk(tree):
        for attr in ("body", "orelse", "finalbody"):
            block = getattr(node, attr, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield block


def _fingerprints(statements: list[ast.stmt]) -> set[str]:
    """The whole run plus every window of WINDOW consecutive statements of each nested block."""
    prints: set[str] = set()
    dump, size = _normalise(statements)
    if size >= MIN_NODES:
        prints.add(dump)
    holder = ast.Module(body=statements, type_ignores=[])
    for block in _blocks(holder):
        for i in range(len(block) - WINDOW + 1):
            dump, size = _normalise(block[i : i + WINDOW])
            if size >= MIN_NODES:
                prints.add(dump)
    return prints


@dataclass(frozen=True)
class Answer:
    """A piece of an assignment's reference that students write (a SOLUTION or HIDDEN block)."""

    assignment: str
    name: str  # qualified name of the function it sits in
    prints: frozenset[str]


_MARK = re.compile(r"^\s*# (BEGIN|END) (SOLUTION|HIDDEN)\s*$")


def reference_answers(name: str, kit_root: Path = KIT_ROOT) -> list[Answer]:
    """The answers in assignment ``name``'s reference: every SOLUTION/HIDDEN region's code."""
    return list(_answers_in(name, load_assignment(name, kit_root).solution.read_text()))


@lru_cache(maxsize=32)
def _answers_in(name: str, source: str) -> tuple[Answer, ...]:
    lines = source.splitlines()
    regions: list[tuple[int, int]] = []
    start = 0
    for number, line in enumerate(lines, start=1):
        match = _MARK.match(line)
        if match and match.group(1) == "BEGIN":
            start = number
        elif match:
            regions.append((start, number))
    tree = ast.parse(source)

    def inside(node: ast.AST) -> bool:
        return any(a < node.lineno and (node.end_lineno or node.lineno) < b for a, b in regions)

    answers: list[Answer] = []
    for qual, node in _definitions(tree):
        if isinstance(node, ast.ClassDef):
            continue
        body = [s for s in _body(node) if inside(s)]
        if body:
            answers.append(Answer(name, qual, frozenset(_fingerprints(body))))
    # whole definitions inside a HIDDEN block (helpers the stub drops)
    for qual, node in _definitions(tree):
        if not isinstance(node, ast.ClassDef) and inside(node) and not any(a.name == qual for a in answers):
            answers.append(Answer(name, qual, frozenset(_fingerprints(_body(node)))))
    return tuple(answers)


def _is_stub(node: ast.AST) -> bool:
    """A body that only raises NotImplementedError (or is empty): what the markers leave."""
    body = _body(node)
    return not body or all(isinstance(s, (ast.Raise, ast.Pass)) for s in body)


def _python_sources(files: dict[str, bytes]) -> dict[str, str]:
    """The Python a student receives: .py files and the code cells of notebooks."""
    out: dict[str, str] = {}
    for rel, data in files.items():
        if rel.endswith(".py"):
            out[rel] = data.decode("utf-8", "replace")
        elif rel.endswith(".ipynb"):
            cells = json.loads(data).get("cells", [])
            for i, cell in enumerate(cells):
                if cell.get("cell_type") == "code":
                    text = "".join(cell.get("source", ""))
                    out[f"{rel}#cell{i}"] = "\n".join(
                        line for line in text.splitlines() if not line.lstrip().startswith(("%", "!"))
                    )
    return out


@dataclass(frozen=True)
class Finding:
    release: str  # the assignment whose student.zip holds it
    file: str
    where: str  # qualified name or "module"
    answers: str  # "multihead: sinusoidal_positions"
    how: str  # "same code" or "same name"

    def __str__(self) -> str:
        return f"{self.release}/{self.file}: {self.where} holds {self.answers}'s answer ({self.how})"


@lru_cache(maxsize=2048)
def _unit_prints(text: str) -> tuple[tuple[str, frozenset[str]], ...]:
    """(qualified name or "module", fingerprints) of every function and of the module's own statements
    in a student file (the same files recur in every release of a course: computed once per text)."""
    tree = ast.parse(text)
    units = [(qual, _body(node)) for qual, node in _definitions(tree) if not isinstance(node, ast.ClassDef)]
    units.append(("module", [s for s in tree.body if not isinstance(s, (ast.FunctionDef, ast.ClassDef))]))
    return tuple((qual, frozenset(_fingerprints(body)) if body else frozenset()) for qual, body in units)


def answer_findings(
    release: str,
    files: dict[str, bytes],
    answers: dict[str, list[Answer]],
    entry: CourseEntry | None = None,
    as_of: dt.date | None = None,
) -> list[Finding]:
    """What in ``release``'s student files answers another assignment (see the module docstring).

    ``answers``: {assignment: reference_answers(assignment)} for the other assignments.
    Code the course ships on ``as_of`` (``entry.ships``) and names it explains
    (``entry.not_answers``) are allowed; everything else is a finding.
    """
    entry = entry or CourseEntry(release)
    shipped = entry.shipped(as_of or dt.date.today())
    findings: list[Finding] = []
    for rel, text in sorted(_python_sources(files).items()):
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        prints = _unit_prints(text)
        defined = {qual: node for qual, node in _definitions(tree)}
        for other, pieces in answers.items():
            if other == release:
                continue
            allowed = shipped.get(other, set())
            for answer in pieces:
                if answer.name in allowed or answer.name.split(".")[0] in allowed:
                    continue
                for qual, unit_prints in prints:
                    if unit_prints & answer.prints:
                        findings.append(Finding(release, rel, qual, f"{other}: {answer.name}", "same code"))
                        break
                else:
                    node = defined.get(answer.name)
                    top = answer.name.split(".")[0]
                    if (
                        node is not None
                        and not _is_stub(node)
                        and answer.name not in entry.not_answers
                        and top not in entry.not_answers
                    ):
                        findings.append(Finding(release, rel, answer.name, f"{other}: {answer.name}", "same name, not a stub"))
    return findings


def course_findings(
    files_by_release: dict[str, dict[str, bytes]],
    course: Course | None = None,
    as_of: dt.date | None = None,
    kit_root: Path = KIT_ROOT,
) -> list[Finding]:
    """The cross-assignment check over several student zips' files, against every assignment's reference."""
    course = course or load_course(kit_root)
    answers = {name: reference_answers(name, kit_root) for name in list_assignments(kit_root)}
    findings: list[Finding] = []
    for release, files in files_by_release.items():
        findings += answer_findings(release, files, answers, course.entry(release), as_of)
    return findings
