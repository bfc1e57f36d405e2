"""Lets you run the public tests with plain `pytest` in this folder.

The tests receive your module as the `student` fixture (on Gradescope the same
tests reach your code through the grader instead), plus a seeded random
generator `gen` whose seed is the one grading gives the same test, so a test draws
the same random inputs here as on Gradescope and the numbers in your feedback are
the ones you can reproduce with `pytest`.
"""

import hashlib
import importlib
import sys
import types
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
MODULE = "multihead"

import autograder.checks  # noqa: E402

# A failed check shows your test line and the check's message, not the checks' own source:
# pytest leaves out the frames of a module that sets __tracebackhide__.
autograder.checks.__tracebackhide__ = True


BANNED = ['torch.nn.MultiheadAttention.forward', 'torch.nn.functional.multi_head_attention_forward', 'torch.nn.functional.scaled_dot_product_attention']  # from assignment.toml: what grading refuses


class _Checked:
    """Your module, with the grader's banned-name scan: a function (or class) that uses a banned
    PyTorch name, directly or through your other functions, fails with the message grading gives."""

    def __init__(self, module):
        self._module = module
        try:
            from autograder.banned import describe, scan_source

            source = Path(module.__file__).read_text(encoding="utf-8")
            self._found = {name: describe(uses) for name, uses in scan_source(source, BANNED).items()}
        except (ImportError, OSError):
            self._found = {}

    def __getattr__(self, name):
        value = getattr(self._module, name)
        used = self._found.get(name)
        if used is None or not callable(value):
            return value

        def refuse(*args, **kwargs):
            raise autograder.checks.Feedback(
                f"{name}(...) uses {used}, which this assignment does not allow: write the computation yourself "
                "(calling your own functions is fine). Grading refuses it the same way."
            )

        return refuse


def _import_as_graded():
    """Your module, imported as grading imports it: a top-level import of a package grading does not have
    (anything but the standard library, torch, numpy and einops) is left out, with the same note."""
    try:
        from autograder.imports import leave_out_foreign_imports
    except ImportError:
        return importlib.import_module(MODULE), ""
    path = Path(__file__).parent / f"{MODULE}.py"
    source, note = leave_out_foreign_imports(path.read_text(encoding="utf-8"), path.name)
    if not note:
        return importlib.import_module(MODULE), ""
    module = types.ModuleType(MODULE)
    module.__file__ = str(path)
    sys.modules[MODULE] = module
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module, note


_NOTES: list[str] = []


@pytest.fixture(scope="session")
def student():
    module, note = _import_as_graded()
    if note:
        _NOTES.append(note)
    return _Checked(module)


def pytest_terminal_summary(terminalreporter):
    for note in _NOTES:
        terminalreporter.write_sep("=", "imports grading leaves out", yellow=True)
        terminalreporter.write_line(note)


@pytest.fixture
def seed(request):
    """The seed grading gives this test: from its id in the grader's layout, where the public tests
    live in `public/` (here `public_tests/`): sha256 of "0:public/<file>::<test>", first 4 bytes."""
    path, _, test = request.node.nodeid.partition("::")
    digest = hashlib.sha256(f"0:public/{Path(path).name}::{test}".encode()).digest()
    return int.from_bytes(digest[:4], "little")


@pytest.fixture
def gen(seed):
    return torch.Generator().manual_seed(seed)


def pytest_configure(config):
    # `pytest` run above this folder (two assignments unzipped side by side) reads no pytest.ini of ours
    config.addinivalue_line("markers", "grades(function): the function or class a test grades (each test declares it)")
    config.addinivalue_line("markers", "callers_apart: the grader grades this function's callers around a failure of this test")


# `pytest -m <function>` selects the public tests of one function: each test declares the function it
# grades (`@pytest.mark.grades("softmax")`), and gets that function's marker. One that selects nothing says
# which there are.
_FUNCTIONS: list[str] = []


def _graded_function(item):
    mark = item.get_closest_marker("grades")
    return str(mark.args[0]).split(".")[0] if mark is not None and mark.args else ""


@pytest.hookimpl(tryfirst=True)  # before -m and -k deselect anything
def pytest_collection_modifyitems(config, items):
    functions = {line.split(":")[0].strip() for line in config.getini("markers")}  # pytest.ini's markers
    for item in items:
        function = _graded_function(item)
        if function in functions:
            item.add_marker(function)
            if function not in _FUNCTIONS:
                _FUNCTIONS.append(function)


def pytest_report_collectionfinish(config, items):
    if items or not _FUNCTIONS or not (config.option.markexpr or config.option.keyword):
        return []
    first, *rest = _FUNCTIONS
    return [
        f"No public test selected: each one is marked with the function it grades, e.g. pytest -m {first}"
        + (f" (or {', '.join(rest)})." if rest else ".")
    ]
