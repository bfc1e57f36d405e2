"""Your copy of the grader's per-test bookkeeping: here it does nothing.

When grading, each check of a test is named by where it is made and each value your code returns is remembered
with the call that returned it, so that a failed test can be run again on the classic mistakes the grader knows
(the "Likely mistake" lines of your feedback). Running the public tests on your own machine needs none of that:
these functions are what `checks.py` calls, and they keep nothing.
"""

from __future__ import annotations

from typing import Any


def current() -> None:
    """The running test's bookkeeping: none outside grading."""
    return None


def checkpoint() -> None:
    """A step of the running test: not counted outside grading."""


def record_call(value: Any, call: dict) -> None:
    """Remember which call returned ``value``: nothing is remembered outside grading."""


def call_that_produced(value: Any) -> None:
    """The call that returned ``value``: unknown outside grading."""
    return None
