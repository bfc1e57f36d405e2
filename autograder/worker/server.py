"""The worker process: imports the student's file and answers the grader's requests.

Started by :mod:`autograder.sandbox` as ``python -I -c`` with the staging folder
first on ``sys.path``. Requests and answers are :mod:`.wire` messages on two
inherited pipe descriptors; the student's prints go to stdout/stderr, which the
grader captures separately, so printing can never corrupt the protocol.

Nothing this process says is trusted: the grader re-checks every value.
"""

from __future__ import annotations

import importlib.util
import linecache
import os
import sys
import traceback
import warnings
from typing import Any

from . import guards, ops, wire
from .mounts import (
    CLONE_NEWIPC,
    CLONE_NEWNS,
    IPC_SYSCTLS,
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    make_all_readonly,
)


class Server:
    def __init__(self, module_name: str, module_path: str, helpers_path: str | None) -> None:
        self.module_name = module_name
        self.module_path = module_path
        self.helpers_path = helpers_path
        self.objects: dict[int, Any] = {}
        self.next_id = 1
        self.helpers = None

    # -- references ---------------------------------------------------------
    def make_ref(self, obj: Any) -> dict:
        ref_id = self.next_id
        self.next_id += 1
        self.objects[ref_id] = obj
        return {"__ref__": ref_id, "type": type(obj).__name__}

    def resolve(self, ref_id: int, _type: str) -> Any:
        try:
            return self.objects[ref_id]
        except KeyError:
            raise wire.WireError(f"unknown object #{ref_id}") from None

    # -- requests -----------------------------------------------------------
    def load(self) -> dict:
        name_the_file_in_warnings(self.module_path)
        spec = importlib.util.spec_from_file_location(self.module_name, self.module_path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[self.module_name] = module
        spec.loader.exec_module(module)
        self.objects[0] = module
        if self.helpers_path:
            hspec = importlib.util.spec_from_file_location("_kit_helpers", self.helpers_path)
            self.helpers = importlib.util.module_from_spec(hspec)
            hspec.loader.exec_module(self.helpers)
        names = sorted(n for n in vars(module) if not n.startswith("_"))
        return {"names": names}

    def handle(self, request: dict) -> Any:
        op = request.get("op")
        if request.get("seed") is not None:  # the first request of a test (RemoteStudent.deadlines)
            ops.reseed(int(request["seed"]))
        args = wire.decode(request.get("args", []), self.resolve)
        kwargs = wire.decode(request.get("kwargs", {"__dict__": []}), self.resolve)
        if op == "getattr":
            return getattr(self.resolve(request["ref"], ""), request["name"])
        if op == "call":
            return self.resolve(request["ref"], "")(*args, **kwargs)
        if op == "gradients":
            target = self.resolve(request["ref"], "")
            options = wire.decode(request["options"], self.resolve)
            return ops.gradients(target, args, kwargs, **options)
        if op == "helper":
            if self.helpers is None:
                raise wire.WireError("this assignment has no worker helpers")
            return getattr(self.helpers, request["name"])(*args, **kwargs)
        raise wire.WireError(f"unknown request {op!r}")

    def answer(self, request: dict) -> dict:
        guards.reset()
        try:
            value = self.load() if request.get("op") == "load" else self.handle(request)
        except BaseException as exc:  # noqa: BLE001 - student code may raise anything, SystemExit included
            body = {"error": describe_exception(exc, self.module_path)}
        else:  # an answer that cannot be sent (a meta tensor raises NotImplementedError) is not the code's raise
            try:
                body = {"ok": wire.encode(value, self.make_ref)}
            except BaseException as exc:  # noqa: BLE001
                unreadable = TypeError(f"the value returned cannot be read ({type(exc).__name__}: {str(exc)[:300]})")
                body = {"error": describe_exception(unreadable, self.module_path)}
        body["banned"] = guards.used()
        body["id"] = request.get("id")
        return body


def name_the_file_in_warnings(student_file: str) -> None:
    """A warning at a line of the student's file names the file as the student knows it
    (``embeddings.py:145: RuntimeWarning: ...``), not by its path in this worker's staging folder,
    whose random name would make the same submission's feedback differ at every grading."""
    shown = os.path.basename(student_file)
    original = warnings.formatwarning

    def formatwarning(message, category, filename, lineno, line=None):
        if filename == student_file:
            line = linecache.getline(filename, lineno) if line is None else line
            filename = shown
        return original(message, category, filename, lineno, line)

    warnings.formatwarning = formatwarning


def describe_exception(exc: BaseException, student_file: str) -> dict:
    """The error as the student should see it: type, message, their own frames only."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == student_file]
    where = [f"line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in frames[-3:]]
    message = str(exc)
    if isinstance(exc, SyntaxError):
        message = f"{exc.msg} (line {exc.lineno})" if exc.lineno else str(exc.msg)
        if exc.text:
            where = [f"line {exc.lineno}: {exc.text.strip()}"]
    return {
        "type": type(exc).__name__[:120],
        "classes": exception_classes(type(exc)),
        "message": message[:2000],
        "where": [w[:300] for w in where],
    }


def exception_classes(cls: type) -> list[str]:
    """The exception's classes, most derived first, as "module.QualName"; a class is named so only when
    that name really leads to it (a class that claims ``__module__ = "builtins"`` is not a built-in)."""
    names = []
    for c in cls.__mro__[:32]:
        module, qualname = str(getattr(c, "__module__", "?")), str(getattr(c, "__qualname__", "?"))
        found = sys.modules.get(module)
        for part in qualname.split("."):
            found = getattr(found, part, None)
        names.append((f"{module}.{qualname}" if found is c else f"unresolved {module}.{qualname}")[:200])
    return names


def _warm_up() -> None:
    """What every forked worker of an assignment that trains would otherwise pay for again: building the first
    optimiser imports torch._dynamo (about a second of CPU). Only there (``zygote_main``'s ``trains``): in the
    others it is a second of the grader's time that no student's code needs."""
    try:
        import torch

        torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))])
    except Exception:  # noqa: BLE001 - a broken torch shows up when the worker loads
        pass


def _prepare(banned: list[str]) -> None:
    sys.stdin = open(os.devnull)
    try:
        import numpy  # noqa: F401 - imported once here, before any student code
        import torch

        torch.set_num_threads(1)
    except Exception:  # noqa: BLE001 - a broken torch shows up as an import error later
        pass
    guards.install(banned)


def zygote_main(banned: list[str], trains: bool = True) -> None:
    """Import everything once, then fork one fresh worker per request on the control socket.

    Never imports student code itself. As root it stays root: each forked child
    isolates itself (:func:`_become_worker`) before it touches the student's file.
    """
    import ctypes
    import json
    import signal
    import socket

    try:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0: workers cannot ptrace the template
    except (OSError, AttributeError):
        pass
    _prepare(banned)
    if trains:
        _warm_up()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # workers are reaped automatically
    control = socket.socket(fileno=int(os.environ.pop("KIT_CONTROL_FD")))
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(control, 65536, 3)
        except OSError:
            return
        if not data:
            return
        spec = json.loads(data)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                control.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.dup2(fds[2], 1)
                os.dup2(fds[2], 2)
                _close_fds_except({0, 1, 2, fds[0], fds[1]})
                _become_worker(spec)
                serve(spec["module"], spec["path"], spec["helpers"], fds[0], fds[1])
            except BaseException:  # noqa: BLE001 - a worker that cannot isolate itself must not run student code
                traceback.print_exc()
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)
        control.sendall(json.dumps({"pid": pid}).encode())


def _close_fds_except(keep: set[int]) -> None:
    try:
        open_fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        open_fds = list(range(3, 1024))
    for fd in open_fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _become_worker(spec: dict) -> None:
    """In the forked child, before any student code: private mounts, the student user, limits."""
    import ctypes
    import resource

    libc = ctypes.CDLL(None, use_errno=True)
    scratch = spec["scratch"]
    if spec.get("private_tmp"):
        scratch = _private_mounts(libc, spec)
    uid, gid = spec.get("uid"), spec.get("gid")
    if uid is not None:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
        if os.getuid() == 0 or os.geteuid() == 0:
            raise RuntimeError("could not leave root")
        nproc = spec["limits"]["nproc_backstop"]
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: no setuid program can give root back
    os.nice(spec["limits"]["nice"])
    os.chdir(scratch)
    os.environ["HOME"] = os.environ["TMPDIR"] = scratch


def _private_mounts(libc, spec: dict) -> str:
    """A mount (and IPC) namespace of the worker's own, made while still root.

    * Every existing mount becomes read-only, so student code can write nowhere on the
      machine's disks (``readonly``; the grader watches the disk where this is refused).
    * Each world-writable folder (/tmp, /var/tmp, /dev/shm, /run/lock...) gets a small, empty
      tmpfs: bounded, private, and gone with the worker.
    * A fresh /proc with ``hidepid=2`` (``hide_processes``): the worker sees its own processes
      only, not the grader's command line or another student's worker.
    * System V IPC in a namespace of its own, with small limits (``ipc``).

    What the worker needs from under a masked folder stays at its own path, bound back over the
    new tmpfs (read-only like everything else): the staging folder, and the interpreter's
    environment when it lives there (a checkout in /tmp with its .venv). Returns the worker's
    scratch folder (the private /tmp)."""
    sizes = {path: mb for path, mb in spec["masked"].items() if os.path.isdir(path)}
    wanted = [spec["staging"], sys.prefix, sys.exec_prefix, sys.base_prefix, *(p for p in sys.path if p)]
    keep = paths_to_keep([os.path.realpath(p) for p in wanted if os.path.isdir(p)], list(sizes))
    flags = CLONE_NEWNS | (CLONE_NEWIPC if spec.get("ipc") else 0)
    if libc.unshare(flags) != 0:
        raise OSError(ctypes_errno(), "unshare(CLONE_NEWNS) failed")
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise OSError(ctypes_errno(), "making the mounts private failed")
    fds = {path: os.open(path, os.O_RDONLY | os.O_DIRECTORY) for path in keep}
    if spec.get("readonly") and not make_all_readonly(libc):
        raise OSError(ctypes_errno(), "making the mounts read-only failed")
    for target, mb in sizes.items():
        options = f"size={mb}m,mode=1777".encode()
        if libc.mount(b"tmpfs", target.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options) != 0:
            raise OSError(ctypes_errno(), f"mounting a private {target} failed")
    for path, fd in fds.items():
        os.makedirs(path, mode=0o755, exist_ok=True)
        if libc.mount(f"/proc/self/fd/{fd}".encode(), path.encode(), None, MS_BIND, None) != 0:
            raise OSError(ctypes_errno(), f"binding {path} back failed")
        os.close(fd)
    if spec.get("hide_processes"):
        if libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"hidepid=2") != 0:
            raise OSError(ctypes_errno(), "mounting a private /proc failed")
    if spec.get("ipc"):
        for name, value in IPC_SYSCTLS.items():
            try:
                with open(f"/proc/sys/kernel/{name}", "w") as f:
                    f.write(str(value))
            except OSError:
                pass
    return "/tmp"


def paths_to_keep(wanted: list[str], masked: list[str]) -> list[str]:
    """The outermost of ``wanted`` that lie under a ``masked`` folder (each bound back once)."""
    keep: list[str] = []
    for path in sorted(set(wanted), key=len):
        under = any(path == m or path.startswith(m + "/") for m in masked)
        if under and not any(path == k or path.startswith(k + "/") for k in keep):
            keep.append(path)
    return keep


def ctypes_errno() -> int:
    import ctypes

    return ctypes.get_errno()


def _flush_printed() -> None:
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - the student may have replaced or closed them
            pass


def serve(module_name: str, module_path: str, helpers_path: str | None, request_fd: int, answer_fd: int) -> None:
    requests = os.fdopen(request_fd, "rb", buffering=0)
    answers = os.fdopen(answer_fd, "wb")
    server = Server(module_name, module_path, helpers_path)
    while True:
        try:
            request = wire.read_message(requests)
        except EOFError:
            return
        answer = server.answer(request)
        _flush_printed()  # before the answer: the grader reads what a call printed when it reads its answer
        wire.write_message(answers, answer)
