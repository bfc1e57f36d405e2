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


def _key_of(name: str, keys: dict[str, str], of_torch: bool = False) -> str | None:
    """The banned key ``name`` stands for: the key itself; or a name holding the key's words in order, when it is
    private (``_softmax``, ``_safe_softmax``, ``_scaled_dot_product_flash_attention_for_cpu``,
    ``_native_multi_head_attention``) or read from PyTorch (``torch._C._special.special_softmax``,
    ``nn.LogSoftmax``); the key of most words first (``_log_softmax`` is ``log_softmax``)."""
    if name in keys:
        return name
    if not (name.startswith("_") or of_torch):
        return None
    words = _words(name)
    for key in sorted(keys, key=lambda k: -len(_words(k))):
        wanted = [w for w in _words(key) if w != "forward"]
        found = iter(words)
        if wanted and all(w in found for w in wanted):  # a subsequence of the name's words
            return key
    return None


_NAMESPACES = frozenset({"globals", "vars", "locals"})
# Code that reads attributes by their names as strings: a literal banned name beside it is a use
# (getattr(torch, "softmax"), operator.attrgetter("softmax"), vars(torch)["softmax"], dir(torch)...).
_REFLECTIVE = frozenset(
    {"getattr", "hasattr", "__getattribute__", "__getattr__", "attrgetter", "methodcaller", "getattr_static", "vars",
     "__dict__", "dir", "reduce"}
)  # fmt: skip


def _namespace(node: ast.AST) -> bool:
    """``globals()``, ``vars(...)``, ``locals()``, ``x.__dict__``, ``sys.modules``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _NAMESPACES:
        return True
    return isinstance(node, ast.Attribute) and node.attr in ("__dict__", "modules")


def _called(func: ast.AST) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _base(node: ast.AST) -> ast.AST:
    """The innermost object of an attribute or item chain (``self`` in ``self.core.softmax``; a call stops it)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node


@dataclass
class _Context:
    """What the file says of itself, for reading one statement."""

    own: dict[str, set[str]] = field(default_factory=dict)  # the file's classes -> the methods their bodies define
    instances: set[str] = field(default_factory=set)  # module names bound only to an instance of one of them
    torch_names: set[str] = field(default_factory=set)  # module names bound by importing from torch
    module_names: set[str] | None = None  # the names this code reads from the module (None: all of them)
    in_class: bool = False  # inside a class body, where `self` and `cls` are its own

    @property
    def methods(self) -> set[str]:
        return set().union(*self.own.values()) if self.own else set()


class _Collector:
    """The banned names and module-level symbols one statement uses. Walked with a list, not recursion: a
    correct file may hold an expression nested deeper than Python's recursion limit (600 terms of ``1 + 1``).
    A method of the file's own classes, reached through `self`/`cls` in a class, `super()`, an instance of the
    class or the class itself (``ops.softmax`` where ``class ops`` defines ``softmax``), is the student's own."""

    def __init__(self, keys: dict[str, str], symbol: _Symbol, context: _Context | None = None) -> None:
        self.keys = keys  # key -> dotted banned name
        self.symbol = symbol
        self.context = context or _Context()
        self.strings: list[tuple[str, ast.AST]] = []  # literal banned names, used if the code reads by name
        self.reflective = False

    def _students(self, node: ast.Attribute) -> bool:
        context, base = self.context, _base(node.value)
        if isinstance(base, ast.Call):  # super().softmax(...), Stable().softmax(...)
            called = _called(base.func)
            return node.attr in context.methods and (called == "super" or called in context.own)
        if not isinstance(base, ast.Name):
            return False
        in_module = context.module_names is None or base.id in context.module_names
        if base.id in ("self", "cls") and context.in_class:
            return node.attr in context.methods or node.value is base
        if in_module and base.id in context.own:
            return node.attr in context.own[base.id]
        return in_module and base.id in context.instances and node.attr in context.methods

    def visit(self, root: ast.AST) -> None:
        pending = [root]
        while pending:
            node = pending.pop()
            if isinstance(node, ast.Attribute):
                base = _base(node.value)
                of_torch = isinstance(base, ast.Name) and base.id in self.context.torch_names
                key = _key_of(node.attr, self.keys, of_torch)
                if key and not self._students(node):
                    self._use(key, node)
                self.reflective |= node.attr in _REFLECTIVE
            elif isinstance(node, ast.ImportFrom):
                if (node.module or "").split(".")[0] == "torch":
                    for alias in node.names:
                        key = _key_of(alias.name, self.keys, of_torch=True)
                        if key:
                            self._use(key, node)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                key = _key_of(node.value, self.keys)
                if key:
                    self.strings.append((key, node))
            elif isinstance(node, ast.MatchClass):  # case object(softmax=f): reads an attribute by name
                self.reflective = True
                self.strings += [(k, node) for k in (_key_of(a, self.keys) for a in node.kwd_attrs) if k]
            elif isinstance(node, ast.Name):
                self.symbol.refers_to.add(node.id)
                self.reflective |= node.id in _REFLECTIVE
            pending.extend(reversed(list(ast.iter_child_nodes(node))))
        if self.reflective:
            for key, node in self.strings:
                if not (self.context.in_class and key in self.context.methods):  # getattr(self, "softmax")
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
STAR = "*"  # a unit's name for `from torch... import *`: every banned name


@dataclass
class _Unit:
    """One binding of the module's names, and the code whose uses the names receive: a statement, one name of
    an import, or the header of a compound statement (``for``'s target gets its iterable's uses, ``with ...
    as`` its expression's)."""

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
    comprehension's own scope, but ``:=`` anywhere), and the base of an attribute or item stored
    (``_fns["f"] = ...``, ``ns.f = ...``)."""
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
            base = _base(item)
            names += [base.id] if isinstance(base, ast.Name) else []
        if isinstance(item, _DEFS):
            continue
        inner = own_scope and not isinstance(item, _SCOPES)
        pending.extend((child, inner) for child in ast.iter_child_nodes(item))
    return names


def _mutated(stmt: ast.stmt) -> list[str]:
    """The object a statement that is one mutating call changes (``_l.append(torch.softmax)``)."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _MUTATING:
        base = _base(call.func.value)
        return [base.id] if isinstance(base, ast.Name) else []
    return []


def _units(stmt: ast.stmt, conditional: bool = False):
    """The bindings of one module-level statement, compound statements opened (their bodies may not run)."""
    if isinstance(stmt, _DEFS):
        yield _Unit([stmt], [stmt.name], replaces=not conditional)
    elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
        for alias in stmt.names:  # each name of the line gets only its own uses
            one = ast.ImportFrom(stmt.module, [alias], stmt.level) if isinstance(stmt, ast.ImportFrom) else ast.Import([alias])
            one.lineno = stmt.lineno
            yield _Unit([one], [STAR if alias.name == "*" else (alias.asname or alias.name).split(".")[0]])
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
        yield _Unit([stmt], _stored(stmt) + _mutated(stmt))


def _pattern_names(node: ast.AST) -> list[str]:
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return [node.name]
    return [node.rest] if isinstance(node, ast.MatchMapping) and node.rest else []


def _changed_from(node: ast.AST) -> list[str]:
    """Module names a def changes or binds when it runs: its ``global`` names, and the bases of attributes and
    items it stores or mutating calls it makes (``_T["f"] = ...``, ``softmax.impl = ...``); the caller keeps
    those the def reads from the module."""
    names = [n for g in _inside(node) if isinstance(g, ast.Global) for n in g.names]
    for item in _inside(node):
        if isinstance(item, (ast.Attribute, ast.Subscript)) and isinstance(item.ctx, ast.Store):
            names.append(_base(item))
        elif isinstance(item, ast.Expr):
            names += _mutated(item)
    return [n.id if isinstance(n, ast.Name) else n for n in names if isinstance(n, (ast.Name, str))]


def _binds_dynamically(node: ast.AST) -> bool:
    """Code that binds module names out of the scan's sight: ``exec``/``eval`` called by name, ``setattr`` on
    anything but ``self``/``cls``, a namespace's ``update``/``setdefault``/``__setitem__``, or an attribute or
    item stored into a namespace (``globals()["_f"] = ...``, ``sys.modules[__name__].softmax = ...``). Reading
    through one (``vars(torch.Tensor)["softmax"]``) binds nothing."""
    for item in [node, *_inside(node)]:
        if isinstance(item, ast.Call):
            func = item.func
            if isinstance(func, ast.Name) and func.id in ("exec", "eval"):
                return True
            if _called(func) in ("setattr", "__setattr__") and item.args and not _self(item.args[0]):
                return True
            if isinstance(func, ast.Attribute) and func.attr in ("update", "setdefault", "__setitem__"):
                if _namespace(func.value) and not _self(func.value):
                    return True
        if isinstance(item, (ast.Subscript, ast.Attribute)) and isinstance(item.ctx, ast.Store):
            chain = [item.value, *_inside(item.value)]
            if any(_namespace(n) for n in chain) and not _self(item.value):
                return True
    return False


def _self(node: ast.AST) -> bool:
    base = _base(node)
    return isinstance(base, ast.Name) and base.id in ("self", "cls")


def scan_source(source: str, banned: list[str] | tuple[str, ...]) -> dict[str, dict[str, tuple[int, str]]]:
    """Map each module-level name (a function, a class, an alias: whatever a test may call; and ``<module>``
    for code that binds nothing) to the banned names it uses, directly or through other module-level names:
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
    context = _file_context(tree, units)
    for unit in units:
        symbol = _Symbol() if unit.names else loose
        for node in unit.nodes:
            _collect(node, keys, symbol, context, scopes)
        for name in unit.names:
            if name == STAR:  # from torch.nn.functional import *: every banned name, until the file binds it again
                for key in keys:
                    line = getattr(unit.nodes[0], "lineno", 0)
                    symbols[key] = _Symbol({key: (line, f"from {unit.nodes[0].module} import *")})
                continue
            previous = symbols.get(name)
            if previous is None or unit.replaces:
                symbols[name] = _Symbol(dict(symbol.uses), symbol.refers_to - {name})
            else:  # a binding that may not run, or that adds to what the name held, keeps what it held
                symbols[name] = _Symbol({**previous.uses, **symbol.uses}, (previous.refers_to | symbol.refers_to) - {name})
        for node in unit.nodes:  # what a def changes in the module when it runs: those names get its uses too
            if isinstance(node, _DEFS):
                for name in set(_changed_from(node)) & scopes.get(node.name, set()) - {node.name}:
                    held = symbols.setdefault(name, _Symbol())
                    held.uses = {**symbol.uses, **held.uses}
                    held.refers_to |= {node.name}
    for stmt in tree.body:
        if _binds_dynamically(stmt):
            _collect(stmt, keys, dynamic, context, scopes)
    return symbols, loose, dynamic


def _collect(node: ast.AST, keys: dict[str, str], symbol: _Symbol, context: _Context, scopes: dict) -> None:
    """Add what ``node`` uses and refers to into ``symbol``: a def reads from the module only what its symbol
    tables say it reads (its parameters and locals are its own), plus what its header evaluates there."""
    reads = scopes.get(node.name) if isinstance(node, _DEFS) else None
    here = _Context(context.own, context.instances, context.torch_names, reads, isinstance(node, ast.ClassDef))
    found = _Symbol()
    _Collector(keys, found, here).visit(node)
    if reads is not None:
        found.refers_to = (found.refers_to & reads) | _evaluated_outside(node)
    symbol.uses = {**found.uses, **symbol.uses}
    symbol.refers_to |= found.refers_to


def _file_context(tree: ast.Module, units: list[_Unit]) -> _Context:
    """The file's own classes (bound by nothing else) and the methods their bodies define, the module names
    bound only to an instance of one, and the names imported from torch."""
    by_name: dict[str, list[_Unit]] = {}
    for unit in units:
        for name in unit.names:
            by_name.setdefault(name, []).append(unit)
    own: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and all(u.nodes == [node] for u in by_name.get(node.name, [])):
            deleted = {n.id for n in _inside(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del)}
            own[node.name] = {s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))} - deleted
    instances = {
        name
        for name, bound in by_name.items()
        if all(isinstance(u.nodes[0], ast.Assign) and isinstance(u.nodes[0].value, ast.Call)
               and _called(u.nodes[0].value.func) in own for u in bound)
    }  # fmt: skip
    torch_names = {
        name
        for stmt in tree.body
        for node in [stmt, *_inside(stmt)]
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
        for name in [(alias.asname or alias.name).split(".")[0]]
        if (alias.name if isinstance(node, ast.Import) else node.module or "").split(".")[0] == "torch"
    }
    return _Context(own, instances, torch_names)


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
    import), along the references backwards from each name that uses something (linear in the references:
    a file of thousands of chained aliases costs what it weighs)."""
    uses = {name: dict(s.uses) for name, s in symbols.items()}
    users: dict[str, set[str]] = {}
    for name, symbol in symbols.items():
        for other in symbol.refers_to & symbols.keys():
            users.setdefault(other, set()).add(name)
    pending = [name for name, found in uses.items() if found]
    while pending:
        other = pending.pop()
        for name in users.get(other, ()):
            new = {key: line for key, line in uses[other].items() if key not in uses[name]}
            if new:
                uses[name].update(new)
                pending.append(name)
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
    names = symbols.keys() - imported  # once: `a & b - c` would build `b - c` for every name
    direct = {name: s.refers_to & names for name, s in symbols.items() if name not in imported}
    return Reach(direct)


class Reach(dict):
    """``refers_to``'s answer, each name's reach found when it is first asked for (a file of thousands of chained
    aliases would otherwise cost the grader a walk from every one of them)."""

    def __init__(self, direct: dict[str, set[str]]) -> None:
        super().__init__()
        self.direct = direct

    def __missing__(self, name: str) -> set[str]:
        if name not in self.direct:
            raise KeyError(name)
        seen: set[str] = set()
        pending = list(self.direct[name])
        while pending:
            other = pending.pop()
            if other not in seen and other != name:
                seen.add(other)
                pending.extend(self.direct.get(other, ()))
        self[name] = seen
        return seen

    def get(self, name: str, default: set[str] | None = None) -> set[str] | None:  # type: ignore[override]
        try:
            return self[name]
        except KeyError:
            return default


def describe(uses: dict[str, tuple[int, str]]) -> str:
    """``F.softmax (line 12)``, for feedback."""
    return ", ".join(f"{written} (line {line})" for line, written in sorted(uses.values()))
