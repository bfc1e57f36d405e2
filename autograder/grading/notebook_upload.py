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
* a cell that is not Python even without its IPython lines is left out whole, with its syntax error.

A file that is not a notebook (broken JSON, no cells) is a :class:`NotebookProblem` saying so.
"""

from __future__ import annotations

import ast
import builtins
import copy
import json
import re
import sys
from dataclasses import dataclass, field

MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024  # outputs and plots make notebooks far larger than their code


class NotebookProblem(ValueError):
    """The upload's notebook cannot be read as one; the message says what to upload instead
    (``submission.py`` reports it as the upload's problem)."""


CONTRACT_IMPORTS = frozenset({"torch", "numpy", "einops"})  # and the standard library (seam_messages.ALLOWED_IMPORTS)
# Cell magics whose body is Python run as the cell (``%%writefile <module>.py`` only for the graded file).
PYTHON_CELL_MAGICS = ("time", "timeit", "capture", "prun")
# Calls that read or write the outside world, or run code given as text: never run at import.
IO_CALLS = frozenset(
    {"open", "input", "print", "exec", "eval", "compile", "breakpoint", "exit", "quit", "help", "display", "__import__"}
)
IO_METHODS = frozenset(
    {
        "load", "loadtxt", "genfromtxt", "fromfile", "read_csv", "read", "read_text", "read_bytes", "urlopen",
        "urlretrieve", "download", "system", "popen", "Popen", "run", "call", "check_output", "save", "savez",
        "savetxt", "write", "write_text", "show", "savefig", "from_pretrained", "load_state_dict",
    }
)  # fmt: skip
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


def _snippet(text: str, width: int = 40) -> str:
    line = " ".join(text.strip().split())
    return "`" + (line if len(line) <= width else line[: width - 3].rstrip() + "...") + "`"


def read_notebook(raw: bytes, name: str, filename: str) -> list[str]:
    """The sources of the notebook's code cells, in order; :class:`NotebookProblem` if it is no notebook."""
    advice = f"open it in Jupyter or Colab and save it again, or upload {filename} (File > Download > .py)."
    if len(raw) > MAX_NOTEBOOK_BYTES:
        raise NotebookProblem(f"{name} is over {MAX_NOTEBOOK_BYTES // 2**20} MB; clear its outputs, or upload {filename}.")
    try:
        document = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise NotebookProblem(f"{name} is not a readable notebook (not UTF-8 text, byte {exc.start}); {advice}") from None
    except json.JSONDecodeError as exc:
        raise NotebookProblem(
            f"{name} is not a readable notebook (its JSON is broken at line {exc.lineno}, column {exc.colno}: {exc.msg}); "
            + advice
        ) from None
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
    state = _State(module)
    parts = [f"# The code cells of {name}, as grading reads them (autograder/grading/notebook_upload.py).\n"]
    for number, text in enumerate(cells, 1):
        code = _python_of_cell(text, number, filename, state.dropped)
        if code is None or not code.strip():
            continue
        try:
            tree = ast.parse(code)
        except SyntaxError as exc:
            state.dropped.append(f"cell {number} (not Python: {exc.msg}, its line {exc.lineno})")
            continue
        kept = state.keep(tree, code, number)
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


def _taken_from(tree: ast.Module, module: str, aliases: set[str]) -> set[str]:
    """The names a cell takes from ``module``: ``module.f`` (or ``m.f`` after ``import module as m``, in
    any cell so far: ``aliases`` grows) and ``from module import f``."""
    taken: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {a.asname for a in node.names if a.name == module and a.asname}
        elif isinstance(node, ast.ImportFrom) and node.module == module and not node.level:
            taken |= {a.name for a in node.names if a.name != "*"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            taken.add(node.attr)
    return taken


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
            dropped.append(f"cell {number} line {i} ({_snippet(line)}: an IPython command)")
            indent = line[: len(line) - len(stripped)]
            out.append(f"{indent}pass" if indent else "")  # an indented block keeps a statement
        else:
            out.append(line)
    return "\n".join(out)


class _State:
    """What the cells kept so far define, for the next cell's statements."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.imported: set[str] = set()  # names bound by kept imports
        self.defined: set[str] = set()  # names bound by kept definitions and assignments
        self.own: set[str] = set()  # the notebook's own functions and classes
        self.left_out: set[str] = set()  # names only a left-out statement binds
        self.dropped: list[str] = []
        self.imports_module = False
        self.wanted: set[str] = (
            set()
        )  # names the notebook takes from the module (`attention.softmax`, `from attention import softmax`)
        self.aliases = {module}  # the names the module is imported as (`import attention as att`)
        self.future: list[str] = []  # `from __future__` imports: each cell may have them, a file only at its top

    def keep(self, tree: ast.Module, code: str, cell: int) -> list[str]:
        lines = code.splitlines()
        kept = []
        self.wanted |= _taken_from(tree, self.module, self.aliases)
        for node in tree.body:
            why = self._refusal(node)
            if why:
                self.dropped.append(
                    f"cell {cell} line {node.lineno} ({_snippet(ast.get_source_segment(code, node) or '')}: {why})"
                )
                self.left_out |= _bound(node) - self.defined - self.imported
                continue
            self._bind(node)
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                self.future.append(ast.get_source_segment(code, node) or ast.unparse(node))  # first in the file
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                kept.append("\n".join(lines[first - 1 : node.end_lineno]))
            else:
                kept.append(ast.get_source_segment(code, node) or ast.unparse(node))
        return kept

    def _bind(self, node: ast.stmt) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            self.imported |= _bound(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.own.add(node.name)
            self.defined.add(node.name)
        else:
            self.defined |= _bound(node)
        self.left_out -= _bound(node)

    # -- what a statement may do at import ---------------------------------------------------
    def _refusal(self, node: ast.stmt) -> str:
        """Why ``node`` is left out ("" when it is kept)."""
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            return self._import_refusal(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return ""
        if isinstance(node, ast.Expr):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return ""  # a docstring
            if not _calls(node.value):
                return "a value shown, not kept"
            return self._value_refusal(node.value) or "runs code at import"  # a call's value is never kept
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = getattr(node, "value", None)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if isinstance(node, ast.AugAssign):
                targets = []
                value = ast.BinOp(left=_as_load(node.target), op=node.op, right=node.value)
            for target in targets:  # obj.attr = ... and table[i] = ... read their object
                if not isinstance(target, ast.Name):
                    why = self._value_refusal(_as_load(target))
                    if why:
                        return why
            return self._value_refusal(value) if value is not None else ""
        if isinstance(node, ast.Pass):
            return ""
        if isinstance(node, ast.If):
            why = self._value_refusal(node.test)
            return why or self._block_refusal(node.body + node.orelse)
        if isinstance(node, ast.Try):
            parts = node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body]
            return self._block_refusal(parts)
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            return "a loop that runs at import"
        if isinstance(node, (ast.With, ast.AsyncWith)):
            return "a with block that runs at import"
        return f"a top-level {type(node).__name__.lower()} statement"

    def _block_refusal(self, body: list[ast.stmt]) -> str:
        for statement in body:
            why = self._refusal(statement)
            if why:
                return why
        return ""

    def _import_refusal(self, node: ast.Import | ast.ImportFrom) -> str:
        if isinstance(node, ast.ImportFrom) and node.level:
            return "a relative import"
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        for name in names:
            top = name.split(".")[0]
            if top == self.module:
                self.imports_module = True
                return f"imports {self.module}, the file being graded"
            if top not in CONTRACT_IMPORTS and top not in getattr(sys, "stdlib_module_names", ()):
                return f"imports {top}, which grading does not have"
        return ""

    def _value_refusal(self, value: ast.expr) -> str:
        """Why computing ``value`` at import is not a constant's assignment ("" if it is)."""
        local: set[str] = set()  # comprehension and lambda variables
        for sub in ast.walk(value):
            if isinstance(sub, ast.Lambda):
                local |= {a.arg for a in sub.args.args + sub.args.kwonlyargs + sub.args.posonlyargs}
            elif isinstance(sub, ast.comprehension):
                local |= {n.id for n in ast.walk(sub.target) if isinstance(n, ast.Name)}
        lazy = {id(n) for sub in ast.walk(value) if isinstance(sub, ast.Lambda) for n in ast.walk(sub.body)}
        for sub in ast.walk(value):
            if id(sub) in lazy:
                continue  # a lambda's body runs when it is called, not at import
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id not in local:
                if sub.id in self.left_out:
                    return f"uses {sub.id}, which only left-out code sets"
                if sub.id not in self.defined | self.imported and not hasattr(builtins, sub.id):
                    return f"uses {sub.id}, which no kept cell defines"
            elif isinstance(sub, ast.Call):
                why = self._call_refusal(sub.func)
                if why:
                    return why
            elif isinstance(sub, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
                return "runs code at import"
        return ""

    def _call_refusal(self, func: ast.expr) -> str:
        """A call is a constant's only if it calls a builtin or an imported library, and reads and writes nothing."""
        attributes = []
        root = func
        while True:
            if isinstance(root, ast.Attribute):
                attributes.append(root.attr)
                root = root.value
            elif isinstance(root, (ast.Call, ast.Subscript)):
                root = root.func if isinstance(root, ast.Call) else root.value
            else:
                break
        if not isinstance(root, ast.Name):
            return "runs code at import"
        if root.id in self.own:
            return f"calls {root.id}, the notebook's own code, at import"
        if any(a in IO_METHODS for a in attributes) or (not attributes and root.id in IO_CALLS):
            return "reads, writes or shows something at import"
        if root.id in self.imported or (hasattr(builtins, root.id) and root.id not in self.defined):
            return ""
        return "runs code at import"


def _bound(node: ast.stmt) -> set[str]:
    """The top-level names a statement binds."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"}
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    names: set[str] = set()
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        targets = [node.target]
    elif isinstance(node, (ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [i.optional_vars for i in node.items if i.optional_vars is not None]
    for target in targets:
        for sub in ast.walk(target):
            if isinstance(sub, ast.Name):
                names.add(sub.id)
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt):
            names |= _bound(child)
        elif isinstance(child, ast.ExceptHandler):
            names |= {child.name} if child.name else set()
            for statement in child.body:
                names |= _bound(statement)
    return names


def _as_load(target: ast.expr) -> ast.expr:
    """A target (``obj.attr``, ``table[i]``) as an expression that reads it: what assigning to it reads."""
    # A copy made node by node: not through text (an int past 4,300 digits cannot be written back as one), nor
    # by copy.deepcopy (an index of 300 terms is too deep for its recursion); the statement keeps its own.
    copies = {id(node): copy.copy(node) for node in ast.walk(target)}
    for node in ast.walk(target):
        new = copies[id(node)]
        for name, value in ast.iter_fields(node):
            if isinstance(value, ast.AST):
                setattr(new, name, copies.get(id(value), value))
            elif isinstance(value, list):
                setattr(new, name, [copies.get(id(v), v) if isinstance(v, ast.AST) else v for v in value])
        if hasattr(new, "ctx"):
            new.ctx = ast.Load()
    return copies[id(target)]


def _calls(value: ast.expr) -> bool:
    return any(isinstance(sub, ast.Call) for sub in ast.walk(value))
