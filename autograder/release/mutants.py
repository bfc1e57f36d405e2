"""Mutants derived from the reference: does the hidden suite notice a one-site change?

``python -m autograder mutants [assignment ...]`` (``make mutants``, run by CI) applies operators that
fit this field to every site inside the reference's solution markers, one site per mutant:

=================  ==================================================================
``no-scaling``     ``x / sqrt(d)`` (or ``x / scale``, ``x * scale``) becomes ``x``
``transpose``      ``k.transpose(a, b)`` / ``k.mT`` / ``k.T`` becomes ``k``
``diagonal``       ``triu``/``tril``'s diagonal moved by one
``neg-inf``        ``-inf`` becomes ``-1e9`` (a large negative fill)
``no-max-shift``   ``x - x.max(...)`` (or ``x - m``) becomes ``x``
``no-guard``       ``torch.where(cond, a, b)`` becomes ``a`` (a corner's guard dropped)
``flip-mask``      ``masked_fill(mask, ...)`` becomes ``masked_fill(~mask, ...)``
``mean-for-sum``   ``.sum(...)`` becomes ``.mean(...)``
``compare``        ``<`` and ``<=`` (``>`` and ``>=``) swapped
``dim``            ``dim=-1`` becomes ``dim=-2`` (and 0 <-> 1)
``no-renormalise`` ``p / p.sum(...)`` becomes ``p``
``slice``          a slice bound moved by one
``no-zero-grad``   ``optimizer.zero_grad()`` removed
``train-mode``     ``.eval()`` becomes ``.train()``
``constant``       a numeric constant (an eps, a base, a scale factor; a float, or an int of 100 or more)
                   multiplied by 10 (divided, from 10 up)
``sign``           ``a - b`` becomes ``a + b``; ``-x`` becomes ``x`` (x not a literal)
``default``        a default argument of the function changed (a number times 2, plus 1 from 0;
                   True and False swapped): the signature is the contract's, so a test must use it
``offset``         ``x + 1`` / ``x - 1`` becomes ``x`` (an off-by-one)
``swap-args``      the first two positional arguments of a call swapped, when both are names
=================  ==================================================================

Each mutant is graded by the whole suite, stopping at the first failing test (killed), through the
same cached grading as the self-check. The **mutation score** is killed / (mutants - equivalent). A
mutant that survives either gets a test or is recorded as equivalent, with the reason, in the
assignment's ``assignment.toml``::

    [mutants.equivalent]
    "compare:causal_mask:0" = "i < j and i <= j - 1 are the same on integers"

A surviving mutant that is not recorded fails the command (and CI). Ids are
``operator:function:n`` (the n-th site of that operator in that function), so editing one
function renames no mutant of another.
"""

from __future__ import annotations

import ast
import copy
import difflib
import sys
import time
from dataclasses import dataclass
from typing import Callable, Iterator

from ..config import Assignment, load_assignment
from .markers import marked_regions

SITES_PER_OPERATOR = 6  # per function: enough to find a blind spot, few enough for 10 minutes cold


@dataclass
class Mutant:
    id: str
    source: str
    diff: str


def _solution_lines(source: str) -> set[int]:
    """Line numbers inside ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` (what students write)."""
    return {n for begin, end in marked_regions(source, ("SOLUTION",)) for n in range(begin + 1, end)}


def _text(node: ast.AST) -> str:
    return ast.unparse(node)


def _is_neg_inf(node: ast.AST) -> bool:
    text = _text(node).replace(" ", "").replace("'", '"')
    return text in ('float("-inf")', "-math.inf", "-torch.inf", "-np.inf", '-float("inf")', "-numpy.inf")


def _int_value(node: ast.AST | None) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def _int_node(value: int) -> ast.AST:
    return ast.UnaryOp(ast.USub(), ast.Constant(-value)) if value < 0 else ast.Constant(value)


def _method(node: ast.AST, *names: str) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names


# Each operator: (does it apply to this node?, the replacement node). Replacement returns None to delete
# a statement.
def _no_scaling(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Mult)):
        right = _text(node.right)
        if "sqrt" in right or "** 0.5" in right or "**0.5" in right or "** -0.5" in right or "scale" in right.lower():
            return node.left
    return None


def _transpose(node):
    if _method(node, "transpose", "swapaxes") and len(node.args) == 2:
        return node.func.value
    if isinstance(node, ast.Attribute) and node.attr in ("mT", "T") and isinstance(node.ctx, ast.Load):
        return node.value
    return None


def _diagonal(node, step):
    if not (isinstance(node, ast.Call) and _text(node.func).split(".")[-1] in ("triu", "tril")):
        return None
    new = copy.deepcopy(node)
    for keyword in new.keywords:
        if keyword.arg == "diagonal" and _int_value(keyword.value) is not None:
            keyword.value = _int_node(_int_value(keyword.value) + step)
            return new
    if len(new.args) >= 2 and _int_value(new.args[1]) is not None:
        new.args[1] = _int_node(_int_value(new.args[1]) + step)
        return new
    if len(new.args) == 1 and not any(k.arg == "diagonal" for k in new.keywords):
        new.keywords.append(ast.keyword("diagonal", _int_node(step)))
        return new
    return None


def _neg_inf(node):
    return ast.Constant(-1e9) if _is_neg_inf(node) else None


def _no_max_shift(node):
    """``x - x.max(...)`` or ``x - m`` (a shift held in a variable) becomes ``x``."""
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and ("max" in _text(node.right) or isinstance(node.right, ast.Name))
    ):
        return node.left
    return None


def _no_guard(node):
    """``torch.where(cond, a, b)`` becomes ``a``: the guard for a corner (an all -inf row, a zero sum) dropped."""
    if isinstance(node, ast.Call) and _text(node.func) in ("torch.where", "np.where") and len(node.args) == 3:
        return node.args[1]
    return None


def _flip_mask(node):
    """``x.masked_fill(mask, v)`` becomes ``x.masked_fill(~mask, v)``."""
    if _method(node, "masked_fill", "masked_fill_") and node.args:
        new = copy.deepcopy(node)
        new.args[0] = ast.UnaryOp(ast.Invert(), new.args[0])
        return new
    return None


def _mean_for_sum(node):
    if _method(node, "sum"):
        new = copy.deepcopy(node)
        new.func.attr = "mean"
        return new
    return None


_SWAP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}


def _compare(node):
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _SWAP:
        new = copy.deepcopy(node)
        new.ops = [_SWAP[type(node.ops[0])]()]
        return new
    return None


_DIMS = {-1: -2, -2: -1, 0: 1, 1: 0}


def _dim(node):
    if not isinstance(node, ast.Call):
        return None
    for index, keyword in enumerate(node.keywords):
        value = _int_value(keyword.value)
        if keyword.arg in ("dim", "axis") and value in _DIMS:
            new = copy.deepcopy(node)
            new.keywords[index].value = _int_node(_DIMS[value])
            return new
    return None


def _no_renormalise(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and _method(node.right, "sum"):
        return node.left
    return None


def _slice(node):
    if not isinstance(node, ast.Slice):
        return None
    for part in ("upper", "lower"):
        value = _int_value(getattr(node, part))
        if value is not None:
            new = copy.deepcopy(node)
            setattr(new, part, None if value == -1 and part == "upper" else _int_node(value + 1))
            return new
    return None


def _no_zero_grad(node):
    if isinstance(node, ast.Expr) and _method(node.value, "zero_grad"):
        return ast.Pass()
    return None


def _train_mode(node):
    if _method(node, "eval") and not node.args:
        new = copy.deepcopy(node)
        new.func.attr = "train"
        return new
    return None


def _constant(node):
    """An eps, a base or a scale factor ten times off: ``1e-5`` -> ``1e-4``, ``10000.0`` -> ``1000.0``."""
    if not isinstance(node, ast.Constant) or isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
        return None
    value = node.value
    if isinstance(value, int) and abs(value) < 100 or value in (0.0, 1.0, -1.0):
        return None  # indices, sizes, dims and the units of arithmetic: other operators' business
    return ast.Constant(value / 10 if abs(value) >= 10 else value * 10)


def _sign(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
        return ast.BinOp(copy.deepcopy(node.left), ast.Add(), copy.deepcopy(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and not isinstance(node.operand, ast.Constant):
        return copy.deepcopy(node.operand)
    return None


def _default(node):
    """The function's first changeable default: a number doubled (0 -> 1), True <-> False."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    new = copy.deepcopy(node)
    for defaults in (new.args.defaults, new.args.kw_defaults):
        for index, value in enumerate(defaults):
            if isinstance(value, ast.Constant) and isinstance(value.value, bool):
                defaults[index] = ast.Constant(not value.value)
                return new
            number = _int_value(value) if not isinstance(value, ast.Constant) else value.value
            if isinstance(number, (int, float)) and not isinstance(number, bool):
                defaults[index] = ast.Constant(number * 2 if number else 1) if number >= 0 else _int_node(number * 2)
                return new
    return None


def _offset(node):
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)) and _int_value(node.right) == 1:
        return copy.deepcopy(node.left)
    return None


def _swap_args(node):
    if (
        isinstance(node, ast.Call)
        and len(node.args) >= 2
        and all(isinstance(a, ast.Name) for a in node.args[:2])
        and node.args[0].id != node.args[1].id
    ):
        new = copy.deepcopy(node)
        new.args[0], new.args[1] = new.args[1], new.args[0]
        return new
    return None


OPERATORS: dict[str, Callable] = {
    "no-scaling": _no_scaling,
    "transpose": _transpose,
    "diagonal+1": lambda n: _diagonal(n, +1),
    "diagonal-1": lambda n: _diagonal(n, -1),
    "neg-inf": _neg_inf,
    "no-max-shift": _no_max_shift,
    "no-guard": _no_guard,
    "flip-mask": _flip_mask,
    "mean-for-sum": _mean_for_sum,
    "compare": _compare,
    "dim": _dim,
    "no-renormalise": _no_renormalise,
    "slice": _slice,
    "no-zero-grad": _no_zero_grad,
    "train-mode": _train_mode,
    "constant": _constant,
    "sign": _sign,
    "default": _default,
    "offset": _offset,
    "swap-args": _swap_args,
}


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, replacement: ast.AST) -> None:
        self.target, self.replacement = target, replacement

    def generic_visit(self, node):
        if node is self.target:
            return ast.copy_location(self.replacement, node)
        return super().generic_visit(node)

    def visit(self, node):
        if node is self.target:
            return ast.copy_location(self.replacement, node)
        return super().visit(node)


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.AST]]:
    """(qualified name, node) of every function, methods as Class.method."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{node.name}.{item.name}", item


@dataclass
class Score:
    assignment: str
    total: int
    killed: list[str]
    survivors: list[Mutant]
    equivalent: dict[str, str]
    seconds: float

    @property
    def unexplained(self) -> list[Mutant]:
        return [m for m in self.survivors if m.id not in self.equivalent]

    @property
    def score(self) -> float:
        counted = self.total - len([m for m in self.survivors if m.id in self.equivalent])
        return 100.0 * len(self.killed) / counted if counted else 100.0


def measure(assignment: Assignment) -> Score:
    from .catalogue_grading import grade_sources

    started = time.monotonic()
    reference = assignment.solution.read_text()
    mutants = derive(reference)
    graded = grade_sources(assignment, {m.id: m.source for m in mutants}, exitfirst=True)
    killed, survivors = [], []
    for mutant in mutants:
        document = graded[mutant.id]
        tests = document.get("tests") or []
        failed = any(t.get("status") != "passed" for t in tests) or not tests
        (killed.append(mutant.id) if failed else survivors.append(mutant))
    return Score(assignment.name, len(mutants), killed, survivors, dict(assignment.equivalent), time.monotonic() - started)


def derive(source: str) -> list[Mutant]:
    """Every one-site mutant of ``source`` inside its solution markers (at most SITES_PER_OPERATOR per operator
    and function), in a stable order; the tree is parsed afresh for each, so no change leaks into the next."""
    tree = ast.parse(source)
    solution = _solution_lines(source)
    original = ast.unparse(tree)
    plan: list[tuple[str, str, int]] = []  # (operator, function, index of the node in that function's walk)
    for function, fnode in _functions(tree):
        nodes = _candidate_nodes(fnode, solution)
        for name, operator in OPERATORS.items():
            plan.extend((name, function, i) for i, node in enumerate(nodes) if operator(node) is not None)
    mutants, seen, counts = [], {original}, {}
    for name, function, index in plan:
        key = (name, function)
        if counts.get(key, 0) >= SITES_PER_OPERATOR:
            continue
        fresh = ast.parse(source)
        fnode = dict(_functions(fresh))[function]
        node = _candidate_nodes(fnode, solution)[index]
        mutated = _Replace(node, OPERATORS[name](node)).visit(fresh)
        ast.fix_missing_locations(mutated)
        try:
            text = ast.unparse(mutated)
            compile(text, "<mutant>", "exec")
        except (SyntaxError, ValueError, TypeError):
            continue
        if text in seen:
            continue
        seen.add(text)
        diff = "".join(difflib.unified_diff(original.splitlines(True), text.splitlines(True), "reference", "mutant", n=0))
        mutants.append(Mutant(f"{name}:{function}:{counts.get(key, 0)}", text, diff))
        counts[key] = counts.get(key, 0) + 1
    return mutants


def _candidate_nodes(fnode: ast.AST, solution: set[int]) -> list[ast.AST]:
    """The nodes of what students write (inside the solution markers), and the function itself first: its
    signature (defaults) is the contract's, which a student may also get wrong."""
    nodes = [n for n in ast.walk(fnode) if getattr(n, "lineno", None) in solution]
    nodes.sort(key=lambda n: (n.lineno, n.col_offset, type(n).__name__))
    return [fnode, *nodes] if any(getattr(n, "lineno", None) in solution for n in ast.walk(fnode)) else nodes


def main(names: list[str]) -> int:
    failed = False
    for name in names:
        assignment = load_assignment(name)
        result = measure(assignment)
        print(
            f"[{name}] mutation score {result.score:.0f}% ({len(result.killed)} of {result.total} derived mutants killed, "
            f"{len(result.survivors) - len(result.unexplained)} recorded equivalent; {result.seconds:.0f} s)"
        )
        for mutant in result.survivors:
            reason = result.equivalent.get(mutant.id)
            print(f"  {'equivalent' if reason else 'SURVIVES'}: {mutant.id}" + (f" ({reason})" if reason else ""))
            if not reason:
                print("    " + mutant.diff.replace("\n", "\n    ").rstrip())
        stale = sorted(set(result.equivalent) - {m.id for m in result.survivors})
        for mutant_id in stale:
            print(f"  note: {mutant_id} is recorded as equivalent but is killed or no longer derived: remove it")
        failed |= bool(result.unexplained)
    if failed:
        print(
            "A surviving mutant needs a test that kills it, or an entry in [mutants.equivalent] of the assignment's "
            "assignment.toml with the reason it computes the same thing.",
            file=sys.stderr,
        )
    return 1 if failed else 0
