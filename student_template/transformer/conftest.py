"""Lets you run the public tests with plain `pytest` in this folder.

The tests receive your module as the `student` fixture (on Gradescope the same
tests reach your code through the grader instead), plus a seeded random
generator `gen`.
"""

import importlib
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
MODULE = "transformer"

import autograder.checks  # noqa: E402

# A failed check shows your test line and the check's message, not the checks' own source:
# pytest leaves out the frames of a module that sets __tracebackhide__.
autograder.checks.__tracebackhide__ = True


BANNED = ['torch.nn.TransformerEncoderLayer.forward', 'torch.nn.TransformerEncoder.forward', 'torch.nn.TransformerDecoderLayer.forward']  # from assignment.toml: what grading refuses


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


@pytest.fixture(scope="session")
def student():
    return _Checked(importlib.import_module(MODULE))


@pytest.fixture
def seed():
    return 0


@pytest.fixture
def gen(seed):
    return torch.Generator().manual_seed(seed)
