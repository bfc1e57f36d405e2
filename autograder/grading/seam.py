"""The seam: the only way a test reaches the student's code.

A hidden test receives a ``student`` fixture and writes ``student.softmax(x)``,
``model = student.MultiHeadAttention(8, 2)``, ``model(q, k, v)``,
``model.load_state_dict(sd)`` or ``student.gradients(model, q, k, v, wrt=(0,))``.

:class:`RemoteStudent` forwards each of these to the worker process (see :mod:`autograder.sandbox`)
and gives back plain data, or a :class:`RemoteObject` for things that stay in the worker (models;
:mod:`.recipes` says how to build them again). :func:`autograder.grading.local.local_student` is the same
interface in-process, for the reference and the diagnosis's replays; it offers no protection.

Failures reach the test as :class:`StudentCodeError` with a message written
for the student, never as a grader traceback.
"""

from __future__ import annotations

import importlib.util
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..banned import describe as describe_banned
from ..checks import Feedback, Outcome
from ..context import checkpoint, record_call
from ..sandbox import Limits, Worker, WorkerDied, WorkerMemory, WorkerProtocol, WorkerTimeout, Zygote
from ..sandbox.channel import MAX_ANSWER_BYTES
from ..sandbox.clock import TimeLimit
from ..worker import ops, wire
from . import recipes, seam_messages
from .bounded import Unreadable, grad_off, references, scan
from .grad_scope import grad_off_in
from .seam_messages import _failure_kind, _format_error, _import_failure, _raised_kind, _timeout_message, _worker_failure


class StudentCodeError(Feedback):
    """The student's code raised, hung, crashed or is missing something."""


@dataclass(frozen=True)
class Deadlines:
    """How long the student's code may run: the one place that says it.

    ``run`` is a moment on ``time.monotonic()``'s clock no request may run past (``run_timeout``
    after grading started, the import included: wall time, so a grading ends before Gradescope's).
    ``request`` is what one request may take (``test_timeout``), ``load`` what the import may take
    (again after a restart): seconds of the student's time (``sandbox.clock``: CPU time while
    runnable, wall time while asleep), so a loaded machine does not make a correct submission time out.
    Time spent on the grader's side (references, diagnosis) is not the student's: it counts against
    neither ``request`` nor ``load``; ``run`` is a moment of wall time, which it uses up too, so the
    diagnosis's replays have a budget of their own and none starts near ``run`` (``diagnosis.Budget``).
    ``grade.py`` gives the seam the deadlines of the import; the scoring plugin hands it those of
    each test for the test's duration (``with student.deadlines(d):``).
    """

    run: float = float("inf")
    request: float = float("inf")
    load: float = 120.0

    def for_request(self) -> TimeLimit:
        """The limit of a request starting now."""
        return TimeLimit.starting_now(self.request, self.run)

    def for_load(self) -> TimeLimit:
        """The limit of an import starting now."""
        return TimeLimit.starting_now(self.load, self.run)


class RemoteObject:
    """A handle on an object that lives in the worker (a function, a model...)."""

    def __init__(
        self,
        student: "RemoteStudent",
        ref_id: int,
        type_name: str,
        path: str,
        generation: int,
        target: str,
        helper: bool = False,
    ) -> None:
        self._student = student
        self._ref_id = ref_id
        self._type_name = type_name
        self._path = path  # how feedback names it: "softmax", "MultiHeadAttention(...).forward"
        self._generation = generation
        # The top-level name of the student's module it comes from ("MultiHeadAttention" for a model
        # and its methods), or "grader helper <name>" for what a grader helper built (``helper``).
        self._target = target
        self._helper = helper
        # How the grader could build this object again (recipes.py), and whose attribute it is.
        self._recipe: recipes.Recipe | None = None
        self._owner: RemoteObject | None = None
        self._attr = ""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_recipe", "_owner", "_attr"):  # never asked of the worker
            raise AttributeError(name)
        message = {"op": "getattr", "ref": self._ref_id, "name": name}
        value = self._student._ask(message, f"{self._path}.{name}", self._target, self, helper=self._helper)
        if isinstance(value, RemoteObject):
            value._owner, value._attr = self, name
        return value

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        label = self._path if self._type_name in ("function", "method", "builtin_function_or_method") else f"{self._path}(...)"
        return self._student._call(self, label, args, kwargs)

    def __repr__(self) -> str:
        return f"<student's {self._type_name} {self._path}>"


# What the answers of one test may take in the grader, all together (wire.Room: decoded data): an answer
# may be up to MAX_ANSWER_BYTES (48 MB of raw tensor bytes after a small JSON header: worker/wire.py), but a
# test may ask for many, and what it keeps of them is the grader's memory. The grader (about 220 MB, its worker
# template 170 to 280 MB more), this, and one more answer being read (at most its 48 MB payload and its 48 MB
# decoded copy) stay under 600 MB; the references' tests take at most 1 MB each (multihead; most under 0.2 MB).
ANSWER_BYTES_PER_TEST = 64 * 2**20

# How many crashes of the student's code (the worker died while answering: os._exit, a segfault, a signal)
# a grading forgives: the function that crashed runs again, in a fresh worker, from the next test on, so a
# crash on one input costs the tests it crashed in. Past these, a function that crashes is not run again
# (it would only crash again, costing a restart each time): a file that crashes on every call restarts the
# worker at most this many times more than before. The run's deadline (run_timeout) counts across restarts.
CRASH_RETRIES = 3


class RemoteStudent:
    """The student's module, behind a worker process."""

    def __init__(
        self,
        module_name: str,
        student_file: Path,
        helpers_file: Path | None = None,
        banned: list[str] | None = None,
        limits: Limits = Limits(),
        deadlines: Deadlines = Deadlines(),
        zygote: Zygote | None = None,
        static_banned: dict | None = None,
    ) -> None:
        self.zygote = zygote
        # {top-level name: {banned name: (line, as written)}} from banned.scan_source: the second
        # signal, which the student's code cannot switch off from inside the worker.
        self.static_banned = static_banned or {}
        self.module_name = module_name
        self.student_file = Path(student_file)
        self.helpers_file = helpers_file
        self.banned = banned or []
        self.limits = limits
        self._deadlines = deadlines  # those in force now: the import's, or the running test's (deadlines())
        self.worker: Worker | None = None
        self.generation = 0
        self.load_error: str | None = None
        self.load_kind: str | None = None
        self.names: list[str] = []
        # The targets (top-level names, see RemoteObject._target) that ran out of time, memory or
        # processes, crashed the worker or interfered with its channel (grade.py reports them).
        self.stopped: set[str] = set()
        # Of those, the ones not run again in later tests, where each would only fail the same way and
        # cost a restart: all but a crash, which is forgiven CRASH_RETRIES times per grading (the crashed
        # function runs again from the next test on, in a fresh worker; not again in the test it crashed in).
        self.refused: set[str] = set()
        self.crash_retries = CRASH_RETRIES
        self._crashed_in_test: set[str] = set()
        # What the running test's answers took so far (deadlines(): one room per test); None outside a
        # test, where each answer is bounded by the channel's per-answer limit alone.
        self._room: wire.Room | None = None
        self._used: set[str] = set()  # the top-level names the running test fetched (names_used())
        self._helper_ran = False  # whether the running test ran a grader helper in the worker (names_run())
        self._refers: dict[str, set[str]] | None = None  # banned.refers_to of the file, read once
        self._fresh_test = False  # whether the running test has sent no request yet (deadlines())

    # -- worker management -----------------------------------------------------
    def _ensure_worker(self) -> Worker:
        if self.load_error:
            # The full reason is the results page's top message; repeating it in every test
            # would multiply whatever the student's code printed or raised.
            raise StudentCodeError(
                f"{self.module_name}.py could not be imported, so this test could not run (the reason is at the top).",
                kind="import-error",
            )
        if self.worker is not None and self.worker.alive():
            return self.worker
        if self.worker is not None:
            self.worker.kill()
        self.worker = Worker(self.module_name, self.student_file, self.helpers_file, self.banned, self.limits, zygote=self.zygote)
        self.worker.start()
        self.generation += 1
        try:
            answer = self.worker.request({"op": "load"}, self._deadlines.for_load())
        except (WorkerDied, WorkerTimeout, WorkerMemory, WorkerProtocol) as exc:
            self.load_error = f"{self.module_name}.py could not be imported: " + _worker_failure(exc, self.limits)
            raise StudentCodeError(self.load_error, kind=_failure_kind(exc)) from None
        if "error" in answer:
            self.worker.kill()
            self.load_error = _import_failure(self.module_name, answer["error"])
            raise StudentCodeError(self.load_error, kind="import-error")
        try:
            loaded = wire.decode(answer["ok"])
            names = loaded["names"] if isinstance(loaded, dict) else None
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise wire.WireError("no list of the module's names")
        except (KeyError, wire.WireError) as exc:
            self.worker.kill()
            self.load_error = (
                f"{self.module_name}.py could not be imported: it interfered with the grader's channel (a malformed "
                f"answer when loading: {exc}); printing is fine, writing to the grader's pipes or replacing its modules is not"
            )
            raise StudentCodeError(self.load_error, kind="channel") from None
        self.names = [n[:200] for n in names[:10000]]
        return self.worker

    def load(self) -> str | None:
        """Start the worker and import the file; return the import error, if any."""
        try:
            self._ensure_worker()
        except StudentCodeError as exc:
            self.load_kind = exc.kind  # import-error, or timeout/memory/crash/channel while importing
            return str(exc)
        return None

    def close(self) -> None:
        if self.worker is not None:
            self.worker.kill()
            self.worker = None

    @contextmanager
    def deadlines(self, deadlines: Deadlines) -> Iterator[None]:
        """Run the block's requests under ``deadlines`` (the scoring plugin: one test's), their answers
        taking at most ``ANSWER_BYTES_PER_TEST`` in all (a room of the block's own)."""
        before, self._deadlines = self._deadlines, deadlines
        room, self._room = self._room, wire.Room(ANSWER_BYTES_PER_TEST)
        crashed, self._crashed_in_test = self._crashed_in_test, set()  # a crash forgiven runs again in the next test
        used, self._used, helper_ran, self._helper_ran = self._used, set(), self._helper_ran, False
        fresh, self._fresh_test = self._fresh_test, True  # its first request reseeds the worker's global generator
        try:
            yield
        finally:
            self._deadlines, self._room, self._crashed_in_test = before, room, crashed
            self._used, self._helper_ran, self._fresh_test = used, helper_ran, fresh

    def output_mark(self) -> tuple[Any, int]:
        capture = self.worker.output if self.worker else None
        return capture, capture.mark() if capture else 0

    def output_since(self, mark: tuple[Any, int], max_chars: int) -> str:
        capture, position = mark
        current = self.worker.output if self.worker else None
        if current is None:
            return ""
        return current.since(position if current is capture else 0, max_chars)

    # -- requests ----------------------------------------------------------------
    def _encode(self, value: Any) -> Any:
        def make_ref(obj: Any) -> dict:
            if isinstance(obj, RemoteObject):
                if obj._generation != self.generation:
                    raise StudentCodeError(
                        f"{obj._path} was lost when your code had to be restarted after an earlier failure", kind="not-run"
                    )
                return {"__ref__": obj._ref_id, "type": obj._type_name}
            raise TypeError(f"cannot send a {type(obj).__name__} to student code")

        return wire.encode(value, make_ref)

    def _refuse_stopped(self, label: str, target: str) -> None:
        """Raise for a target not run again: stopped in an earlier test, or crashed earlier in this one."""
        if target in self.refused:
            raise StudentCodeError(
                f"{label} was not run again: it ran out of time, memory or processes, or crashed, in an earlier test",
                kind="not-run",
            )
        if target in self._crashed_in_test:
            raise StudentCodeError(
                f"{label} was not run again in this test: it crashed earlier in it (the next test runs it afresh)",
                kind="not-run",
            )

    def _ask(self, message: dict, label: str, target: str, via: RemoteObject | None = None, helper: bool = False) -> Any:
        """Send ``message`` and decode the answer. ``label`` names the call in feedback; a failure that
        stops the worker is recorded under ``target`` (see ``stopped``), except a grader helper's
        (``helper``) running out of time, memory or crashing: it is ours, and one slow run must not
        poison the rest."""
        self._refuse_stopped(label, target)
        worker = self._ensure_worker()
        if via is not None and via._generation != self.generation:
            raise StudentCodeError(
                f"{via._path} was lost when your code had to be restarted after an earlier failure", kind="not-run"
            )
        if self._fresh_test:  # the test starts from the global generator's state a replay of it starts from
            message, self._fresh_test = {**message, "seed": ops.TEST_SEED}, False
        try:
            answer = worker.request(message, self._deadlines.for_request())
        except WorkerTimeout:
            if not helper:
                self._stop(target)
            raise StudentCodeError(_timeout_message(label, self._deadlines.request), kind="timeout") from None
        except WorkerProtocol as exc:
            self._stop(target)
            raise StudentCodeError(
                f"{label} failed: your code interfered with the grader's channel ({exc}); "
                "printing is fine, writing to the grader's pipes is not",
                kind="channel",
            ) from None
        except (WorkerDied, WorkerMemory) as exc:
            # Out of memory or processes is like a hang: running it again would only fail again and cost a
            # restart each time. A crash may be one input's (a shape, a value): forgiven a few times.
            if not helper:
                self._stop(target, forgivable=isinstance(exc, WorkerDied))
            raise StudentCodeError(f"{label} failed: " + _worker_failure(exc, self.limits), kind=_failure_kind(exc)) from None
        static = self._static_banned_for(message, via)
        if answer.get("banned") or static:
            got = Outcome.banned(sorted(set(answer.get("banned", [])) | set(static)))
            if static and not answer.get("banned"):
                raise StudentCodeError(
                    f"{label} uses {describe_banned(static)}, which this assignment does not allow: write the "
                    "computation yourself (calling your own functions is fine).",
                    got=got,
                    kind="banned",
                )
            raise StudentCodeError(
                f"{label} called {got.detail}, which this assignment does not allow: write the computation yourself "
                "(calling your own functions is fine).",
                got=got,
                kind="banned",
            )
        if "error" in answer:
            error = answer["error"]
            got = Outcome.raised(error.get("type", "Exception"), error.get("message", ""), error.get("classes", ()))
            failure = StudentCodeError(f"{label} raised " + _format_error(error), got=got, kind=_raised_kind(error))
            failure.stopped_in = seam_messages.stopped_in(error)  # for the summary's words (scoring)
            raise failure
        return self._decoded(answer["ok"], label, target, helper)

    def _decoded(self, data: Any, label: str, target: str, helper: bool) -> Any:
        """The value of an answer, its worker objects behind handles; its data counted against the running
        test's room (``deadlines()``), and its tensors remembered, weakly, as the worker's (``recipes.returned``)."""
        generation = self.generation

        def resolve(ref_id: int, type_name: str) -> RemoteObject:
            return RemoteObject(self, ref_id, type_name, label, generation, target, helper)

        try:
            return recipes.returned(wire.decode(data, resolve, self._room))  # not replayable input
        except wire.OverBudget:  # not the channel's fault, nor the function's in later tests: a room per test
            limit = self._room.limit / 2**20  # only a test's answers are counted (deadlines())
            raise StudentCodeError(
                f"{label} failed: the answers your code returned in this test came to more than {limit:.0f} MB in "
                f"total (the grader takes at most {MAX_ANSWER_BYTES / 2**20:.0f} MB per answer and {limit:.0f} MB per "
                "test); return smaller values, or fewer of them",
                kind="memory",
            ) from None
        except wire.WireError as exc:  # the worker's own encoder never produces this: its channel was tampered with
            self._stop(target)
            raise StudentCodeError(
                f"{label} failed: your code interfered with the grader's channel (a malformed answer: {exc}); "
                "printing is fine, writing to the grader's pipes is not",
                kind="channel",
            ) from None

    def _stop(self, target: str, forgivable: bool = False) -> None:
        """``target`` hung, crashed or broke the channel: recorded, and not run again, unless it crashed and the
        grading still forgives crashes (then not again in this test only: ``deadlines()`` starts the next afresh)."""
        self.stopped.add(target)
        if forgivable and self.crash_retries > 0:
            self.crash_retries -= 1
            self._crashed_in_test.add(target)
        else:
            self.refused.add(target)

    def _static_banned_for(self, message: dict, via: RemoteObject | None) -> dict:
        """What the static scan found in the top-level function or class this call runs."""
        if message.get("op") not in ("call", "gradients") or via is None:
            return {}
        return self.static_banned.get(via._target, {})

    def _call(self, target: RemoteObject, label: str, args: tuple, kwargs: dict) -> Any:
        checkpoint()  # each call into the student's code is a numbered step of the test, like a check (replay.py)
        message = {"op": "call", "ref": target._ref_id, "args": self._encode(list(args)), "kwargs": self._encode(kwargs)}
        try:
            result = self._ask(message, label, target._target, target, helper=target._helper)
            if recipes.holds_remote((args, kwargs)):
                recipes.handed_over((args, kwargs))  # what the call did to those objects cannot be replayed
            elif target._path.isidentifier():
                # a top-level function or class on plain data: a failing check on its result can be replayed
                if target._type_name == "function":
                    record_call(result, {"fn": target._path, "args": args, "kwargs": kwargs})
                elif target._type_name == "type":  # a class: its constructor, and the recipe of what it built
                    recipes.built(result, target._path, args, kwargs, replayable=not target._helper)
            else:  # an object's method, or the object itself: replayable on a fresh object if it has a recipe
                recipes.called(target, args, kwargs, result)
            return result
        except StudentCodeError as exc:
            # A top-level function called on plain data is replayed through each mistake (diagnosis.py).
            if exc.call is None and target._path.isidentifier() and not recipes.holds_remote((args, kwargs)):
                if target._type_name == "function":
                    exc.call = {"fn": target._path, "args": args, "kwargs": kwargs}
                elif target._type_name == "type":  # a class: its constructor
                    exc.call = {"cls": target._path, "init": args, "init_kwargs": kwargs, "method": None}
            raise

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        self._ensure_worker()
        self._used.add(name)
        if name not in self.names:
            raise StudentCodeError(f"{self.module_name}.py has no `{name}`: define it with exactly that name.", kind="missing")
        return self._ask({"op": "getattr", "ref": 0, "name": name}, name, name)

    def gradients(self, target: Any, *args: Any, wrt=(0,), grad_outputs=None, params: bool = False, **kwargs: Any) -> dict:
        """Run ``target(*args, **kwargs)`` in the worker and return gradients (see ``ops.gradients``)."""
        checkpoint()
        if isinstance(target, str):
            target = getattr(self, target)
        options = {"wrt": list(wrt), "grad_outputs": grad_outputs, "params": params}
        message = {
            "op": "gradients",
            "ref": target._ref_id,
            "args": self._encode(list(args)),
            "kwargs": self._encode(kwargs),
            "options": self._encode(options),
        }
        # recorded apart from the target's own calls, as "gradients through <name>"
        return self._ask(message, f"gradients through {target._path}", f"gradients through {target._target}", target)

    def helper(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Build one of the assignment's non-secret worker helpers (e.g. a probe model) in the worker."""
        checkpoint()
        self._helper_ran = True
        message = {"op": "helper", "name": name, "args": self._encode(list(args)), "kwargs": self._encode(kwargs)}
        return self._ask(message, f"grader helper {name}", f"grader helper {name}", helper=True)

    def source_uses(self, name: str, dotted: tuple[str, ...]) -> bool:
        """Whether the top-level ``name`` of the submitted file uses one of ``dotted`` (directly or through
        the module's other names), read by the grader from the source (``banned.scan_source``), not
        reported by the worker: evidence for a property no returned value shows, such as ``torch.no_grad()``."""
        try:
            source = self.student_file.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
        try:
            return name in scan(source, dotted)
        except Unreadable:  # unpack read it within the same bounds: never seen
            return False

    def grad_off(self, name: str) -> bool:
        """Whether the top-level ``name`` of the submitted file, or a function of the file it refers to, switches
        gradients off around a call that can run (``grad_scope``), read by the grader from the source: the
        evidence for a property no returned value shows; never what the worker reports."""
        try:
            source = self.student_file.read_text(encoding="utf-8", errors="replace")
            return grad_off_in(name, grad_off(source), references(source))
        except (OSError, Unreadable):  # unpack read it within the same bounds: never seen
            return False

    def names_used(self) -> set[str]:
        """The top-level names the running test fetched, and those they refer to in the submitted file (the
        grader's scan of the source, ``banned.refers_to``; never what the worker reports)."""
        if self._refers is None:
            try:
                self._refers = references(self.student_file.read_text(encoding="utf-8", errors="replace"))
            except (OSError, Unreadable):
                self._refers = {}
        return set(self._used).union(*(self._refers.get(n, set()) for n in self._used))

    def names_run(self) -> set[str] | None:
        """``names_used()``, or None when the running test ran a grader helper (it may run any of the file's names)."""
        return None if self._helper_ran else self.names_used()


def load_module(name: str, path: Path) -> Any:
    """Import a file as a module under ``name`` (trusted code only: runs in this process)."""
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
