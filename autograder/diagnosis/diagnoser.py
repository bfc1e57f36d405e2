"""Mistake-aware feedback: name the classic mistake a wrong result matches.

When a check fails, the grader repeats what produced the checked value, on the
grader side and on the same inputs, through each catalogued wrong solution (the
reference with the mistake's edits, trusted code): the call the seam recorded as
producing it (``Feedback.call``), or else the failed test itself, run again with
``student`` bound to the mistake and looked at the same check (``replay.py``). If what the student's code did matches
what a mistake does, and the reference does otherwise, that mistake is a candidate;
it is named, with the lecture's reason, only when it is consistent with everything
the submission did across all its tests (:meth:`Diagnoser.consistent`, applied by
the scoring plugin when the run ends).

"What it did" is an observation: a value (compared within a tolerance, and by
dtype when the dtype is all that differs), or an :class:`~autograder.checks.Outcome`:
the call raised (same exception type and message), called a banned function
(replays run under the same wrappers the worker uses), or returned where it
should have raised. Diagnosis never changes a score, and shows no hidden input
or reference code: only the mistake's own explanation.

The replays are the grader's own time, so they have a budget of their own (:class:`Budget`): counts
(``REPLAYS_PER_SUBMISSION``, the same on every machine), and seconds: all the replays of one grading
take at most ``DIAGNOSIS_SECONDS`` of CPU (a seventh of the run's limit at most) and ``WALL_ALLOWANCE``
times that in wall time, each at most ``REPLAY_SECONDS`` of CPU, and none runs once the run's deadline
(``Deadlines.run``) is less than ``RUN_RESERVE`` of the run's limit away: the tests still to come need
that time. A replay past its limit is stopped inside (a timer signal; never half-way through an import
or a ``with`` block's entry or exit, where the stop waits), the grader's state a replay sets and undoes
is put back (:meth:`Budget.run`), and that failure is not diagnosed (its other mistakes replay the same
test); once the budget is spent, no later failure is. A failure not diagnosed names nothing: the budget
can cost names, never give a wrong one, nor a point.
"""

from __future__ import annotations

import copy
import functools
import itertools
import logging
import math
import signal
import sys
import threading
import time
import types
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np
import torch

from ..banned import scan_source
from ..catalogue import CatalogueEntry, changed_names, combined_source, read_catalogue, submission_source
from ..checks import RETURNED, Outcome, to_tensor
from ..config import Assignment, ConfigError
from ..context import current, restore
from ..grading.record import NamedMistake
from ..worker import guards, ops
from .replay import PASSED, TestReplay, load_helpers

MATCH_ATOL = 1e-5
MATCH_RTOL = 1e-4
# Budgets count replays first, so the same submission gets the same names on a fast and a slow machine.
# A replay of a test's own function (build, train, query) costs far more than one call.
REPLAYS_PER_SUBMISSION = {"call": 1500, "replay": 80, "again": 40}
# "again": test replays of the second look at failures no mistake explained alone (a file with several mistakes),
# counted apart so the first look at the submission's many failures cannot spend them.
# ...and seconds, far above what a graded mistake's diagnosis takes (0.1 to 2.1 s, `make bench`), far below
# what a failure whose every replay trains for 1,000 steps would take (a raising train_copy: 100 s of CPU).
# A replay's limit sits far above the longest test of any reference (seq2seq's training, about 11 s on a loaded
# machine), so no catalogued diagnosis depends on the machine's speed (`make determinism`); the grading's total
# keeps a raising training loop's diagnosis within a few times the reference's own grading (seq2seq: 16 s).
DIAGNOSIS_SECONDS = 60.0  # CPU seconds for all the replays of one grading (at most a seventh of run_timeout)
REPLAY_SECONDS = 40.0  # CPU seconds for one replay
WALL_ALLOWANCE = 3.0  # wall time allowed per CPU second, where gradings share the machine (parallel.BATCH_RUN_WALL)
RUN_RESERVE = 0.1  # of run_timeout: no replay starts closer than this to the run's deadline
LEAST_SECONDS = 0.05  # a replay that may not have this much (of either clock) does not start
log = logging.getLogger("autograder.diagnosis.diagnoser")
# A failure replayed by running its test again: a wrong value, or the student's code raising. Not a
# function left unwritten, a timeout or a crash, which no catalogued mistake does.
TEST_REPLAY_KINDS = ("wrong", "raised")


CONTRADICTIONS_KEPT = 3  # per mistake: the failures that ruled it out, looked at again with the others (reconsider)
# mistakes of other functions tried beside the one ruled out, per contradiction (a call replay is cheap; a test replay
# runs the whole test)
EXTRA_PER_CONTRADICTION = {"call": 24, "replay": 4}
# per failure looked at again: the named mistakes with one more they could hide, tried (again())
HIDDEN_PER_LOOK = {"call": 12, "again": 4}
# ...and other mistakes found in the file tried beside a mistake whose declared test the student passed (cancelled)
PARTNERS_TRIED = 2


def _small(value: Any) -> bool:
    """A value small enough to keep until the grading ends (a failure looked at again)."""
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size() <= 2**20
    if isinstance(value, np.ndarray):
        return value.nbytes <= 2**20
    if isinstance(value, (list, tuple)):
        return len(value) <= 64 and all(_small(v) for v in value)
    return True


def _words(x: Any) -> bool:
    return isinstance(x, (list, tuple)) and len(x) > 0 and all(isinstance(w, str) for w in x)


class OutOfTime(BaseException):
    """A replay was stopped at its limit (raised inside it by a timer). Not an Exception: neither the
    test's own code nor the diagnoser's "a raise is an observation" may take it for the mistake's."""


# A grade-many process diagnoses many submissions against the same catalogue: what depends on a mistake's source
# text alone is computed once per process (each submission still gets modules of its own, run from these).
@functools.lru_cache(maxsize=128)
def _compiled(source: str, filename: str) -> types.CodeType:
    return compile(source, filename, "exec")


@functools.lru_cache(maxsize=128)
def _scan(source: str, banned: tuple[str, ...]) -> dict:
    """The static scan of a mistake's source (read, never changed, by its callers)."""
    return scan_source(source, list(banned))


class OutOfBudget(BaseException):
    """No replay may start: the grading's replay seconds are spent, or the run's deadline is near."""


@dataclass
class Budget:
    """The seconds the replays of one grading may take (the module's docstring says how they are bounded)."""

    cpu: float  # CPU seconds for all the replays
    wall: float  # wall seconds for all the replays
    per_replay: float  # CPU seconds for one replay; its wall limit is WALL_ALLOWANCE times that
    run_deadline: float = math.inf  # the run's deadline on time.monotonic()'s clock (Deadlines.run)
    reserve: float = 0.0  # no replay starts closer than this to the run's deadline
    spent_cpu: float = 0.0
    spent_wall: float = 0.0

    @classmethod
    def of(cls, assignment: Assignment, run_deadline: float = math.inf) -> "Budget":
        seconds = min(DIAGNOSIS_SECONDS, assignment.run_timeout / 7)
        return cls(
            seconds, seconds * WALL_ALLOWANCE, min(REPLAY_SECONDS, seconds), run_deadline, RUN_RESERVE * assignment.run_timeout
        )

    def limits(self) -> tuple[float, float]:
        """The CPU and wall seconds the next replay may take (none starts if either is under LEAST_SECONDS)."""
        cpu = min(self.per_replay, self.cpu - self.spent_cpu)
        wall = min(
            self.per_replay * WALL_ALLOWANCE, self.wall - self.spent_wall, self.run_deadline - self.reserve - time.monotonic()
        )
        return cpu, wall

    def run(self, replay: Callable[[], Any], modules: tuple[str, ...] = ()) -> Any:
        """``replay()`` within what is left, counted; raises OutOfBudget when nothing is left (it does not
        start), OutOfTime when it ran past its limit (it was stopped). The grader's state a replay sets
        and undoes (grad mode, the test context, the ``sys.modules`` entries ``modules``) is put
        back as it was before, whatever it did: a replay stopped mid-way may have undone none of it."""
        cpu, wall = self.limits()
        if min(cpu, wall) < LEAST_SECONDS:
            raise OutOfBudget()
        cpu_started, wall_started = time.process_time(), time.monotonic()
        grad, context, entries = torch.is_grad_enabled(), current(), {m: sys.modules.get(m) for m in modules}
        try:
            # A mistake's warnings are not the student's: they named the solution's file and lines in the log.
            with _alarm(cpu, wall), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return replay()
        finally:
            self.spent_cpu += time.process_time() - cpu_started
            self.spent_wall += time.monotonic() - wall_started
            torch.set_grad_enabled(grad)  # e.g. stopped inside an optimiser's step, which turns it off and on
            restore(context)  # the test context a replay stopped mid-way opened is closed
            for name, module in entries.items():
                if module is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = module


_TIMERS = ((signal.ITIMER_PROF, signal.SIGPROF), (signal.ITIMER_REAL, signal.SIGALRM))
RETRY_SECONDS = 0.005  # how soon a stop that had to wait is tried again


def _interruptible(frame: Any) -> bool:
    """No frame of the replay (up to ``Budget.run``) is importing a module (an import stopped half-way
    leaves a broken module behind for the whole grading: "sympy has no attribute printing") or entering
    or leaving a ``with`` block (whose state, grad mode or the random state, would stay changed)."""
    while frame is not None and frame.f_code is not Budget.run.__code__:
        code = frame.f_code
        if code.co_filename.startswith("<frozen importlib") or code.co_name in ("__enter__", "__exit__"):
            return False
        frame = frame.f_back
    return True


@contextmanager
def _alarm(cpu: float, wall: float) -> Iterator[None]:
    """Raise OutOfTime in the block once it has taken ``cpu`` seconds of this process's CPU time or ``wall``
    seconds of wall time (one-shot timer signals). Only a timer nobody else uses is armed, and only in the
    main thread (where signal handlers run); elsewhere the block runs to its end, and is counted. Never in
    the middle of an import or of a context manager's ``__enter__``/``__exit__`` (``_interruptible``): there
    the raise waits, a few milliseconds at a time, for the block to be back in plain code."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    armed = [True]

    def fire(signum: int, frame: Any) -> None:
        if not armed[0]:
            return
        if not _interruptible(frame):
            signal.setitimer(signal.ITIMER_PROF if signum == signal.SIGPROF else signal.ITIMER_REAL, RETRY_SECONDS)
            return
        armed[0] = False
        raise OutOfTime()

    previous = {}
    try:
        for (timer, sig), seconds in zip(_TIMERS, (cpu, wall)):
            free = signal.getsignal(sig) == signal.SIG_DFL and signal.getitimer(timer) == (0.0, 0.0)
            if free and math.isfinite(seconds):  # no limit on that clock: no timer
                previous[sig] = signal.signal(sig, fire)
                signal.setitimer(timer, min(max(seconds, 1e-3), 1e6))
        yield
    finally:
        while True:  # a signal landing in here stops nothing: the cleanup is done whole
            try:
                armed[0] = False
                for timer, sig in _TIMERS:
                    if sig in previous:
                        signal.setitimer(timer, 0)
                        signal.signal(sig, previous[sig])
                break
            except OutOfTime:
                continue


class Diagnoser:
    def __init__(self, assignment: Assignment, run_deadline: float = math.inf, budget: Budget | None = None) -> None:
        """One per submission. ``run_deadline``: the run's (``Deadlines.run``), which no replay comes near;
        ``budget``: the seconds the replays may take (``Budget.of`` the assignment unless given)."""
        self.assignment = assignment
        self.entries = read_catalogue(assignment, "mistake")
        self._modules: dict[str, types.ModuleType] = {}
        self._changes: dict[str, set[str]] = {}  # mistake -> the functions it changes (filled on first use)
        self.budget = budget if budget is not None else Budget.of(assignment, run_deadline)
        self.skipped = False  # the last failure was not compared because the budget did not allow it
        self.replays = dict.fromkeys(REPLAYS_PER_SUBMISSION, 0)  # replays run so far, by kind (the budget's counts)
        # Across the submission's tests: mistakes whose replay matched what the student's code did, and
        # mistakes whose replay did something else wrong than the student's code (ruled out everywhere).
        self.matched: set[str] = set()
        self.ruled_out: set[str] = set()
        self._hidden_tried: dict[str, set[str]] = {}  # test key -> the hidden mistakes again() tried beside the named
        self._by_name = {e.name: e for e in self.entries}
        self._scans: dict[str, dict] = {}
        self._helpers: Any = None  # worker_helpers.py on this side, for test replays (loaded on first use)
        # mistake -> the (call, got) of the failures that ruled it out (a few, small): looked at again with the
        # other mistakes the submission makes (reconsider), since several mistakes change each other's values
        self._contradictions: dict[str, list[tuple[Any, Any]]] = {}
        # test key -> replays of the cases the student's code passed (None: one that could not be kept), and
        # (mistakes, test key) -> whether those mistakes pass them all (None: not known; cancelled, consistent)
        self._passing: dict[str, list[TestReplay | None]] = {}
        self._passes: dict[tuple[str, str], bool | None] = {}  # _on_passed_cases
        self._graded: set[str] | None = None  # the graded functions and classes (_unrelated), read on first use

    def _changed(self, entry: CatalogueEntry) -> set[str]:
        """The functions ``entry`` changes; computed only when a failed check is diagnosed (a
        submission that passes everything pays nothing for it)."""
        if entry.name not in self._changes:
            self._changes[entry.name] = changed_names(self.assignment, entry)
        return self._changes[entry.name]

    def _source(self, entry: CatalogueEntry | tuple | None) -> str:
        """The reference with one mistake, or with several at once (a tuple: a file with several mistakes)."""
        if isinstance(entry, tuple):
            return combined_source(self.assignment, list(entry))
        return submission_source(self.assignment, entry)

    @staticmethod
    def _key(entry: CatalogueEntry | tuple | None) -> str:
        if isinstance(entry, tuple):
            return "+".join(e.name for e in entry)
        return entry.name if entry else "__reference__"

    def _module(self, entry: CatalogueEntry | tuple | None) -> types.ModuleType:
        key = self._key(entry)
        if key not in self._modules:
            module = types.ModuleType(f"_mistake_{key.replace('+', '__')}")
            module.__file__ = str(self.assignment.solution)
            module.__kit_source__ = self._source(entry)  # what a test reading the source reads (ModuleStudent.source_uses)
            exec(_compiled(module.__kit_source__, module.__file__), module.__dict__)  # noqa: S102 - our own catalogue
            self._modules[key] = module
        return self._modules[key]

    def _run(self, module: types.ModuleType, call: Any, seed: int = ops.TEST_SEED) -> Any:
        # The state the student's worker starts each test from (seam.RemoteStudent.deadlines), so a mistake that
        # draws from the global generator draws what the student's code drew. The CPU generator only: seeding
        # CUDA, XPU and MTIA too formats the whole call stack (17 s of attention's self-check went there).
        ops.reseed(seed)
        if isinstance(call, TestReplay):  # the failed test itself, run on this implementation
            if self._helpers is None:
                self._helpers = load_helpers(self.assignment.helpers) or False
            return call.observe(module, self._helpers or None)
        call = copy.deepcopy(call)  # a mistake that writes into its inputs must not touch the test's data
        with torch.no_grad():
            if "fn" in call:
                out = getattr(module, call["fn"])(*call.get("args", ()), **call.get("kwargs", {}))
            else:
                obj = getattr(module, call["cls"])(*call.get("init", ()), **call.get("init_kwargs", {}))
                for name, args, kwargs in call.get("steps", ()):  # a recorded object's configuring calls (recipes.py)
                    getattr(obj, name)(*args, **kwargs)
                method = call.get("method", "forward")  # None: the constructor is the call
                out = obj if method is None else getattr(obj, method)(*call.get("args", ()), **call.get("kwargs", {}))
        if "output" in call:
            out = out[call["output"]]
        if "then" in call:  # how the test computed the checked value from the call's (checks.derived)
            out = call["then"](out)
        return out

    def _static_banned(self, entry: CatalogueEntry | None, call: Any) -> list[str]:
        """The banned names the grader's static scan finds in the called function or class (as the seam does)."""
        if not isinstance(call, dict) or not self.assignment.banned:
            return []
        key = self._key(entry)
        if key not in self._scans:
            self._scans[key] = _scan(self._source(entry), tuple(self.assignment.banned))
        return sorted(self._scans[key].get(call.get("fn") or call.get("cls") or "", {}))

    def _observe(self, entry: CatalogueEntry | None, call: Any, seed: int = ops.TEST_SEED) -> Any:
        """What the call does on this implementation: its value, or the Outcome (raised, banned)."""
        static = self._static_banned(entry, call)
        if static:
            return Outcome.banned(static)
        if isinstance(call, TestReplay):  # the test's own code may call what the student's may not: no wrappers
            module = self._module(entry)
            try:
                return self.budget.run(lambda: self._run(module, call, seed), (call.module_name,))
            except Exception as exc:  # noqa: BLE001 - a raise is an observation too (OutOfTime is no Exception)
                return Outcome.raised(type(exc).__name__, str(exc))
        with guards.active(list(self.assignment.banned)):
            module = self._module(entry)  # loaded under the wrappers, like a submission in the worker
            try:
                value = self.budget.run(lambda: self._run(module, call, seed))
            except Exception as exc:  # noqa: BLE001 - a raise is an observation too
                value = Outcome.raised(type(exc).__name__, str(exc))
            used = guards.used()
        return Outcome.banned(used) if used else value

    @staticmethod
    def _dtype(x: Any) -> Any:
        return x.dtype if isinstance(x, (torch.Tensor, np.ndarray)) else None

    @staticmethod
    def _dtype_kind(x: Any) -> Any:
        """The dtype, except that every integer dtype is one kind: a one-hot of int32 makes the integer mistake
        its catalogued form writes with int64 (a float32 slip is not a float16 one: floats stay exact)."""
        if isinstance(x, torch.Tensor) and not (x.dtype.is_floating_point or x.dtype.is_complex or x.dtype == torch.bool):
            return "integer"
        if isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.integer):
            return "integer"
        return Diagnoser._dtype(x)

    @staticmethod
    def _close(a: Any, b: Any) -> bool:
        if isinstance(a, Outcome) or isinstance(b, Outcome):
            if not (isinstance(a, Outcome) and isinstance(b, Outcome)):
                return False
            if a.kind == b.kind == "raised":
                return a.detail[:120] == b.detail[:120]  # the worker's message is capped; shapes in it are the same
            if a.kind == b.kind == "banned":  # the worker's static scan may name more of the same calls
                return bool(set(a.names) & set(b.names))
            return a == b
        if isinstance(a, str) or isinstance(b, str) or _words(a) or _words(b):  # words (nearest, analogy)
            both_text = isinstance(a, str) and isinstance(b, str)
            return (both_text and a == b) or (_words(a) and _words(b) and list(a) == list(b))
        try:
            ta, tb = to_tensor(a, "a").detach().double(), to_tensor(b, "b").detach().double()
        except Exception:  # noqa: BLE001 - not comparable means not a match
            return False
        if ta.shape != tb.shape:
            return False
        return bool(torch.allclose(ta, tb, atol=MATCH_ATOL, rtol=MATCH_RTOL, equal_nan=True))

    def _matches(self, got: Any, wrong: Any, expected: Any) -> bool:
        """The mistake does something the reference does not, and the student's code does the same."""
        if isinstance(got, Outcome) and got == RETURNED:  # an exception was wanted: any value means "returned normally"
            wrong, expected = (x if isinstance(x, Outcome) else RETURNED for x in (wrong, expected))
        same_values = self._close(wrong, expected)
        if same_values and self._dtype(wrong) == self._dtype(expected):
            return False  # this mistake changes nothing on these inputs
        if not self._close(got, wrong):
            return False
        # when only the dtype tells the mistake apart, the student's dtype must be the mistake's (of its kind)
        return not same_values or self._dtype_kind(got) == self._dtype_kind(wrong)

    def _differs(self, wrong: Any, expected: Any) -> bool:
        """The mistake's result is certainly not the reference's on these inputs (a value, a dtype or an
        outcome); results that cannot be compared (a module object) prove nothing either way."""
        if not (self._comparable(wrong) and self._comparable(expected)):
            return False
        return not self._close(wrong, expected) or self._dtype(wrong) != self._dtype(expected)

    @staticmethod
    def _comparable(x: Any) -> bool:
        if isinstance(x, (Outcome, str)) or _words(x):
            return True
        try:
            to_tensor(x, "x")
        except Exception:  # noqa: BLE001 - an object that is no value
            return False
        return True

    def _banned_without_call(self, got: Outcome) -> tuple[list[str], bool]:
        """A banned name found before any replayable call (the seam's static scan at construction):
        the mistakes whose source uses one of the same banned names, by the same scan."""
        names = set(got.names)
        matches = []
        for entry in self.entries:
            key = entry.name
            if key not in self._scans:
                self._scans[key] = scan_source(submission_source(self.assignment, entry), list(self.assignment.banned))
            if names & {n for uses in self._scans[key].values() for n in uses}:
                matches.append(entry.name)
                self.matched.add(entry.name)
        return matches, True

    def consistent(self, names: list[str], passed: set[str], ran: dict[str, set[str] | None] | None = None) -> list[str]:
        """The names among ``names`` that explain everything the submission did across all its tests.

        A mistake is ruled out when its replay, on some failed check, did something wrong that the
        student's code did not do, or when the student passed a test the mistake is declared to fail
        (a softmax that passes the large-input tests did not skip the max subtraction), or passed a case
        of it that the mistake fails (a nucleus that keeps the threshold token fails every threshold case).
        ``ran``: per test, the graded functions the student's code ran there (:meth:`_unrelated`).
        """
        ran = ran or {}
        keep = []
        for name in names:
            entry = self._by_name.get(name)
            if entry is None or name in self.ruled_out:
                continue
            declared = [key for key in entry.caught_by if not self._unrelated(entry, ran.get(key))]
            declared_passed = [key for key in declared if key in passed]
            if declared_passed and not self.cancelled(entry, declared_passed):
                continue
            partly = [key for key in declared if key not in passed and self._fails_a_passed_case(entry, key)]
            if partly and not self.cancelled(entry, partly):
                continue
            keep.append(name)
        return keep

    def _unrelated(self, entry: CatalogueEntry, ran: set[str] | None) -> bool:
        """Whether ``entry`` changes only graded functions that the student's code did not run in a test (``ran``:
        the file's names that test ran, by the grader's reading of the source; None: not known). An attention
        that keeps a softmax of its own never runs the graded ``softmax``: a softmax mistake can neither explain
        nor be contradicted by what that attention does (the mistake's replay runs the reference's attention,
        which calls the mistaken softmax)."""
        if ran is None:
            return False
        if self._graded is None:
            self._graded = {f.split(".")[0] for f in self.assignment.graded_functions}
        changed = self._changed(entry)
        return bool(changed) and changed <= self._graded and not changed & ran

    def _fails_a_passed_case(self, entry: CatalogueEntry, test_key: str) -> bool:
        """Whether ``entry`` alone certainly fails a case of ``test_key`` that the student's code passed (a replay
        that cannot run, or the budget, proves nothing)."""
        return self._on_passed_cases(entry, test_key) is False

    def keep_passed(self, test_key: str, item: Any) -> None:
        """Keep the replay of a case the student's code passed, of a test some mistake is declared to fail
        (``item`` None: one the scoring plugin could not keep, whose test then cancels nothing)."""
        if any(test_key in e.caught_by for e in self.entries):
            replay = None if item is None else TestReplay.of_passed(item, self.assignment.module)
            self._passing.setdefault(test_key, []).append(replay)

    def cancelled(self, entry: CatalogueEntry, keys: list[str]) -> bool:
        """Whether the student's code passing ``keys``, tests ``entry`` is declared to fail, is what ``entry`` does
        beside another mistake the submission seems to make: two mistakes can cancel (a causal mask transposed,
        read inverted by the attention, blocks the past and passes the future-independence test each fails alone;
        a generate that ignores the cache never meets decoding's wrongly oriented rectangular mask). Proven by
        running every case the student passed on both; partners declared to fail those tests are tried first."""
        partners = [
            e
            for e in self.entries
            if e.name in self.matched
            and e.name not in self.ruled_out
            and e is not entry
            and not self._changed(e) & self._changed(entry)
        ]
        partners.sort(key=lambda e: not all(key in e.caught_by for key in keys))
        return any(all(self._passes_all((entry, p), key) for key in keys) for p in partners[:PARTNERS_TRIED])

    def _passes_all(self, combined: tuple, test_key: str) -> bool:
        """Whether ``combined`` (mistakes together) passes every case of ``test_key`` the student's code passed."""
        return self._on_passed_cases(combined, test_key) is True

    def _on_passed_cases(self, candidate: CatalogueEntry | tuple, test_key: str) -> bool | None:
        """Whether ``candidate`` (a mistake, or mistakes together) passes every case of ``test_key`` the student's
        code passed: True, False (one it fails), None (not known: none kept, one not kept, or the budget)."""
        cached = (self._key(candidate), test_key)
        if cached not in self._passes:
            verdict = True if self._passing.get(test_key) else None
            for case in self._passing.get(test_key, []):
                if case is None or self.replays["replay"] >= REPLAYS_PER_SUBMISSION["replay"]:
                    verdict = None
                    break
                self.replays["replay"] += 1
                try:
                    if self._observe(candidate, case) is not PASSED:
                        verdict = False
                        break
                except (OutOfTime, OutOfBudget, ConfigError):
                    verdict = None
                    break
            self._passes[cached] = verdict
        return self._passes[cached]

    def _contradicted(self, name: str, call: Any, got: Any, test_key: str) -> None:
        kept = self._contradictions.setdefault(name, [])
        if len(kept) < CONTRADICTIONS_KEPT:
            kept.append((call, got, test_key) if _small(got) else (None, None, test_key))  # too large: it stands

    def several(self, first: CatalogueEntry | None = None) -> tuple[CatalogueEntry, ...]:
        """The mistakes the submission seems to make, at most one per function: ``first``, then those that
        reproduced one of its failures somewhere, in catalogue order, each changing functions no earlier one does."""
        chosen: list[CatalogueEntry] = [first] if first is not None else []
        taken: set[str] = set(self._changed(first)) if first is not None else set()
        for entry in self.entries:
            if entry.name in self.matched and entry not in chosen and not self._changed(entry) & taken:
                chosen.append(entry)
                taken |= self._changed(entry)
        return tuple(chosen[:3])

    def reconsider(self) -> None:
        """A mistake ruled out only where the submission's other mistakes also change the values is not ruled
        out: each failure that contradicted it is replayed with it and the submission's other mistakes together
        (``several``, plus one mistake declared to fail that test, of another function), and if that reproduces
        what the student's code did there, the contradiction is gone (and that other mistake is found too)."""
        for name in [n for n in self._by_name if n in self.ruled_out and n in self.matched]:
            cases = self._contradictions.get(name, [])
            if cases and all(call is not None and self._explained_together(name, call, got, key) for call, got, key in cases):
                self.ruled_out.discard(name)

    def _explained_together(self, name: str, call: Any, got: Any, test_key: str) -> bool:
        first = self._by_name[name]
        base = self.several(first)
        kind = "call" if isinstance(call, dict) else "replay"
        # mistakes of other functions declared to fail this test, those seen elsewhere in the submission first
        extra = [e for e in self.entries if test_key in e.caught_by and not self._changed(e) & self._changed(first)]
        extra.sort(key=lambda e: e.name not in self.matched)
        combos = [base] + [(first, e) for e in extra[: EXTRA_PER_CONTRADICTION[kind]] if (first, e) != base]
        try:
            expected = PASSED if isinstance(call, TestReplay) else self._observe(None, call)
            for combined in combos:
                if len(combined) < 2 or self.replays[kind] >= REPLAYS_PER_SUBMISSION[kind]:
                    continue
                self.replays[kind] += 1
                try:
                    if self._matches(got, self._observe(combined, call), expected):
                        self.matched.update(e.name for e in combined)
                        return True
                except ConfigError:  # two mistakes editing the same lines cannot be combined
                    continue
        except (OutOfTime, OutOfBudget):
            return False
        except Exception:  # noqa: BLE001 - a combination that cannot run explains nothing
            log.info("looking again at %s failed", test_key, exc_info=True)
        return False

    def _needed(self, members: tuple, call: Any, got: Any, expected: Any, kind: str) -> tuple:
        """The members of a matching combination this failure needs: one whose removal still reproduces it
        (a padding mistake on a test without a mask) is not named there."""
        kept = list(members)
        for member in list(members):
            if len(kept) == 1 or self.replays[kind] >= REPLAYS_PER_SUBMISSION[kind]:
                break
            rest = tuple(e for e in kept if e is not member)
            self.replays[kind] += 1
            try:
                if self._matches(got, self._observe(rest if len(rest) > 1 else rest[0], call), expected):
                    kept.remove(member)
            except ConfigError:
                continue
        return tuple(kept)

    def replay_of(self, exc: BaseException, item: Any) -> Any:
        """What a second look at ``exc`` would replay: the recorded call, or the failed test itself. Taken when the
        test fails, since pytest lets go of a test's arguments (``item.funcargs``) once its teardown is done."""
        call, got = getattr(exc, "call", None), getattr(exc, "got", None)
        if call is None and got is not None and item is not None and getattr(exc, "kind", None) in TEST_REPLAY_KINDS:
            call = TestReplay.of(item, exc, self.assignment.module)
        return call

    def again(
        self,
        exc: BaseException,
        test_key: str,
        call: Any,
        named: list[str],
        first_look: bool = True,
        passed: frozenset[str] | set[str] = frozenset(),
        ran: set[str] | None = None,
    ) -> list[str]:
        """The second look at a failure no mistake explained alone (the scoring plugin, once every test ran):
        the mistakes named elsewhere in the same submission, one at a time (a mistake whose effect reaches a
        test it is not declared to fail) and all together (a file with several mistakes); then all of them with
        one more, hidden by them: a mistake of another function declared to fail this test, none of whose
        declared tests passed (``passed``: the tests every case of which passed). Their ids, or [].
        ``first_look``: whether the failure was compared alone first (if not, the budget stopped that look, and
        the mistakes declared to fail this test are tried alone here too); ``ran``: as for the first look."""
        names = list(dict.fromkeys([*(n for n in named if n in self._by_name), *(e.name for e in self.several())]))
        entries = [e for e in (self._by_name[n] for n in names) if not self._unrelated(e, ran)][:3]
        got = getattr(exc, "got", None)  # ``call``: replay_of(exc, item), taken when the test failed
        if not entries or got is None or not isinstance(call, (dict, TestReplay)):
            return []
        # after a first look, the mistakes declared to fail this test were tried alone already
        candidates: list[Any] = [e for e in entries if not first_look or test_key not in e.caught_by]
        if len(entries) > 1:
            candidates.append(tuple(entries))
        kind = "call" if isinstance(call, dict) else "again"
        # each case of a test tries the next hidden ones: a parametrized test's cases show the same mistakes
        tried = self._hidden_tried.setdefault(test_key, set())
        hidden = [
            c
            for c in self._hidden_beside(entries, test_key, passed)
            if c[-1].name not in tried - self.matched and not self._unrelated(c[-1], ran)
        ]
        hidden = hidden[: HIDDEN_PER_LOOK[kind]]
        # two of three named elsewhere (the third, an alternative seen once, would spoil the three together: a
        # step mistake and a fresh generator per training step give the training losses; an attention mistake
        # that matched the step test beside the step mistake does not), a ruled-out member cleared as a hidden one
        pairs = list(itertools.combinations(entries, 2)) if len(entries) == 3 else []
        one_by_one = [*pairs, *hidden]  # counted one by one while the budget lasts (the others first)
        if not (candidates or hidden) or self.replays[kind] + len(candidates) + 1 > REPLAYS_PER_SUBMISSION[kind]:
            return []
        self.replays[kind] += len(candidates) + 1
        tried.update(c[-1].name for c in hidden)
        return self._first_that_matches(candidates, one_by_one, call, got, kind, test_key)

    def _first_that_matches(
        self, candidates: list[Any], one_by_one: list[Any], call: Any, got: Any, kind: str, test_key: str
    ) -> list[str]:
        """``again``'s replays: the ids of the first candidate (a mistake, or a tuple of mistakes together) whose
        values are the student's, trimmed to the members needed; ``one_by_one`` are counted against the budget
        one at a time and must stand beside the others (``_cleared``). [] when none does or the budget ends."""
        try:
            expected = PASSED if isinstance(call, TestReplay) else self._observe(None, call)
            for candidate in [*candidates, *one_by_one]:
                if candidate in one_by_one:
                    if self.replays[kind] >= REPLAYS_PER_SUBMISSION[kind]:
                        break
                    self.replays[kind] += 1
                try:
                    wrong = self._observe(candidate, call)
                except ConfigError:  # two mistakes editing the same lines cannot be combined
                    continue
                if self._matches(got, wrong, expected):
                    members = candidate if isinstance(candidate, tuple) else (candidate,)
                    needed = self._needed(members, call, got, expected, kind)
                    # a member ruled out elsewhere stands if all the candidate's mistakes together give the
                    # student's values where it was ruled out (the file seems to have them all; one not needed
                    # here, an attention mistake beside a training test's probe model, may be needed there)
                    if candidate in one_by_one:
                        if not all(self._cleared(e, members) for e in needed):
                            continue
                        self.matched.update(e.name for e in needed)  # tried first on the test's other cases
                    elif len(needed) > 1:  # a member ruled out where the others changed its values too stands if
                        for e in needed:  # they explain it there (alone, it was ruled out by that very replay)
                            self._cleared(e, members)
                    return [e.name for e in needed]
        except (OutOfTime, OutOfBudget):
            return []
        except Exception:  # noqa: BLE001 - a candidate that cannot run names nothing
            log.info("second look at %s failed", test_key, exc_info=True)
        return []

    def _cleared(self, entry: CatalogueEntry, together: tuple) -> bool:
        """Whether ``entry`` stands beside the mistakes it was found with: it was never ruled out, or every failure
        that ruled it out (a value of its own the student's code did not produce, alone) is what ``together``
        produce there. Then it is no longer ruled out."""
        if entry.name not in self.ruled_out:
            return True
        cases = self._contradictions.get(entry.name, [])
        for call, got, _key in cases:
            kind = "call" if isinstance(call, dict) else "again"
            if call is None or self.replays[kind] >= REPLAYS_PER_SUBMISSION[kind]:
                return False
            self.replays[kind] += 1
            expected = PASSED if isinstance(call, TestReplay) else self._observe(None, call)
            if not self._matches(got, self._observe(together if len(together) > 1 else together[0], call), expected):
                return False
        if not cases:
            return False
        self.ruled_out.discard(entry.name)
        return True

    def _hidden_beside(self, entries: list[CatalogueEntry], test_key: str, passed: Any) -> list[tuple]:
        """``entries`` with one more mistake each: one its values could hide (a file whose copy_batch is wrong
        also trains without zero_grad, and no training test shows that alone: compared alone there, it was ruled
        out, and it is named only if ``_cleared``). Only a mistake declared to fail this test, none of whose
        declared tests passed (``consistent`` would drop it anyway); those seen reproducing a failure elsewhere
        first."""
        hidden = [
            e
            for e in self.entries
            if test_key in e.caught_by and e not in entries and not any(key in passed for key in e.caught_by)
        ]
        # beside all of ``entries`` first; then in place of the one of its function (``several`` takes one mistake
        # per function: a softmax over dim 0 makes the attention's own softmax-over-queries match too, and hides
        # the weights returned before masking, of the same function)
        combos = [(*kept, e) for e in hidden if (kept := tuple(x for x in entries if not self._changed(x) & self._changed(e)))]
        combos.sort(key=lambda c: (len(c) <= len(entries), c[-1].name not in self.matched))
        return combos

    def describe(self, names: list[str]) -> dict[str, NamedMistake]:
        """What the renderers say of each mistake in ``names`` (record.NamedMistake): title, explanation, changes."""
        return {
            n: NamedMistake(self._by_name[n].title, self._by_name[n].explanation, sorted(self._changed(self._by_name[n])))
            for n in dict.fromkeys(names)
            if n in self._by_name
        }

    def __call__(
        self, exc: BaseException, test_key: str = "", item: Any = None, ran: set[str] | None = None, replay: Any = None
    ) -> tuple[list[str], bool]:
        """(ids of matching mistakes, whether the catalogue was compared at all); ([], False) when there is
        nothing to diagnose, or when the replays' budget does not allow it (the module's docstring).

        ``item`` is the failed pytest item: a failure no recorded call explains is replayed by running
        that test again on each mistake (``replay.py``). ``ran``: the file's names the test ran; a mistake
        of a graded function outside them is not compared (:meth:`_unrelated`)."""
        call = getattr(exc, "call", None)
        got = getattr(exc, "got", None)
        self.skipped = False
        if getattr(exc, "kind", None) == "not-implemented":  # a function not written yet is no mistake
            return [], False
        # float32 rounding (checks.FLOAT32_HINT) is compared with the mistakes declared to fail this test only: a
        # catalogued float32 form (embeddings' ppmi_float32) is named; none matching says nothing (the hint is the
        # explanation, never "matches none" beside it)
        float32 = getattr(exc, "float32", False)
        if call is None and isinstance(got, Outcome) and got.kind == "banned" and self.entries:
            return self._banned_without_call(got)
        call = replay if replay is not None else self.replay_of(exc, item)  # replay: taken when the test failed
        if not isinstance(call, (dict, TestReplay)) or got is None or not self.entries:
            return [], False
        if isinstance(call, TestReplay):
            # A whole test run per mistake: only the mistakes declared to fail this test (a mistake that does not
            # fail it passes it again and can neither match nor be ruled out here); the reference passes every
            # test (the self-check proves it), so it is not run.
            candidates, cost = [e for e in self.entries if test_key in e.caught_by], 0
        else:
            candidates, cost = self.entries, 1  # the reference too
        if float32:
            candidates = [e for e in candidates if test_key in e.caught_by]
        candidates = [e for e in candidates if not self._unrelated(e, ran)]
        if not candidates:
            return [], False
        kind = "call" if isinstance(call, dict) else "replay"
        cost += len(candidates)
        if min(self.budget.limits()) < LEAST_SECONDS or self.replays[kind] + cost > REPLAYS_PER_SUBMISSION[kind]:
            self.skipped = True  # the second look (again) may still find the file's other mistakes here
            return [], False
        self.replays[kind] += cost  # counted before running
        try:
            names, compared = self._diagnose(call, got, test_key, candidates)
            return (names, compared) if names or not float32 else ([], False)
        except (OutOfTime, OutOfBudget) as stop:  # this failure is not diagnosed (see the module's docstring)
            self.skipped = True
            log.info(
                "%s not diagnosed: %s (%.1f s of CPU, %.1f s of wall time spent on replays)",
                test_key,
                "a replay ran out of time" if isinstance(stop, OutOfTime) else "the replay budget is spent",
                self.budget.spent_cpu,
                self.budget.spent_wall,
            )
            return [], False

    def _diagnose(self, call: Any, got: Any, test_key: str, candidates: list[CatalogueEntry]) -> tuple[list[str], bool]:
        target = (call.get("fn") or call.get("cls")) if isinstance(call, dict) else None
        try:
            expected = PASSED if isinstance(call, TestReplay) else self._observe(None, call)
        except Exception:  # noqa: BLE001 - the call cannot be replayed: say nothing
            return [], False
        # Mistakes declared to fail this test first, then those that redefine the graded
        # function, then the rest (a wrong softmax also makes attention wrong).
        ordered = sorted(candidates, key=lambda e: (test_key not in e.caught_by, target not in self._changed(e)))
        matches = []
        for entry in ordered:
            try:
                wrong = self._observe(entry, call)
            except Exception:  # noqa: BLE001 - the module itself does not load: not a match
                continue
            if self._matches(got, wrong, expected):
                matches.append(entry)
                self.matched.add(entry.name)
            elif self._differs(wrong, expected) and not (isinstance(got, Outcome) and got.kind == "banned"):
                # this mistake would have shown here, and it did not (a banned call stopped the student's code
                # before it did anything: that shows nothing about what else it would have done). A mistake
                # whose result depends on the global random state (another seed, another result) cannot be
                # replayed exactly, so it is not ruled out by a differing value.
                try:
                    again = self._observe(entry, call, seed=ops.TEST_SEED + 1)
                except Exception:  # noqa: BLE001
                    again = None
                if again is not None and self._close(again, wrong):
                    self.ruled_out.add(entry.name)
                    self._contradicted(entry.name, call, got, test_key)
            # A mistake that behaves like the reference where the student's code failed is not ruled out by that:
            # the student may have this mistake and another failure besides (a nucleus written as `cumsum <= p`
            # reproduces top_p_excludes_crossing on every failing input but one sum that rounds past 1.0). It is
            # named where it reproduces the student's outputs exactly, and ruled out only by a contradiction: a
            # wrong value of its own that the student's code did not produce.
        return [e.name for e in matches], True
