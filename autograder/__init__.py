"""The attention-kit autograder: release building, isolated grading, Gradescope output.

Run ``python -m autograder --help`` for the commands.
"""

__version__ = "0.3.0"
