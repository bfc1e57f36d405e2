"""Which functions an assignment grades: the stub's TODOs and the functions its tests name.

One job, read by the students' ``pytest.ini`` (one marker per function, generated per assignment: adding
an assignment never changes another's zip), by the notebooks' Otter checks and by the release's proof that
every function of the stub is graded. A test names the function it grades as the first word of its
docstring's first line, before the colon (``"softmax: rows sum to 1"``: :func:`scoring.function_of`).
"""

from __future__ import annotations

import ast
from pathlib import Path

from .config import Assignment
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


def tested_functions(assignment: Assignment, kinds: tuple[str, ...] = ("public", "hidden")) -> dict[str, list[str]]:
    """{function: [test keys]} from the docstrings of the tests in ``kinds`` (folders of tests/), in file order; a
    method's tests (``"AttnSeq2Seq.step: ..."``) count for its class."""
    from .scoring import function_of

    found: dict[str, list[str]] = {}
    for kind in kinds:
        for path in sorted((assignment.tests_dir / kind).glob("test_*.py")):
            for node in ast.parse(Path(path).read_text()).body:
                if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                    first = ((ast.get_docstring(node) or "").strip().splitlines() or [""])[0]
                    function = function_of(first).split(".")[0]
                    if function != "other":
                        found.setdefault(function, []).append(f"{kind}/{path.name}::{node.name}")
    return found


def graded_functions(assignment: Assignment) -> list[str]:
    """The stub's functions, then any other function a test names, each once."""
    names = stub_functions(assignment.solution.read_text())
    return names + [f for f in tested_functions(assignment) if f not in names]


def untested(assignment: Assignment) -> list[str]:
    """Functions of the stub that no test names and ``[untested_functions]`` does not explain."""
    tested = tested_functions(assignment)
    return [f for f in stub_functions(assignment.solution.read_text()) if f not in tested and f not in assignment.untested]
