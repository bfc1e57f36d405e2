"""Mistake-aware feedback: name the classic mistake a wrong output matches.

Filled in by the mistake catalogue (``assignments/<a>/mistakes/``); until a
check attaches the call it made, there is nothing to diagnose.
"""

from __future__ import annotations

from .config import Assignment


class Diagnoser:
    def __init__(self, assignment: Assignment) -> None:
        self.assignment = assignment

    def __call__(self, exc: BaseException) -> list[str]:
        return []
