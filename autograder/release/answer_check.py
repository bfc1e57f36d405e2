"""The proof that no release answers another: the cross-assignment check over every ``student.zip``.

One job: :func:`answer_findings`, run by the release over every ``student.zip``: each function
body (and each run of statements) in the files a student receives is normalised with ``ast``
(docstrings dropped, local names renamed in order of appearance) and compared with the
solution code of every other assignment's reference. A student file that defines a name
another assignment asks students to write is reported too, unless the course says why it
is not that answer (``not_answers``) or ships it as a dated choice (``ships``).
"""

from __future__ import annotations

import ast
import datetime as dt
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..config import KIT_ROOT, ConfigError, list_assignments, load_assignment
from .course import Course, CourseEntry, load_course
from .markers import marked_regions

WINDOW = 3  # consecutive statements compared as one run (catches a body copied with a line added)
MIN_NODES = 12  # smaller bodies or runs (``return x``, ``super().__init__()``) are not answers


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


def reference_answers(name: str, kit_root: Path = KIT_ROOT) -> list[Answer]:
    """The answers in assignment ``name``'s reference: every SOLUTION/HIDDEN region's code."""
    return list(_answers_in(name, load_assignment(name, kit_root).solution.read_text()))


@lru_cache(maxsize=32)
def _answers_in(name: str, source: str) -> tuple[Answer, ...]:
    regions = marked_regions(source)
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
    answers = {}
    for name in list_assignments(kit_root):
        try:
            answers[name] = reference_answers(name, kit_root)
        except (ConfigError, OSError, SyntaxError):  # its own build has said what is wrong (no traceback after it)
            continue
    findings: list[Finding] = []
    for release, files in files_by_release.items():
        findings += answer_findings(release, files, answers, course.entry(release), as_of)
    return findings
