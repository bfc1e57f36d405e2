"""The attention-kit autograder: release building, isolated grading, Gradescope output.

Run ``python -m autograder --help`` for the commands.
"""

from .grading import numerics

# Before anything imports torch: every grading process computes on the same kernels (see numerics.py).
numerics.pin()

__version__ = "0.5.0"  # the kit's one version (pyproject.toml reads it; CHANGELOG.md's headings use it)
