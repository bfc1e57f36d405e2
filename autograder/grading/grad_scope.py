"""Precise evidence that code runs with gradients off: the grader's own reading of the source, never a report.

One job: say which top-level functions (and ``Class.method``) of a file switch gradients off around a call on a
path that can run: a ``with torch.no_grad():``, ``torch.inference_mode()`` or ``torch.set_grad_enabled(False)``
block holding a call, or such a decorator. A mention does not count: ``torch.no_grad()`` called bare, a block
under ``if False:`` or after a ``return``, ``set_grad_enabled(True)``, an empty block. Whether gradients are off
during a call is a property no returned value shows, so a test that pays for it pays on this evidence alone (and
the student process's own log of ``torch.is_grad_enabled()`` can only fail it).
"""

from __future__ import annotations

import ast

GRAD_OFF = frozenset(
    {
        "torch.no_grad",
        "torch.inference_mode",
        "torch.autograd.no_grad",
        "torch.autograd.inference_mode",
        "torch.autograd.grad_mode.no_grad",
        "torch.autograd.grad_mode.inference_mode",
    }
)
SET_GRAD = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"})


def _aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted name, from the file's imports (``import torch as T``, ``from torch import no_grad``)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([aliases.get(node.id, node.id), *reversed(parts)])


def _switches_off(expr: ast.AST, aliases: dict[str, str]) -> bool:
    """``torch.no_grad()``, ``torch.no_grad`` (a decorator), ``torch.set_grad_enabled(False)``..."""
    if isinstance(expr, ast.Call):
        name = _dotted(expr.func, aliases)
        if name in GRAD_OFF:
            return not expr.args or not (isinstance(expr.args[0], ast.Constant) and expr.args[0].value is False)
        if name in SET_GRAD:
            return len(expr.args) == 1 and isinstance(expr.args[0], ast.Constant) and expr.args[0].value is False
        return False
    return _dotted(expr, aliases) in GRAD_OFF  # a bare decorator: @torch.no_grad


def _constant(test: ast.AST) -> bool | None:
    return bool(test.value) if isinstance(test, ast.Constant) else None


def _live_blocks(body: list[ast.stmt]):
    """The statements of ``body`` that can run, and of the blocks inside them (not nested functions or classes)."""
    for statement in body:
        yield statement
        if isinstance(statement, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            return  # what follows in this block never runs
        if isinstance(statement, ast.If):
            known = _constant(statement.test)
            yield from _live_blocks(statement.body if known is not False else [])
            yield from _live_blocks(statement.orelse if known is not True else [])
        elif isinstance(statement, ast.While):
            yield from _live_blocks(statement.body if _constant(statement.test) is not False else [])
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            yield from _live_blocks(statement.body + statement.orelse)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from _live_blocks(statement.body)
        elif isinstance(statement, ast.Try):
            yield from _live_blocks(statement.body + statement.orelse + statement.finalbody)
            for handler in statement.handlers:
                yield from _live_blocks(handler.body)


def _holds_a_call(body: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Call) for s in _live_blocks(body) for n in ast.walk(s))


def _grad_off(function: ast.FunctionDef | ast.AsyncFunctionDef, aliases: dict[str, str]) -> bool:
    if any(_switches_off(d, aliases) for d in function.decorator_list) and _holds_a_call(function.body):
        return True
    live = list(_live_blocks(function.body))
    for statement in live:
        if isinstance(statement, (ast.With, ast.AsyncWith)) and any(
            _switches_off(item.context_expr, aliases) for item in statement.items
        ):
            if _holds_a_call(statement.body):
                return True
        # torch.set_grad_enabled(False) as a statement switches gradients off until switched back (a bare
        # torch.no_grad() does nothing: it only makes a context manager)
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            if _dotted(statement.value.func, aliases) in SET_GRAD and _switches_off(statement.value, aliases):
                if _holds_a_call(live[live.index(statement) + 1 :]):
                    return True
    # a function of its own that switches gradients off, called here (nanoGPT's @torch.no_grad() estimate_loss)
    nested = {s.name for s in live if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and _grad_off(s, aliases)}
    called = {n.func.id for s in live for n in ast.walk(s) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    return bool(nested & called)


def grad_off_functions(source: str) -> list[str]:
    """The top-level functions and ``Class.method`` of ``source`` that switch gradients off around a live call."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    # the last definition of a name is the one that runs (a file may define a function twice)
    last = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    found = []
    for node in last.values():
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _grad_off(node, aliases):
            found.append(node.name)
        elif isinstance(node, ast.ClassDef):
            methods = {m.name: m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
            found += [f"{node.name}.{m.name}" for m in methods.values() if _grad_off(m, aliases)]
    return found


def grad_off_in(name: str, switching: list[str] | set[str], reach: dict[str, set[str]]) -> bool:
    """Whether ``name`` switches gradients off, or a function or method of the file it refers to does (``reach``:
    ``banned.refers_to`` of the same source)."""
    owners = {s.split(".")[0] for s in switching}
    return name in owners or bool(owners & set(reach.get(name, set())))


__all__ = ["grad_off_functions", "grad_off_in"]
