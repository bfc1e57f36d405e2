"""The engine's shape, held: no function over 60 lines, no import circle between its modules, and no
grading module importing an instructor's tool (the zips ship the grading engine without them).

The issue "One record per grading" asked for these; this test keeps them from drifting back."""

import ast
from pathlib import Path

from autograder import cli
from autograder.config import INSTRUCTOR_ONLY
from autograder.release.zips import shipped_engine_files

ENGINE = Path(__file__).resolve().parents[2] / "autograder"
LONGEST_FUNCTION = 60


def _modules() -> dict[str, ast.Module]:
    return {
        ".".join(p.relative_to(ENGINE.parent).with_suffix("").parts): ast.parse(p.read_text())
        for p in sorted(ENGINE.rglob("*.py"))
        if "templates" not in p.parts
    }


def test_no_engine_function_is_longer_than_60_lines():
    long = [
        f"{name}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for name, tree in _modules().items()
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > LONGEST_FUNCTION
    ]
    assert not long, "split these functions: " + ", ".join(long)


def _imports(name: str, tree: ast.Module, known: set[str]) -> set[str]:
    package = name.rsplit(".", 1)[0] if not name.endswith("__init__") else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
    return {m if m in known else f"{m}.__init__" for m in found if m in known or f"{m}.__init__" in known} - {name}


def test_engine_modules_import_no_circle():
    modules = _modules()
    known = set(modules)
    graph = {name: _imports(name, tree, known) for name, tree in modules.items()}
    # package __init__ files are entry points of their package: an import of the package reaches them only
    graph = {n: {m for m in deps if not m.endswith("__init__")} for n, deps in graph.items()}
    seen: dict[str, int] = {}
    circles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        seen[node] = 1
        for nxt in sorted(graph[node]):
            if seen.get(nxt) == 1:
                circles.append([*path[path.index(nxt) :], nxt])
            elif nxt not in seen:
                visit(nxt, [*path, nxt])
        seen[node] = 2

    for node in sorted(graph):
        if node not in seen:
            visit(node, [node])
    assert not circles, "import circles: " + "; ".join(" -> ".join(c) for c in circles)


def test_no_grading_module_imports_an_instructor_tool():
    """Every import, at the top or inside a function, of every file autograder.zip ships stays within what it ships:
    a grading that reached release/ or cohort/ would fail on Gradescope and PrairieLearn, nowhere else. The CLI
    alone names those tools (for the commands a course's staff runs in the kit's checkout)."""
    modules = _modules()
    known = set(modules)
    shipped = {".".join(("autograder", *Path(rel).with_suffix("").parts)) for rel in shipped_engine_files()}
    assert "autograder.grading.grade" in shipped and "autograder.platforms.prairielearn" in shipped
    assert not any(name.split(".")[1] in INSTRUCTOR_ONLY for name in shipped)
    wrong = [
        f"{name} imports {target}"
        for name in sorted(shipped - {"autograder.cli"})
        for target in sorted(_imports(name, modules[name], known))
        if target.split(".")[1] in INSTRUCTOR_ONLY
    ]
    assert not wrong, "a grading would need an instructor's tool that the zips do not ship: " + "; ".join(wrong)


def test_a_copy_without_the_instructors_tools_refuses_their_commands_and_still_grades(tmp_path, monkeypatch, capsys):
    """A shipped copy run in the instructor's venv, where an editable install could lend it the checkout's
    release/ (a mixed engine): the copy is judged by its own folder."""
    monkeypatch.setattr(cli, "ENGINE", tmp_path)  # an engine folder without release/ and cohort/
    for command in ("release", "snapshot", "grade-all", "grade-many"):
        assert cli.main([command, "attention"]) == 2
        err = capsys.readouterr().err
        assert f"`{command}` is a course staff's command" in err and "run it in the kit's checkout" in err
    assert cli.main(["grade", "attention", str(tmp_path / "nothing.py")]) == 2  # a grading command goes on
    assert "does not exist" in capsys.readouterr().err


# The issue "One record per grading" aimed at a grading engine under 9,000 lines. That aim is missed: issues
# 48-50 (2026-12-07) added what a platform must run (the typed config schema, the bounded readers of student
# bytes, the diagnosis phase's process, the binary wire, the import rule, the gradient-scope evidence), and
# the shipped engine measured 10,500 lines. This guard keeps it from growing further unnoticed; it is not the aim.
SHIPPED_LINES_AIM = 11_000


def test_the_engine_a_platform_runs_stays_under_its_line_aim():
    """What autograder.zip and the PrairieLearn package carry of the engine (the instructor's tools are not in it)."""
    lines = sum((ENGINE / rel).read_text().count("\n") for rel in shipped_engine_files() if rel.endswith(".py"))
    assert lines < SHIPPED_LINES_AIM, f"the shipped engine has {lines} lines; the aim is under {SHIPPED_LINES_AIM}"
