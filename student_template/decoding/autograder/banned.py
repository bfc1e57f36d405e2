"""Find banned PyTorch names in a submission's source, without running it.

The worker's runtime guards (``worker/guards.py``) see every banned call, but
they report from inside the student's process, where the student's own code
could switch them off. This scan is the second signal, computed on the grader
side from the source text: a top-level function or class that uses a banned
name (directly, or through the module's other functions, classes and aliases)
is treated as calling it, whatever the worker says.

What it recognises, for a banned entry such as ``torch.nn.functional.softmax``
(the key is ``softmax``; for ``torch.nn.Softmax.forward`` it is ``Softmax``):

* an attribute with that name on anything but ``self`` (``torch.softmax``,
  ``F.softmax``, ``x.softmax(-1)``, ``nn.Softmax(dim=-1)``);
* ``from torch... import softmax`` (and any alias of it);
* ``getattr(obj, "softmax")`` with a literal name.

It cannot see names built at run time (``getattr(torch, "soft" + "max")``):
the runtime guard catches those unless the student also disables it (the
README's threat model says so). The module is shipped to students, so that
running the public tests locally reports banned names exactly as grading does.
"""

from __future__ import annotations

import ast
import re
import symtable
from dataclasses import dataclass, field

MODULE_LEVEL = "<module>"


def banned_key(dotted: str) -> str:
    """The name a submission would write: ``torch.nn.Softmax.forward`` -> ``Softmax``."""
    parts = dotted.split(".")
    if parts[-1] == "forward" and len(parts) > 1:
        return parts[-2]
    return parts[-1]


@dataclass
class _Symbol:
    uses: dict[str, tuple[int, str]] = field(default_factory=dict)  # banned key -> (first line, as written)
    refers_to: set[str] = field(default_factory=set)  # other module-level symbols it names


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[0-9]+", name)]


def _key_of(name: str, keys: dict[str, str]) -> str | None:
    """The banned key ``name`` stands for: the key itself, or a private variant of PyTorch's that holds its
    words in order (``_softmax``, ``_safe_softmax``, ``_masked_softmax`` for ``softmax``;
    ``_scaled_dot_product_flash_attention_for_cpu`` for ``scaled_dot_product_attention``;
    ``_native_multi_head_attention`` for ``multi_head_attention_forward``). A public name must be the key."""
    if name in keys:
        return name
    if not name.startswith("_"):
        return None
    words = _words(name)
    for key in keys:
        wanted = [w for w in _words(key) if w != "forward"]
        found = iter(words)
        if wanted and all(w in found for w in wanted):  # a subsequence of the name's words
            return key
    return None


class _Collector:
    """The banned names and module-level symbols one statement uses. Walked with a list, not recursion: a
    correct file may hold an expression nested deeper than Python's recursion limit (600 terms of ``1 + 1``).
    An attribute of ``self``, ``cls`` or one of the file's own classes (``ops.softmax``) is the student's own."""

    def __init__(self, keys: dict[str, str], symbol: _Symbol, own: frozenset[str] = frozenset()) -> None:
        self.keys = keys  # key -> dotted banned name
        self.symbol = symbol
        self.own = own | {"self", "cls"}

    def visit(self, root: ast.AST) -> None:
        pending = [root]
        while pending:
            node = pending.pop()
            if isinstance(node, ast.Attribute):
                key = _key_of(node.attr, self.keys)
                if key and not (isinstance(node.value, ast.Name) and node.value.id in self.own):
                    self._use(key, node)
            elif isinstance(node, ast.ImportFrom):
                if (node.module or "").split(".")[0] == "torch":
                    for alias in node.names:
                        key = _key_of(alias.name, self.keys)
                        if key:
                            self._use(key, node)
            elif isinstance(node, ast.Call):
                if isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2:
                    self._literal(node.args[1], node)
            elif isinstance(node, ast.Subscript):  # vars(torch.Tensor)["softmax"], torch.__dict__["_softmax"]
                self._literal(node.slice, node)
            elif isinstance(node, ast.Name):
                self.symbol.refers_to.add(node.id)
            pending.extend(reversed(list(ast.iter_child_nodes(node))))

    def _literal(self, name: ast.AST, node: ast.AST) -> None:
        if isinstance(name, ast.Constant) and isinstance(name.value, str):
            key = _key_of(name.value, self.keys)
            if key:
                self._use(key, node)

    def _use(self, key: str, node: ast.AST) -> None:
        written = key
        if isinstance(node, ast.Attribute):
            try:
                written = ast.unparse(node)
            except (RecursionError, ValueError):  # deeply nested, or an int past str()'s 4,300 digits: the name is enough
                written = f"....{node.attr}"
        self.symbol.uses.setdefault(key, (getattr(node, "lineno", 0), written[:60]))


def _bound_names(node: ast.stmt) -> list[str]:
    """Module-level names a statement binds: defs, classes, imports, and every name stored anywhere in it
    outside a nested function or class (assignments, ``for`` and ``with`` targets, ``:=``, ``except ... as``,
    inside ``if``/``try``/``for`` blocks too: ``for _f in [torch.softmax]: pass`` binds ``_f``); a function
    binds the names it declares ``global`` as well."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        declared = [n for g in _inside(node) if isinstance(g, ast.Global) for n in g.names]
        return [node.name, *declared]
    names: list[str] = []
    pending: list[ast.AST] = [node]
    while pending:
        item = pending.pop()
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names += _bound_names(item)
            continue
        if isinstance(item, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in item.names]
        elif isinstance(item, ast.Name) and isinstance(item.ctx, (ast.Store, ast.Del)):
            names.append(item.id)
        elif isinstance(item, ast.ExceptHandler) and item.name:
            names.append(item.name)
        elif isinstance(item, (ast.MatchAs, ast.MatchStar)) and item.name:
            names.append(item.name)
        if not isinstance(item, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            pending.extend(ast.iter_child_nodes(item))  # a comprehension's and a lambda's names are their own
    return list(dict.fromkeys(names))


def _inside(node: ast.AST) -> list[ast.AST]:
    """Every node under ``node`` (a list, walked without recursion)."""
    found, pending = [], list(ast.iter_child_nodes(node))
    while pending:
        item = pending.pop()
        found.append(item)
        pending.extend(ast.iter_child_nodes(item))
    return found


_REPLACES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom)

# What binds module names out of the scan's sight: code that does it and names a banned function is read as
# handing that function to every function of the file (``globals()["_f"] = torch.softmax``). Reading through
# them (``vars(torch.Tensor)["softmax"]`` bound to a name) is an ordinary binding.
_BINDING_CALLS = frozenset({"setattr", "exec", "eval", "__setattr__"})
_NAMESPACES = frozenset({"globals", "vars", "locals"})


def _namespace(node: ast.AST) -> bool:
    """``globals()``, ``vars(...)``, ``locals()``, ``x.__dict__``, ``sys.modules``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _NAMESPACES:
        return True
    return isinstance(node, ast.Attribute) and node.attr in ("__dict__", "modules")


def _reads(node: ast.AST) -> set[str]:
    return {n.id for n in _inside(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _binds_dynamically(node: ast.AST) -> bool:
    """``setattr``/``exec``/``eval`` called, a namespace's ``update``/``setdefault``, or an item of a namespace
    assigned (``globals()["_f"] = ...``, ``sys.modules[__name__].__dict__["_f"] = ...``)."""
    for item in [node, *_inside(node)]:
        if isinstance(item, ast.Call):
            func = item.func
            if isinstance(func, ast.Name) and func.id in _BINDING_CALLS:
                return True
            if isinstance(func, ast.Attribute) and (
                func.attr in _BINDING_CALLS or func.attr in ("update", "setdefault") and _namespace(func.value)
            ):
                return True
        if isinstance(item, ast.Subscript) and isinstance(item.ctx, ast.Store) and _namespace(item.value):
            return True
    return False


def scan_source(source: str, banned: list[str] | tuple[str, ...]) -> dict[str, dict[str, tuple[int, str]]]:
    """Map each top-level function or class (and ``<module>`` for code outside them) to the
    banned names it uses, directly or through other module-level names:
    {name: {banned dotted name: (line, the expression as written)}}.

    Names that use nothing banned are left out. A file that does not parse gives {} (the
    worker reports the syntax error itself).
    """
    keys: dict[str, str] = {}
    for dotted in banned:
        keys.setdefault(banned_key(dotted), dotted)
    if not keys:
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # Python cannot compile it either
        return {}
    symbols, loose, dynamic = _symbols(tree, keys, source)
    uses = _spread(symbols)
    loose_uses, handed = _reached(loose, symbols, uses), _reached(dynamic, symbols, uses)
    for name in uses:
        for key, line in handed.items():
            uses[name].setdefault(key, line)
    found = {name: {keys[k]: line for k, line in u.items()} for name, u in uses.items() if u}
    # Imports and aliases are not gradable names themselves: keep functions, classes and module code.
    gradable = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    found = {name: u for name, u in found.items() if name in gradable}
    if loose_uses:
        found[MODULE_LEVEL] = {keys[k]: line for k, line in loose_uses.items()}
    return found


def _symbols(tree: ast.Module, keys: dict[str, str], source: str) -> tuple[dict[str, _Symbol], _Symbol, _Symbol]:
    """What each module-level name uses and refers to; what the statements binding no name use (``loose``);
    what the statements binding names out of sight use (``dynamic``)."""
    symbols: dict[str, _Symbol] = {}
    loose, dynamic = _Symbol(), _Symbol()
    own = frozenset(n.name for n in tree.body if isinstance(n, ast.ClassDef))
    scopes = _module_names_used(source)
    for node in tree.body:
        names = _bound_names(node)
        symbol = loose if not names else _Symbol()
        _Collector(keys, symbol, own).visit(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in scopes:
            # a function's parameters and locals are not the module's names of the same spelling (its `x`
            # is not the `x` of an `if __name__ == "__main__":` block that names torch.softmax)
            symbol.refers_to = (symbol.refers_to & scopes[node.name]) | _evaluated_outside(node)
        if _binds_dynamically(node):
            _Collector(keys, dynamic, own).visit(node)
        for name in names:
            previous = symbols.get(name)
            if previous is not None and (not isinstance(node, _REPLACES) or name in _reads(node)):
                # A binding that may not run (inside ``if``, ``for``, ``try``...) or reads the name's value
                # (``_f = _f``, ``_f += 1``) keeps what the name held; a plain one replaces it, as at run time.
                symbols[name] = _Symbol({**previous.uses, **symbol.uses}, (previous.refers_to | symbol.refers_to) - {name})
            else:
                symbols[name] = _Symbol(dict(symbol.uses), symbol.refers_to - {name})
    return symbols, loose, dynamic


def _module_names_used(source: str) -> dict[str, set[str]]:
    """For each top-level function and class, the module-level names its body (and everything nested in it)
    reads, as Python's own symbol tables resolve them; {} when they cannot be built (then every name counts)."""
    try:
        top = symtable.symtable(source, "<submission>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    found: dict[str, set[str]] = {}
    for table in top.get_children():
        if table.get_type() in ("function", "class"):
            found.setdefault(table.get_name(), set()).update(_globals_of(table))
    return found


def _globals_of(table: symtable.SymbolTable) -> set[str]:
    names: set[str] = set()
    pending = [table]
    while pending:
        scope = pending.pop()
        names |= {s.get_name() for s in scope.get_symbols() if s.is_global()}
        pending.extend(scope.get_children())
    return names


def _evaluated_outside(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    """The names a def's decorators, defaults, annotations (or a class's bases and keywords) read: evaluated
    in the module's scope, where no symbol table of the def lists them (``def softmax(x, f=_f)``)."""
    if isinstance(node, ast.ClassDef):
        parts: list[ast.AST] = [*node.decorator_list, *node.bases, *node.keywords]
    else:
        a = node.args
        every = [*a.posonlyargs, *a.args, *a.kwonlyargs, *(x for x in (a.vararg, a.kwarg) if x)]
        parts = [
            *node.decorator_list,
            *a.defaults,
            *(d for d in a.kw_defaults if d),
            *(x.annotation for x in every if x.annotation),
        ]
        parts += [node.returns] if node.returns else []
    return {n.id for part in parts for n in [part, *_inside(part)] if isinstance(n, ast.Name)}


def _spread(symbols: dict[str, _Symbol]) -> dict[str, dict[str, tuple[int, str]]]:
    """Uses flow from a name to every name that refers to it (a function calling a helper, an alias of an
    import): iterated to a fixed point."""
    uses = {name: dict(s.uses) for name, s in symbols.items()}
    changed = True
    while changed:
        changed = False
        for name, symbol in symbols.items():
            for other in symbol.refers_to & symbols.keys():
                for key, line in uses[other].items():
                    if key not in uses[name]:
                        uses[name][key] = line
                        changed = True
    return uses


def _reached(symbol: _Symbol, symbols: dict[str, _Symbol], uses: dict) -> dict[str, tuple[int, str]]:
    """What ``symbol`` uses, itself or through the module-level names it refers to."""
    reached = dict(symbol.uses)
    for other in symbol.refers_to & symbols.keys():
        for key, line in uses[other].items():
            reached.setdefault(key, line)
    return reached


def refers_to(source: str) -> dict[str, set[str]]:
    """Map each top-level name of ``source`` to the other top-level names it refers to, directly or
    through them (a function calling a helper that calls another): the grader's own reading of which of
    the file's functions a call runs, without running it. A file that does not parse gives {}."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # Python cannot compile it either
        return {}
    direct: dict[str, set[str]] = {}
    for node in tree.body:
        names = _bound_names(node) if not isinstance(node, (ast.Import, ast.ImportFrom)) else []
        if names:  # an import binds a library's name, none of the file's functions
            symbol = _Symbol()
            _Collector({}, symbol).visit(node)
            for name in names:  # a later binding replaces an earlier one, as at run time
                direct[name] = symbol.refers_to - {name}
    reach = {name: refs & direct.keys() for name, refs in direct.items()}
    changed = True
    while changed:
        changed = False
        for name, refs in reach.items():
            more = set().union(*(reach[r] for r in refs)) - refs - {name}
            if more:
                refs |= more
                changed = True
    return reach


def describe(uses: dict[str, tuple[int, str]]) -> str:
    """``F.softmax (line 12)``, for feedback."""
    return ", ".join(f"{written} (line {line})" for line, written in sorted(uses.values()))
