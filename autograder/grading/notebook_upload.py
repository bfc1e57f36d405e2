"""A notebook upload graded as the ``.py`` it holds: the module its code cells define.

One job: :func:`notebook_module` reads a ``.ipynb`` (nbformat 4 JSON, read with ``json``: nothing is run,
nothing imported) and returns the Python a student's ``<module>.py`` would hold, with a note saying what
was left out. The cells are taken in order (a later definition replaces an earlier one, as running the
notebook top to bottom does); from each, the grader keeps what *defines* the module and leaves out what
*runs* when it is imported:

* kept: imports (of the standard library, torch, numpy and einops: the contract's; others, such as
  matplotlib or google.colab, cannot be imported by grading and are left out), function and class
  definitions, docstrings, and assignments of values built from literals, the names kept so far and calls
  of the imported libraries or of builtins (``EPS = 1e-9``, ``NEG_INF = float("-inf")``,
  ``MASK = torch.ones(4, 4).triu(1)``); an ``if`` or ``try`` made only of such statements;
* left out: IPython lines (``%magic``, ``!shell``, ``name?``, cell magics such as ``%%bash``; the body of
  ``%%time``, ``%%capture`` and ``%%writefile <module>.py`` is read as Python), and every other top-level
  statement: expressions and calls (``print(...)``, ``train(model, data)``), loops, ``with`` blocks, and
  assignments that call the notebook's own functions or classes or anything not imported
  (``model = TinyLM(...)``, ``history = train(...)``), read files (``open``, ``torch.load``), or use a
  name only such a statement set;
* a cell that is not Python even without its IPython lines is left out whole, with its syntax error. So is a cell
  no reader can read (a null byte, an int past 4,300 digits), on every Python alike.

What each statement defines is :mod:`.notebook_statements`'s to say; the submission reads a notebook in a child
of its own (:mod:`.bounded`).

A file that is not a notebook (broken JSON, no cells) is a :class:`NotebookProblem` saying so.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field

from .notebook_statements import Definitions, snippet

MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024  # outputs and plots make notebooks far larger than their code


class NotebookProblem(ValueError):
    """The upload's notebook cannot be read as one; the message says what to upload instead
    (``submission.py`` reports it as the upload's problem)."""


# Cell magics whose body is Python run as the cell (``%%writefile <module>.py`` only for the graded file).
PYTHON_CELL_MAGICS = ("time", "timeit", "capture", "prun")
# Matched on a line without its indent, by patterns whose parts cannot match the same characters: a line of
# 300,000 spaces and an `x` took 90 s of CPU in a pattern starting `\s*[\w., ]+` (the red team's).
_HELP = re.compile(r"\?*[\w.\[\]()'\"]+\?{1,2}\s*$|\?{1,2}[\w.]+\s*$")  # name?  name??  ?name
_SHELL_ASSIGN = re.compile(r"[\w.,][\w., ]*=\s*[!%]")  # files = !ls    t = %timeit -o f()
MAX_MAGIC_LINE = 2_000  # longer lines are never IPython commands
MAX_LISTED = 8  # dropped items the note names one by one


@dataclass
class Extracted:
    source: str
    dropped: list[str] = field(default_factory=list)  # what was left out, for the note

    def note(self, notebook: str, filename: str) -> str:
        text = (
            f"graded the code cells of {notebook} as {filename} (its imports, functions, classes and constants, "
            "in cell order; code that runs at the top level is left out, as if the notebook were imported)."
        )
        if self.dropped:
            listed = self.dropped[:MAX_LISTED]
            more = len(self.dropped) - len(listed)
            text += " Left out: " + "; ".join(listed) + (f"; and {more} more" if more > 0 else "") + "."
        return text


def read_notebook(raw: bytes, name: str, filename: str) -> list[str]:
    """The sources of the notebook's code cells, in order; :class:`NotebookProblem` if it is no notebook."""
    advice = f"open it in Jupyter or Colab and save it again, or upload {filename} (File > Download > .py)."
    if len(raw) > MAX_NOTEBOOK_BYTES:
        raise NotebookProblem(f"{name} is over {MAX_NOTEBOOK_BYTES // 2**20} MB; clear its outputs, or upload {filename}.")
    try:  # a number is kept only if short: no field the grader reads is one (an execution_count of 5,000 digits)
        document = json.loads(raw.decode("utf-8-sig"), parse_int=lambda text: int(text) if len(text) <= 20 else None)
    except UnicodeDecodeError as exc:
        raise NotebookProblem(f"{name} is not a readable notebook (not UTF-8 text, byte {exc.start}); {advice}") from None
    except json.JSONDecodeError as exc:
        raise NotebookProblem(
            f"{name} is not a readable notebook (its JSON is broken at line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            + advice
        ) from None
    except ValueError as exc:
        raise NotebookProblem(f"{name} is not a readable notebook ({str(exc)[:200]}); {advice}") from None
    if not isinstance(document, dict):
        raise NotebookProblem(f"{name} is not a notebook (no cells); {advice}")
    cells = document.get("cells")
    if cells is None and isinstance(document.get("worksheets"), list):  # nbformat 3: cells in worksheets, code in "input"
        cells = [c for sheet in document["worksheets"] if isinstance(sheet, dict) for c in sheet.get("cells", [])]
    if not isinstance(cells, list):
        raise NotebookProblem(f"{name} is not a notebook (no cells); {advice}")
    metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    kernel = metadata.get("kernelspec") if isinstance(metadata.get("kernelspec"), dict) else {}
    info = metadata.get("language_info") if isinstance(metadata.get("language_info"), dict) else {}
    language = str(kernel.get("language") or info.get("name") or "python")
    if language.lower() not in ("python", "python3"):
        raise NotebookProblem(f"{name} is a {language} notebook; the assignment is Python: upload {filename}.")
    sources = []
    for cell in cells:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = cell.get("source", cell.get("input", ""))
        if isinstance(text, list):
            text = "".join(str(part) for part in text)
        sources.append(str(text))
    return sources


def notebook_module(raw: bytes, name: str, module: str, graded: frozenset[str] = frozenset()) -> Extracted:
    """The module a notebook's code cells define (see the module's docstring), and what was left out. A notebook
    that imports ``module`` and defines none of the ``graded`` functions (none at all when they are not given)
    is one that uses the module, not one that is it: a :class:`NotebookProblem`."""
    filename = f"{module}.py"
    cells = read_notebook(raw, name, filename)
    state = Definitions(module)
    parts = [f"# The code cells of {name}, as grading reads them (autograder/grading/notebook_upload.py).\n"]
    for number, text in enumerate(cells, 1):
        try:  # a cell the grader cannot read is left out, and said; only nesting too deep refuses the notebook
            kept = _cell(state, text, number, filename)
        except SyntaxError as exc:
            kept = state.dropped.append(f"cell {number} (not Python: {exc.msg})")
        except (RecursionError, MemoryError):
            raise
        except Exception as exc:  # noqa: BLE001 - the student's cell (an int past 4,300 digits...), not the grader's error
            kept = state.dropped.append(f"cell {number} (could not be read: {type(exc).__name__}: {str(exc)[:80]})")
        if kept:
            parts.append(f"\n# cell {number}\n" + "\n\n".join(kept) + "\n")
    if state.imports_module and not (state.own & graded if graded else state.own):
        # The lab notebook: `import attention`, then `attention.softmax(x)`; its own helpers (`def todo()`) are
        # not the assignment's. Graded as the module, every test would fail with "has no softmax".
        taken = f" (it uses {', '.join(sorted(state.wanted)[:4])} from {filename})" if state.wanted else ""
        raise NotebookProblem(
            f"{name} imports {module} rather than defining its functions{taken}: it is a notebook that uses your "
            f"{filename} (the lab notebook?). Upload your {filename}, the file those functions are written in."
        )
    future = "".join(f"{line}\n" for line in dict.fromkeys(state.future))
    return Extracted(parts[0] + future + "".join(parts[1:]), state.dropped)


def _cell(state: Definitions, text: str, number: int, filename: str) -> list[str] | None:
    """What the cell keeps (None: nothing); SyntaxError when it is not Python, even without its IPython lines."""
    if "\0" in text:  # Python 3.10's parser raises ValueError for it, 3.11's SyntaxError: the same on both
        raise SyntaxError("source code cannot contain null bytes")
    code = _python_of_cell(text, number, filename, state.dropped)
    if code is None or not code.strip():
        return None
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise SyntaxError(f"{exc.msg}, its line {exc.lineno}") from None
    return state.keep(tree, code, number)


def _python_of_cell(text: str, number: int, filename: str, dropped: list[str]) -> str | None:
    """The cell without its IPython lines (None: a cell magic whose body is not Python)."""
    lines = text.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        magic = lines[0].strip()[2:].split()
        word = magic[0] if magic else ""
        if word in PYTHON_CELL_MAGICS or (word in ("writefile", "file") and magic[-1:] == [filename]):
            lines = lines[1:]
        else:
            dropped.append(f"cell {number} (a %%{word} cell)")
            return None
    try:
        ast.parse("\n".join(lines))
        return "\n".join(lines)  # Python as it is: no line is an IPython command (a '%' in a string stays)
    except SyntaxError:
        pass
    out = []
    for i, line in enumerate(lines, 1):
        stripped = line.lstrip()
        short = len(stripped) <= MAX_MAGIC_LINE
        if stripped.startswith(("%", "!")) or short and (_HELP.match(stripped) or _SHELL_ASSIGN.match(stripped)):
            dropped.append(f"cell {number} line {i} ({snippet(line)}: an IPython command)")
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}pass" if indent else "")  # an indented block keeps a statement
        else:
            out.append(line)
    return "\n".join(out)
