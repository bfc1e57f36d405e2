"""What a test's ``student`` fixture is: the one interface the remote and the replaying student both implement.

One job: the :class:`Student` protocol. :class:`.seam.RemoteStudent` answers from the isolated worker
(grading); :class:`.local.ModuleStudent` from a module in this process (a catalogued mistake replayed by
the diagnoser, the reference in the flake check). A test body runs the same on both and makes the same
steps, named by the same call sites (``tests/unit/test_student_protocol.py`` runs one through both), so a
replay is compared with the student at the same check.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Student(Protocol):
    def __getattr__(self, name: str) -> Any:
        """A function, class or value of the student's module (calls are steps of the test)."""

    def deadlines(self, deadlines: Any) -> AbstractContextManager[None]:
        """The limits of one test's calls (the remote student's; an in-process one has none)."""

    def output_mark(self) -> Any:
        """Where the student's printed output stands now (None: this student captures none)."""

    def output_since(self, mark: Any, max_chars: int) -> str:
        """What the student's code printed since ``mark``, bounded."""

    def gradients(
        self, target: Any, *args: Any, wrt: Any = (0,), grad_outputs: Any = None, params: bool = False, **kwargs: Any
    ) -> dict:
        """Gradients of ``target``'s output, computed where the student's code runs."""

    def helper(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """A function of the assignment's worker_helpers.py, run beside the student's code."""

    def source_uses(self, name: str, dotted: tuple[str, ...]) -> bool:
        """Whether ``name`` (a function or class of the file) uses one of ``dotted``, by the grader's own scan."""

    def grad_off(self, name: str) -> bool:
        """Whether ``name`` (or a function of the file it calls) switches gradients off around a live call, by the
        grader's own reading of the source (``grad_scope``)."""

    def names_used(self) -> set[str]:
        """The file's top-level names the running test fetched, and those they refer to, by the grader's own
        scan of the source (``banned.refers_to``): which of the student's functions its calls ran."""

    def names_run(self) -> set[str] | None:
        """``names_used()``, or None (not known) when the test ran a grader helper beside the student's code."""
