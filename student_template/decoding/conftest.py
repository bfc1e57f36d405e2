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
MODULE = "decoding"

import autograder.checks  # noqa: E402

# A failed check shows your test line and the check's message, not the checks' own source:
# pytest leaves out the frames of a module that sets __tracebackhide__.
autograder.checks.__tracebackhide__ = True


@pytest.fixture(scope="session")
def student():
    return importlib.import_module(MODULE)


@pytest.fixture
def seed():
    return 0


@pytest.fixture
def gen(seed):
    return torch.Generator().manual_seed(seed)
