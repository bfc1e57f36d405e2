"""Turn a reference solution into the student's stub.

In ``solutions/<a>/<module>.py`` a solution body sits between two marker lines::

    def softmax(x, dim=-1):
        "The contract (kept in the stub)."
        # BEGIN SOLUTION
        ...
        # END SOLUTION

In the stub that block becomes a ``TODO`` and a ``raise NotImplementedError``
naming the function (``MultiHeadAttention.forward`` inside a class). Code
between ``# BEGIN HIDDEN`` and ``# END HIDDEN`` is dropped entirely (helpers
only the reference needs). Markers must balance and must not nest;
otherwise :class:`MarkerError` says where.
"""

from __future__ import annotations

import ast
import re

BEGIN = re.compile(r"^(\s*)# BEGIN (SOLUTION|HIDDEN)\s*$")
END = re.compile(r"^(\s*)# END (SOLUTION|HIDDEN)\s*$")
MARKER = re.compile(r"^\s*# (BEGIN|END) (SOLUTION|HIDDEN)\s*$")


def marked_regions(source: str, kinds: tuple[str, ...] = ("SOLUTION", "HIDDEN")) -> list[tuple[int, int]]:
    """(BEGIN line, END line) of each block of ``kinds`` (what students write), in order; the markers are
    checked by :func:`make_stub`, which every release runs first."""
    regions, start = [], 0
    for number, line in enumerate(source.splitlines(), start=1):
        match = MARKER.match(line)
        if match and match.group(2) in kinds:
            if match.group(1) == "BEGIN":
                start = number
            else:
                regions.append((start, number))
    return regions


class MarkerError(Exception):
    """The solution file's markers are malformed."""


def _enclosing_names(source: str) -> dict[int, str]:
    """Line number -> qualified name of the innermost def/class containing it."""
    names: dict[int, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qual = f"{prefix}.{child.name}" if prefix else child.name
                for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    names[line] = qual
                visit(child, qual)
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return names


def make_stub(source: str, filename: str = "solution") -> str:
    """The student stub for ``source``. Raises MarkerError on unbalanced markers."""
    try:
        names = _enclosing_names(source)
    except SyntaxError as exc:
        raise MarkerError(f"{filename}: the solution does not parse: {exc}") from None
    out: list[str] = []
    open_kind: str | None = None
    open_line = 0
    for number, line in enumerate(source.splitlines(), start=1):
        begin, end = BEGIN.match(line), END.match(line)
        if begin:
            if open_kind:
                raise MarkerError(f"{filename}:{number}: BEGIN {begin.group(2)} inside the block opened at line {open_line}")
            open_kind, open_line = begin.group(2), number
            if open_kind == "SOLUTION":
                indent = begin.group(1)
                where = names.get(number)
                if not where:
                    raise MarkerError(f"{filename}:{number}: a SOLUTION block must be inside a function")
                out.append(f"{indent}# TODO({where}): replace this line with your implementation.")
                out.append(f'{indent}raise NotImplementedError("{where} is not implemented yet")')
            continue
        if end:
            if open_kind != end.group(2):
                raise MarkerError(f"{filename}:{number}: END {end.group(2)} without a matching BEGIN {end.group(2)}")
            open_kind = None
            continue
        if open_kind is None:
            out.append(line)
    if open_kind:
        raise MarkerError(f"{filename}:{open_line}: BEGIN {open_kind} is never closed")
    stub = "\n".join(out) + "\n"
    try:
        ast.parse(stub)
    except SyntaxError as exc:
        raise MarkerError(f"{filename}: the generated stub does not parse ({exc}); check the markers") from None
    return stub
