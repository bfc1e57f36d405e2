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
    ``_native_multi_head_attention`` for ``multi_head_attention_forward``), the key of most words first
    (``_log_softmax`` is ``log_softmax``). A public name must be the key."""
    if name in keys:
        return name
    if not name.startswith("_"):
        return None
    words = _words(name)
    for key in sorted(keys, key=lambda k: -len(_words(k))):
        wanted = [w for w in _words(key) if w != "forward"]
        found = iter(words)
        if wanted and all(w in found for w in wanted):  # a subsequence of the name's words
            return key
    return None


# Calls that name an attribute by a string: getattr(torch, "softmax"), operator.attrgetter("softmax")(torch)...
_BY_STRING = frozenset({"getattr", "hasattr", "__getattribute__", "__getattr__", "attrgetter", "methodcaller"})
_NAMESPACES = frozenset({"globals", "vars", "locals"})


def _namespace(node: ast.AST) -> bool:
    """``globals()``, ``vars(...)``, ``locals()``, ``x.__dict__``, ``sys.modules``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _NAMESPACES:
        return True
    return isinstance(node, ast.Attribute) and node.attr in ("__dict__", "modules")


def _called(func: ast.AST) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


class _Collector:
    """The banned names and module-level symbols one statement uses. Walked with a list, not recursion: a
    correct file may hold an expression nested deeper than Python's recursion limit (600 terms of ``1 + 1``).
    An attribute of ``self``, ``cls``, or of one of the file's own classes that the class defines
    (``ops.softmax`` for ``class ops`` with a ``softmax`` of its own, where ``ops`` is that class), is the
    student's own."""

    def __init__(self, keys: dict[str, str], symbol: _Symbol, own: dict[str, set[str]] | None = None,
                 module_names: set[str] | None = None) -> None:  # fmt: skip
        self.keys = keys  # key -> dotted banned name
        self.symbol = symbol
        self.own = own or {}  # the file's classes -> the attributes their bodies define
        self.module_names = module_names  # the names this code reads from the module (None: all of them)

    def _students(self, node: ast.Attribute) -> bool:
        base = node.value
        if not isinstance(base, ast.Name):
            return False
        if base.id in ("self", "cls"):
            return True
        in_module = self.module_names is None or base.id in self.module_names
        return in_module and node.attr in self.own.get(base.id, ())

    def visit(self, root: ast.AST) -> None:
        pending = [root]
        while pending:
            node = pending.pop()
            if isinstance(node, ast.Attribute):
                key = _key_of(node.attr, self.keys)
                if key and not self._students(node):
                    self._use(key, node)
            elif isinstance(node, ast.ImportFrom):
                if (node.module or "").split(".")[0] == "torch":
                    for alias in node.names:
                        key = _key_of(alias.name, self.keys)
                        if key:
                            self._use(key, node)
            elif isinstance(node, ast.Call):
                name = _called(node.func)
                namespace_read = name in ("get", "pop", "setdefault", "__getitem__") and _namespace(node.func.value)
                if name in _BY_STRING or namespace_read:  # type: ignore[union-attr]
                    for arg in node.args:
                        self._literal(arg, node)
            elif isinstance(node, ast.Subscript) and _namespace(node.value):  # vars(torch.Tensor)["softmax"]
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


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, *_DEFS)
# Methods that change the object they are called on: `table.update(f=torch.softmax)` binds through `table`.
_MUTATING = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "__setitem__", "__setattr__"})


@dataclass
class _Unit:
    """One binding of the module's names, and the code whose uses the names receive: a statement, or the
    header of a compound one (``for``'s target gets its iterable's uses, ``with ... as`` its expression's)."""

    nodes: list[ast.AST]
    names: list[str]
    replaces: bool = False  # a def at the top level replaces what the name held; every other binding adds to it


def _inside(node: ast.AST) -> list[ast.AST]:
    """Every node under ``node`` (a list, walked without recursion)."""
    found, pending = [], list(ast.iter_child_nodes(node))
    while pending:
        item = pending.pop()
        found.append(item)
        pending.extend(ast.iter_child_nodes(item))
    return found


def _stored(node: ast.AST | None) -> list[str]:
    """The module names an expression or simple statement binds: names stored (not in a lambda's or a
    comprehension's own scope, but ``:=`` anywhere), and the root of an attribute or item stored or of a
    mutating call (``_fns["f"] = ...``, ``ns.f = ...``, ``table.update(...)``)."""
    if node is None:
        return []
    names: list[str] = []
    pending: list[tuple[ast.AST, bool]] = [(node, True)]
    while pending:
        item, own_scope = pending.pop()
        if isinstance(item, ast.NamedExpr) and isinstance(item.target, ast.Name):
            names.append(item.target.id)  # := binds the enclosing scope's name, inside a comprehension too
        elif own_scope and isinstance(item, ast.Name) and isinstance(item.ctx, (ast.Store, ast.Del)):
            names.append(item.id)
        elif own_scope and isinstance(item, (ast.Attribute, ast.Subscript)) and isinstance(item.ctx, ast.Store):
            names += _root(item)
        elif own_scope and isinstance(item, ast.Call) and _called(item.func) in _MUTATING:
            names += _root(item.func.value) if isinstance(item.func, ast.Attribute) else []
        if isinstance(item, _DEFS):
            continue
        inner = own_scope and not isinstance(item, _SCOPES)
        pending.extend((child, inner) for child in ast.iter_child_nodes(item))
    return names


def _root(node: ast.AST) -> list[str]:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return [node.id] if isinstance(node, ast.Name) else []


def _units(stmt: ast.stmt, conditional: bool = False):
    """The bindings of one module-level statement, compound statements opened (their bodies may not run)."""
    if isinstance(stmt, _DEFS):
        yield _Unit([stmt], [stmt.name], replaces=not conditional)
        declared = [n for g in _inside(stmt) if isinstance(g, ast.Global) for n in g.names]
        if declared:  # a function's `global _f` binds _f only if it runs: adds to what _f held
            yield _Unit([stmt], declared)
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        yield _Unit([stmt], [(a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*"])
    elif isinstance(stmt, (ast.If, ast.While)):
        yield _Unit([stmt.test], _stored(stmt.test))
        for inner in stmt.body + stmt.orelse:
            yield from _units(inner, True)
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        yield _Unit([stmt.iter, stmt.target], _stored(stmt.target) + _stored(stmt.iter))
        for inner in stmt.body + stmt.orelse:
            yield from _units(inner, True)
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        for item in stmt.items:
            yield _Unit([item.context_expr], _stored(item.optional_vars) + _stored(item.context_expr))
        for inner in stmt.body:
            yield from _units(inner, conditional)
    elif isinstance(stmt, ast.Try) or type(stmt).__name__ == "TryStar":
        for handler in stmt.handlers:
            yield _Unit([handler.type] if handler.type else [], [handler.name] if handler.name else [])
            for inner in handler.body:
                yield from _units(inner, True)
        for inner in stmt.body + stmt.orelse + stmt.finalbody:
            yield from _units(inner, True)
    elif isinstance(stmt, ast.Match):
        for case in stmt.cases:
            bound = [n for n in [case.pattern, *_inside(case.pattern)] for n in _pattern_names(n)]
            yield _Unit([stmt.subject, case.pattern] + ([case.guard] if case.guard else []), bound + _stored(stmt.subject))
            for inner in case.body:
                yield from _units(inner, True)
    else:
        yield _Unit([stmt], _stored(stmt))


def _pattern_names(node: ast.AST) -> list[str]:
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    return [node.rest] if isinstance(node, ast.MatchMapping) and node.rest else []


def _binds_dynamically(node: ast.AST) -> bool:
    """Code that binds module names out of the scan's sight: ``setattr``/``exec``/``eval`` called by name, a
    namespace's ``update``/``setdefault``/``__setitem__``, or an item of a namespace assigned
    (``globals()["_f"] = ...``). Reading through one (``vars(torch.Tensor)["softmax"]``) binds nothing."""
    for item in [node, *_inside(node)]:
        if isinstance(item, ast.Call):
            func = item.func
            if isinstance(func, ast.Name) and func.id in ("setattr", "exec", "eval"):
                return True
            if isinstance(func, ast.Attribute) and func.attr in ("update", "setdefault", "__setitem__", "__setattr__"):
                if _namespace(func.value):
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
    gradable = {n.name for n in tree.body if isinstance(n, _DEFS)}
    found = {name: u for name, u in found.items() if name in gradable}
    if loose_uses:
        found[MODULE_LEVEL] = {keys[k]: line for k, line in loose_uses.items()}
    return found


def _symbols(tree: ast.Module, keys: dict[str, str], source: str) -> tuple[dict[str, _Symbol], _Symbol, _Symbol]:
    """What each module-level name uses and refers to; what the code binding no name uses (``loose``); what
    the statements binding names out of sight use (``dynamic``)."""
    symbols: dict[str, _Symbol] = {}
    loose, dynamic = _Symbol(), _Symbol()
    units = [u for stmt in tree.body for u in _units(stmt)]
    scopes = _module_names_used(source)
    own = _own_classes(tree, units)
    for unit in units:
        symbol = _Symbol() if unit.names else loose
        for node in unit.nodes:
            reads = scopes.get(node.name) if isinstance(node, _DEFS) else None
            found = _Symbol()
            _Collector(keys, found, own, reads).visit(node)
            if reads is not None:  # a function's parameters and locals are its own, not the module's names
                found.refers_to = (found.refers_to & reads) | _evaluated_outside(node)
            symbol.uses = {**found.uses, **symbol.uses}
            symbol.refers_to |= found.refers_to
        for name in unit.names:
            previous = symbols.get(name)
            if previous is None or unit.replaces:
                symbols[name] = _Symbol(dict(symbol.uses), symbol.refers_to - {name})
            else:  # a binding that may not run, or that adds to what the name held, keeps what it held
                symbols[name] = _Symbol({**previous.uses, **symbol.uses}, (previous.refers_to | symbol.refers_to) - {name})
    for stmt in tree.body:
        if _binds_dynamically(stmt):
            _Collector(keys, dynamic, own).visit(stmt)
        for node in [stmt, *_inside(stmt)]:  # from torch.nn.functional import *: every banned name it exports
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "torch":
                if any(a.name == "*" for a in node.names):
                    for key in keys:
                        symbols.setdefault(key, _Symbol()).uses.setdefault(key, (node.lineno, f"from {node.module} import *"))
    return symbols, loose, dynamic


def _own_classes(tree: ast.Module, units: list[_Unit]) -> dict[str, set[str]]:
    """The file's classes that nothing else binds, with the attributes their bodies define."""
    bound_otherwise = {n for u in units if not (len(u.nodes) == 1 and isinstance(u.nodes[0], ast.ClassDef)) for n in u.names}
    own: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name not in bound_otherwise:
            own[node.name] = {n for stmt in node.body for n in ([stmt.name] if isinstance(stmt, _DEFS) else _stored(stmt))}
    return own


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
    """A function reads from the module what its table calls global; a class body every name it reads (a
    class body looks a name up in the module when it has not bound it yet: ``class Ops: sm = sm``)."""
    names: set[str] = set()
    pending = [table]
    while pending:
        scope = pending.pop()
        in_class = scope.get_type() == "class"
        names |= {s.get_name() for s in scope.get_symbols() if s.is_global() or in_class and s.is_referenced()}
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
    symbols, _, _ = _symbols(tree, {}, source)
    imported = {n for stmt in tree.body if isinstance(stmt, (ast.Import, ast.ImportFrom)) for u in _units(stmt) for n in u.names}
    direct = {name: s.refers_to for name, s in symbols.items() if name not in imported}
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
