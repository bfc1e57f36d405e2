"""Which functions an assignment grades: the stub's TODOs and the functions its tests name.

One job, read by the students' ``pytest.ini`` (one marker per function, generated per assignment: adding
an assignment never changes another's zip), by the notebooks' Otter checks and by the release's proof that
every function of the stub is graded. A test declares the function it grades with a marker, on the test
or for its whole file (``pytestmark = pytest.mark.grades("softmax")``): :func:`declared_functions` reads
it from the source, :func:`.scoring.graded_function` from the collected test.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..config import Assignment
from .markers import BEGIN


def stub_functions(source: str) -> list[str]:
    """The top-level functions and classes of a reference that hold a solution block (what students write)."""
    lines = source.splitlines()
    names = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = lines[node.lineno - 1 : node.end_lineno]
            if any((m := BEGIN.match(line)) and m.group(2) == "SOLUTION" for line in body):
                names.append(node.name)
    return names


def declared_functions(source: str) -> dict[str, str]:
    """{test name: the function it declares it grades} for the top-level tests of a test file's ``source``:
    its own ``@pytest.mark.grades("f")``, else the file's ``pytestmark = pytest.mark.grades("f")``, else ``other``."""
    tree = ast.parse(source)
    default = "other"
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            default = _grades(node.value) or default
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            own = [f for f in (_grades(d) for d in node.decorator_list) if f]
            found[node.name] = own[0] if own else default
    return found


def _grades(node: ast.AST) -> str | None:
    """``"f"`` for the expression ``pytest.mark.grades("f")`` (or ``mark.grades``), else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "grades"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return node.args[0].value
    return None


def tested_functions(assignment: Assignment, kinds: tuple[str, ...] = ("public", "hidden")) -> dict[str, list[str]]:
    """{function: [test keys]} from what the tests in ``kinds`` (folders of tests/) declare, in file order; a
    method's tests (``grades("AttnSeq2Seq.step")``) count for its class."""
    found: dict[str, list[str]] = {}
    for kind in kinds:
        for path in sorted((assignment.tests_dir / kind).glob("test_*.py")):
            for test, function in declared_functions(Path(path).read_text()).items():
                if function != "other":
                    found.setdefault(function.split(".")[0], []).append(f"{kind}/{path.name}::{test}")
    return found


def undeclared_tests(assignment: Assignment) -> list[str]:
    """The test keys that declare no function (the release refuses them: the summary could not place them)."""
    keys = []
    for kind in ("public", "hidden"):
        for path in sorted((assignment.tests_dir / kind).glob("test_*.py")):
            keys += [f"{kind}/{path.name}::{t}" for t, f in declared_functions(Path(path).read_text()).items() if f == "other"]
    return keys


def graded_functions(assignment: Assignment) -> list[str]:
    """The stub's functions, then any other function a test names, each once."""
    names = stub_functions(assignment.solution.read_text())
    return names + [f for f in tested_functions(assignment) if f not in names]


def untested(assignment: Assignment) -> list[str]:
    """Functions of the stub that no test names and ``[untested_functions]`` does not explain."""
    tested = tested_functions(assignment)
    return [f for f in stub_functions(assignment.solution.read_text()) if f not in tested and f not in assignment.untested]
