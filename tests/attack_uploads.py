"""The uploads of issue 49's red team, each beside the honest upload it is measured against.

Shared by the readers' own tests (tests/test_bounded_readers.py) and the attack matrix through every entry point
(tests/test_attack_matrix.py). An upload is built when asked for (the zip inflates to 19 MB).
"""

from __future__ import annotations

import ast
import io
import itertools
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass

from conftest import reference_source

BIG_LIST = "BIG = [" + ",".join(["0"] * 500_000) + "]\n"  # 1 MB of source, an AST of 470 MB
TOO_LARGE = "too large for the grader to read"  # what a refused upload is told (grading.bounded.Unreadable.said)


def notebook(*cells: str, execution_count: str = "1") -> bytes:
    """An nbformat 4 notebook of code cells; ``execution_count`` written into its JSON as it is."""
    document = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "language": "python", "display_name": "Python 3"}},
        "cells": [
            {"cell_type": "code", "metadata": {}, "execution_count": 0, "outputs": [], "source": c.splitlines(True)}
            for c in cells
        ],
    }
    return json.dumps(document).replace('"execution_count": 0', f'"execution_count": {execution_count}').encode()


def inflating_zip(source: str) -> bytes:
    """A 20 KB zip holding a 19 MB notebook: ``source`` in one cell, its output 4.7 million empty lists (JSON whoever
    parses it builds into 300 MB of objects; the grader's reader stops at its bound whatever the heap it forks from)."""
    document = json.loads(notebook(source))
    document["cells"][0]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": [[]] * 4_700_000}]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as zf:
        zf.writestr("attention.ipynb", json.dumps(document))
    return buffer.getvalue()


def padded(source: str) -> str:
    """The red team's disguise: a statement that does nothing after every statement, every name read in parentheses."""
    tree = ast.parse(source)
    no_ops = itertools.cycle(["pass", "...", "0", "None"])
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                setattr(node, name, [s for statement in body for s in (statement, ast.parse(next(no_ops)).body[0])])
    lines = [line.encode() for line in ast.unparse(tree).split("\n")]
    reads = [n for n in ast.walk(ast.parse(b"\n".join(lines))) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    for n in sorted(reads, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        line = lines[n.lineno - 1]
        lines[n.lineno - 1] = (
            line[: n.col_offset] + b"(" + line[n.col_offset : n.end_col_offset] + b")" + line[n.end_col_offset :]
        )
    return b"\n".join(lines).decode() + "\n"


@dataclass(frozen=True)
class Upload:
    """One file uploaded for attention: its name, how to build its bytes, the honest upload it is measured against
    (a key of :data:`BASELINES`), and what it is told when grading refuses it ("" when it is graded)."""

    filename: str
    build: Callable[[], bytes]
    baseline: str
    refused: str = ""


def _reference() -> str:
    return reference_source("attention")


# The same honest code uploaded plainly: the reference as a clean notebook, and as a .py.
BASELINES = {
    "notebook": Upload("attention.ipynb", lambda: notebook(_reference()), "notebook"),
    "py": Upload("attention.py", lambda: _reference().encode(), "py"),
}

# Issue 49's attacks on the grader's readers of a student's bytes (measured before the fix: an internal error, or
# the grader's CPU and memory: 173 s against 12, 728 MB, 674 MB, 833 MB).
ATTACKS = {
    # a number no reader expected: json's plain ValueError was "the grader hit an internal error"
    "digits": Upload("attention.ipynb", lambda: notebook(_reference(), execution_count="7" * 5000), "notebook"),
    # 8,000 `print(i)` lines, all left out: the conversion was quadratic
    "prints": Upload(
        "attention.ipynb", lambda: notebook(_reference(), "\n".join(f"print({i})" for i in range(8000))), "notebook"
    ),
    # a 1 MB notebook holding one 500,000-zero list (its AST 470 MB): refused whole
    "list_notebook": Upload("attention.ipynb", lambda: notebook(_reference(), BIG_LIST), "notebook", TOO_LARGE),
    # a 20 KB zip inflating to a 19 MB notebook (4.7 million empty lists): refused whole
    "inflating_zip": Upload("upload.zip", lambda: inflating_zip(_reference()), "notebook", TOO_LARGE),
    # a 1 MB .py: the reference and one list literal
    "literal_py": Upload("attention.py", lambda: (_reference() + BIG_LIST).encode(), "py", TOO_LARGE),
    # an innocent student: a null byte pasted from a terminal (a ValueError on Python 3.10): that cell left out
    "null_cell": Upload("attention.ipynb", lambda: notebook(_reference(), "EPS = 1e-9\nNAME = 'a\0b'"), "notebook"),
}
