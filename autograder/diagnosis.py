"""Mistake-aware feedback: name the classic mistake a wrong output matches.

When a check fails on a call it describes (``Feedback.call``), the grader
re-runs that call, on the grader side and on the same inputs, through each
catalogued wrong solution (``assignments/<a>/mistakes/``: the reference with
the mistake appended, trusted code). If the student's output matches one
that differs from the reference, the feedback names that mistake with the
lecture's reason. Diagnosis never changes a score, and shows no hidden input
or reference code: only the mistake's own explanation.
"""

from __future__ import annotations

import ast
import time
import types
from typing import Any

import torch

from .checks import to_tensor
from .config import Assignment
from .selfcheck import CatalogueEntry, read_catalogue, submission_source

MATCH_ATOL = 1e-5
MATCH_RTOL = 1e-4
BUDGET_SECONDS = 5.0  # per failed test, across all mistakes
NO_MATCH = "(Your result matches none of the classic mistakes the grader knows; the details above say where it differs.)"


def _defined_names(entry: CatalogueEntry) -> set[str]:
    names = set()
    for node in ast.parse(entry.path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                    names.add(target.value.id)
    return names


class Diagnoser:
    def __init__(self, assignment: Assignment) -> None:
        self.assignment = assignment
        self.entries = read_catalogue(assignment, "mistake")
        self._modules: dict[str, types.ModuleType] = {}
        self._defines = {e.name: _defined_names(e) for e in self.entries}

    def _module(self, entry: CatalogueEntry | None) -> types.ModuleType:
        key = entry.name if entry else "__reference__"
        if key not in self._modules:
            module = types.ModuleType(f"_mistake_{key}")
            module.__file__ = str(self.assignment.solution)
            exec(compile(submission_source(self.assignment, entry), module.__file__, "exec"), module.__dict__)  # noqa: S102 - our own catalogue
            self._modules[key] = module
        return self._modules[key]

    def _run(self, module: types.ModuleType, call: dict) -> Any:
        torch.manual_seed(0)
        if "fn" in call:
            out = getattr(module, call["fn"])(*call.get("args", ()), **call.get("kwargs", {}))
        else:
            obj = getattr(module, call["cls"])(*call.get("init", ()), **call.get("init_kwargs", {}))
            if call.get("double"):
                obj = obj.double()
            if call.get("state_dict") is not None:
                obj.load_state_dict(call["state_dict"])
            out = getattr(obj, call.get("method", "forward"))(*call.get("args", ()), **call.get("kwargs", {}))
        if "output" in call:
            out = out[call["output"]]
        return out

    @staticmethod
    def _close(a: Any, b: Any) -> bool:
        if isinstance(a, (str, list, tuple)) and all(isinstance(x, str) for x in (a if not isinstance(a, str) else [a])):
            return list(a) == list(b) if not isinstance(a, str) else a == b  # words (nearest, analogy)
        try:
            ta, tb = to_tensor(a, "a").detach().double(), to_tensor(b, "b").detach().double()
        except Exception:  # noqa: BLE001 - not comparable means not a match
            return False
        if ta.shape != tb.shape:
            return False
        return bool(torch.allclose(ta, tb, atol=MATCH_ATOL, rtol=MATCH_RTOL, equal_nan=True))

    def __call__(self, exc: BaseException, test_key: str = "") -> tuple[list[str], str]:
        """(ids of matching mistakes, text for the student); ([], "") when there is nothing to diagnose."""
        call = getattr(exc, "call", None)
        got = getattr(exc, "got", None)
        if not isinstance(call, dict) or got is None or not self.entries:
            return [], ""
        target = call.get("fn") or call.get("cls")
        try:
            with torch.no_grad():
                expected = self._run(self._module(None), call)
        except Exception:  # noqa: BLE001 - the call cannot be replayed: say nothing
            return [], ""
        # Mistakes declared to fail this test first, then those that redefine the graded
        # function, then the rest (a wrong softmax also makes attention wrong).
        ordered = sorted(self.entries, key=lambda e: (test_key not in e.caught_by, target not in self._defines[e.name]))
        matches = []
        started = time.process_time()  # CPU time: a busy machine must not change the words
        for entry in ordered:
            if time.process_time() - started > BUDGET_SECONDS:
                break
            try:
                with torch.no_grad():
                    wrong = self._run(self._module(entry), call)
            except Exception:  # noqa: BLE001 - this mistake crashes on these inputs: not a match
                continue
            if not self._close(wrong, expected) and self._close(got, wrong):
                matches.append(entry)
        if not matches:
            return [], NO_MATCH
        text = "\n".join(f"Likely mistake: {e.title.rstrip('.')}. {e.explanation}".strip() for e in matches[:2])
        return [e.name for e in matches], text
