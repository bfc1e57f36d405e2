"""Untrusted bytes read behind a bound: a pure function of a student's file run in a forked child.

A reader of a student's bytes (the notebook's conversion, the banned-name scan, a syntax check, the
similarity's canonical form) builds what the bytes describe: a 1 MB list literal is an AST of 470 MB,
a 5,000-digit number a ValueError nobody expected. :func:`bounded` runs such a function in a child of
its own, its memory (beyond what it shares with the grader) and CPU limited, its result sent back as
JSON and read with a size limit; whatever happens there (an exception of any kind, memory, time, a
crash) comes back as :class:`Unreadable`, which the caller reports as the upload's problem.

The memory is bounded twice: the child's address space, and the pages it holds alone, read by the grader while
it waits. The first alone let a child allocate inside the mappings it inherited (the grader's free heap, its
threads' arenas): 210 MB of its own under a 150 MB limit, a grade-all grader's processes at 606 MB.
"""

from __future__ import annotations

import ast
import gc
import json
import os
import re
import resource
import select
import signal
import time

from ..banned import Reach, refers_to, scan_source
from .grad_scope import grad_off_functions
from .imports import leave_out_foreign_imports

MEMORY_BYTES = 150 * 2**20  # a 1 MB file of real code needs 55 MB to parse and scan; a 1 MB list literal 470 MB
CPU_SECONDS = 20
WALL_SECONDS = 40
RESULT_BYTES = 8 * 2**20
WATCH_SECONDS = 0.05  # how often the grader reads the child's private memory (1 ms a read)


class Unreadable(Exception):
    """The function did not return: ``reason`` says why, in words for the student (``raised``: its exception's type)."""

    def __init__(self, reason: str, raised: str = "") -> None:
        super().__init__(reason)
        self.reason, self.raised = reason, raised

    def said(self) -> str:
        """What the student is told, after the file's name."""
        if self.raised == "RecursionError":
            return "nests too deeply for the grader to read (brackets or an expression nested thousands of levels)"
        if self.raised in ("", "MemoryError"):
            return f"is too large for the grader to read ({self.reason}: a literal of 100,000s of items, or nesting 1,000s deep)"
        return f"could not be read ({self.raised}: {self.reason})"


def bounded(function, *args, memory: int = MEMORY_BYTES, cpu: int = CPU_SECONDS, wall: float = WALL_SECONDS):
    """``function(*args)`` (its value JSON) computed in a forked child within the limits; :class:`Unreadable` otherwise."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns, never runs the grader's handlers or finally blocks
        os._exit(_child(read_end, write_end, function, args, memory, cpu))
    os.close(write_end)
    body, late, grew, read = bytearray(), False, False, False
    try:
        deadline = time.monotonic() + wall
        while len(body) <= RESULT_BYTES:
            left = deadline - time.monotonic()
            if left <= 0:
                late = True
                break
            if not select.select([read_end], [], [], min(left, WATCH_SECONDS))[0]:
                if _private_bytes(pid) > memory:
                    grew = True
                    break
                continue
            chunk = os.read(read_end, 1 << 16)
            if not chunk:
                break
            body += chunk
        read = not (late or grew)
    finally:
        os.close(read_end)
        status = _end(pid, 100 if read else 0)
    try:
        answer = json.loads(body)
    except ValueError:
        answer = None
    if len(body) > RESULT_BYTES:
        raise Unreadable("what the grader reads of it is too large")
    if not isinstance(answer, dict) or not ("value" in answer or "raised" in answer):
        cpu_out = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGXCPU
        raise Unreadable("it took too long to read" if (late or cpu_out) and not grew else "it needs too much memory to read")
    if "raised" in answer:  # a MemoryError says nothing: say why
        message = "it needs too much memory to read" if answer["raised"] == "MemoryError" else answer.get("message")
        raise Unreadable(str(message)[:2000], str(answer["raised"]))
    return answer["value"]


def _child(read_end: int, write_end: int, function, args: tuple, memory: int, cpu: int) -> int:
    try:
        os.close(read_end)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        gc.freeze()  # a collection here must not touch (and so copy) every page of the grader's objects
        _limit(resource.RLIMIT_CPU, cpu)
        try:  # the limit is on what the child adds to the grader's mappings (Linux: elsewhere, time alone)
            with open("/proc/self/statm", "rb") as f:
                _limit(resource.RLIMIT_AS, int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE") + memory)
        except OSError:
            pass
        try:
            body = json.dumps({"value": function(*args)}, ensure_ascii=False)
        except Exception as exc:  # noqa: BLE001 - the student's bytes (MemoryError, RecursionError...), said as such
            body = json.dumps({"raised": type(exc).__name__, "message": str(exc)[:2000]})
        with os.fdopen(write_end, "wb") as out:
            out.write(body.encode())
        return 0
    except BaseException:  # noqa: BLE001 - no memory left even to say so: the parent reads no answer
        return 1


def _private_bytes(pid: int) -> int:
    """The memory ``pid`` holds alone (its private dirty pages: new ones, and the grader's it wrote to); 0 unknown."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            found = re.search(rb"Private_Dirty:\s+(\d+) kB", f.read())
    except OSError:
        return 0
    return int(found[1]) * 1024 if found else 0


def _limit(which: int, value: int) -> None:
    hard = resource.getrlimit(which)[1]
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(which, (value, hard))


def _end(pid: int, patience: int) -> int:
    """The child's wait status, killed if not gone after ``patience`` hundredths of a second (0: someone else reaped it)."""
    try:
        for _ in range(patience):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            time.sleep(0.01)
        os.kill(pid, signal.SIGKILL)
        return os.waitpid(pid, 0)[1]
    except (ChildProcessError, ProcessLookupError):
        return 0


def _parsed_then(function, source: str, *args):
    """``function(source, *args)`` once ``source`` is known to parse within the child's bounds (the scans below
    take a source Python cannot parse for one that binds nothing, and would take one too large to parse so too)."""
    try:
        compile(source, "<upload>", "exec", ast.PyCF_ONLY_AST)
    except (SyntaxError, ValueError):
        pass  # the worker's import says what is wrong with it
    return function(source, *args)


def _read(source: str, filename: str, banned: list[str]) -> dict:
    kept, note = leave_out_foreign_imports(source, filename)
    return {"kept": kept if note else None, "note": note, "banned": scan_source(kept, banned)}


def read_source(source: str, filename: str, banned) -> tuple[str, str, dict[str, dict[str, tuple[int, str]]]]:
    """The grader's readings of an upload's source, behind the bound (:class:`Unreadable` when it cannot be read):
    (the source without its foreign imports, the note saying so: ``imports.leave_out_foreign_imports``; what each
    name uses of ``banned``: ``banned.scan_source`` of that source)."""
    found = bounded(_parsed_then, _read, source, filename, list(banned))
    uses = {str(n): {str(k): (int(line), str(text)) for k, (line, text) in u.items()} for n, u in found["banned"].items()}
    return (source if found["kept"] is None else str(found["kept"])), str(found["note"]), uses


def scan(source: str, banned) -> dict[str, dict[str, tuple[int, str]]]:
    """``banned.scan_source`` of an upload, read behind the bound (:class:`Unreadable` when it cannot be)."""
    found = bounded(_parsed_then, scan_source, source, list(banned))
    return {str(n): {str(k): (int(line), str(text)) for k, (line, text) in u.items()} for n, u in found.items()}


def _grad_off_parsed(source: str) -> list[str]:
    try:
        return grad_off_functions(source)
    except (SyntaxError, ValueError):
        return []  # the worker's import says what is wrong with it


def grad_off(source: str) -> list[str]:
    """``grad_scope.grad_off_functions`` of an upload, read behind the bound (:class:`Unreadable` when it cannot be)."""
    return [str(name) for name in bounded(_parsed_then, _grad_off_parsed, source)]


def references(source: str) -> dict[str, set[str]]:
    """``banned.refers_to`` of an upload, read behind the bound (:class:`Unreadable` when it cannot be)."""
    direct = bounded(_parsed_then, lambda text: {n: sorted(names) for n, names in refers_to(text).direct.items()}, source)
    return Reach({str(name): {str(n) for n in names} for name, names in direct.items()})
