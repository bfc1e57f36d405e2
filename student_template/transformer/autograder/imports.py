"""What a submission may import, and the one rule for an import grading does not have.

One job: the import policy, the same for a ``.py``, a zip and a notebook, and for the student's own ``pytest``
(this file ships in the student folder too, so it uses the standard library alone). A submission may import the
standard library, torch, numpy and einops (the contract). A top-level import of anything else (matplotlib for a
plot, tqdm for a progress bar) is left out, with a note, as the notebook path leaves out such a cell: an unused
import then costs nothing anywhere, and code that uses the name fails where it is used, with the same words
locally, on Gradescope and on PrairieLearn. An import inside a function runs when it is called, against the
grading environment, which holds exactly the packages the platform installs.
"""

from __future__ import annotations

import ast
import sys

ALLOWED_PACKAGES = frozenset({"torch", "numpy", "einops"})
ALLOWED_TEXT = "the standard library, torch, numpy and einops"


def allowed(module: str) -> bool:
    top = module.split(".")[0]
    return top in ALLOWED_PACKAGES or top in sys.stdlib_module_names or top == "__future__"


def _statements(body: list[ast.stmt]):
    """Top-level statements, and those of top-level if blocks (they run at import too). A try block is the
    student's own answer to a missing package: its except clause runs in grading as anywhere without it."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _statements(node.body + node.orelse)


def _foreign(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if not allowed(a.name)]
    if isinstance(node, ast.ImportFrom) and not node.level and node.module and not allowed(node.module):
        return [node.module]
    return []


def _bound_names(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.asname or a.name.split(".")[0] for a in node.names]
    return [a.asname or a.name for a in node.names]


def leave_out_foreign_imports(source: str, filename: str) -> tuple[str, str]:
    """``source`` with each top-level import of a package grading does not have replaced by ``pass`` (line
    numbers kept), and the note saying so ("" when nothing was left out, or when the source does not parse:
    the import then reports the syntax error itself)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return source, ""
    lines = source.splitlines(keepends=True)
    found = [(node, _foreign(node)) for node in _statements(tree.body)]
    found = [(node, modules) for node, modules in found if modules]
    if not found:
        return source, ""
    said = []
    for node, modules in reversed(found):  # from the end, so earlier offsets stay right
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        start, end = node.col_offset, node.end_col_offset or len(lines[last])
        # the same number of lines, so a traceback's line numbers still point at the student's code
        replacement = "pass" + "\n" * (last - first)
        lines[first : last + 1] = [lines[first][:start] + replacement + lines[last][end:]]
        said.append((node.lineno, modules, _bound_names(node)))
    parts = [
        f"`{', '.join(modules)}` (line {line}, binding {', '.join(f'`{n}`' for n in names)})"
        for line, modules, names in reversed(said)
    ]
    note = (
        f"{filename} imports {'; '.join(parts)}, which grading does not have: a submission may import {ALLOWED_TEXT}. "
        "Grading leaves those imports out (so does the public tests' conftest), so code that uses those names "
        "fails when it runs; remove the imports, or write that part with the allowed packages."
    )
    return "".join(lines), note
