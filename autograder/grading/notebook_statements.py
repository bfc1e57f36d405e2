"""What a notebook's code cells define, statement by statement: the module :mod:`.notebook_upload` writes.

One job: :class:`Definitions` reads each cell's statements in order and keeps what *defines* the module
(imports of the contract's packages and the standard library, functions, classes, constants built from
literals, the names kept so far and calls of imported libraries or builtins), and says why it leaves out
the rest (code that runs at import: calls, loops, files read, names only such code sets). Every step is
linear in the cell: its lines are split once, and the names kept are looked up, never copied.
"""

from __future__ import annotations

import ast
import builtins
import copy
import sys

CONTRACT_IMPORTS = frozenset({"torch", "numpy", "einops"})  # and the standard library (seam_messages.ALLOWED_IMPORTS)
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


def snippet(text: str, width: int = 40) -> str:
    line = " ".join(text.strip().split())
    return "`" + (line if len(line) <= width else line[: width - 3].rstrip() + "...") + "`"


def taken_from(tree: ast.Module, module: str, aliases: set[str]) -> set[str]:
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


class Definitions:
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
        lines = code.encode().split(b"\n")  # the cell's only break (notebook_upload): split once, not per statement
        kept = []
        self.wanted |= taken_from(tree, self.module, self.aliases)
        for node in tree.body:
            why = self._refusal(node)
            if why:
                self.dropped.append(f"cell {cell} line {node.lineno} ({snippet(_segment(lines, node))}: {why})")
                self.left_out |= _bound(node) - self.defined - self.imported
                continue
            self._bind(node)
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                self.future.append(_segment(lines, node))  # first in the file
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                kept.append(b"\n".join(lines[first - 1 : node.end_lineno]).decode())
            else:
                kept.append(_segment(lines, node))
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
                if sub.id not in self.defined and sub.id not in self.imported and not hasattr(builtins, sub.id):
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


def _segment(lines: list[bytes], node: ast.stmt) -> str:
    """``ast.get_source_segment`` from the cell's lines, encoded and split once (its columns count UTF-8 bytes):
    linear in the segment, where ``get_source_segment`` splits the whole cell again for every statement."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    if first == last:
        return lines[first][node.col_offset : node.end_col_offset].decode(errors="replace")
    parts = [lines[first][node.col_offset :], *lines[first + 1 : last], lines[last][: node.end_col_offset]]
    return b"\n".join(parts).decode(errors="replace")


def _calls(value: ast.expr) -> bool:
    return any(isinstance(sub, ast.Call) for sub in ast.walk(value))
