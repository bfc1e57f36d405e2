"""The worker process: imports the student's file and answers the grader's requests.

Started by :mod:`autograder.sandbox` as ``python -I -c`` with the staging folder
first on ``sys.path``. Requests and answers are :mod:`.wire` messages on two
inherited pipe descriptors; the student's prints go to stdout/stderr, which the
grader captures separately, so printing can never corrupt the protocol.

Nothing this process says is trusted: the grader re-checks every value.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback
from typing import Any

from . import guards, ops, wire


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
        args = wire.decode(request.get("args", []), self.resolve)
        kwargs = wire.decode(request.get("kwargs", {"__dict__": []}), self.resolve)
        if op == "getattr":
            return getattr(self.resolve(request["ref"], ""), request["name"])
        if op == "hasattr":
            return hasattr(self.resolve(request["ref"], ""), request["name"])
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
        if op == "release":
            self.objects.pop(request["ref"], None)
            return None
        raise wire.WireError(f"unknown request {op!r}")

    def answer(self, request: dict) -> dict:
        guards.reset()
        try:
            value = self.load() if request.get("op") == "load" else self.handle(request)
            body = {"ok": wire.encode(value, self.make_ref)}
        except BaseException as exc:  # noqa: BLE001 - student code may raise anything, SystemExit included
            body = {"error": describe_exception(exc, self.module_path)}
        body["banned"] = guards.used()
        return body


def describe_exception(exc: BaseException, student_file: str) -> dict:
    """The error as the student should see it: type, message, their own frames only."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == student_file]
    where = [f"line {f.lineno}, in {f.name}: {(f.line or '').strip()}" for f in frames[-3:]]
    message = str(exc)
    if isinstance(exc, SyntaxError):
        message = f"{exc.msg} (line {exc.lineno})"
        if exc.text:
            where = [f"line {exc.lineno}: {exc.text.strip()}"]
    return {"type": type(exc).__name__, "message": message[:2000], "where": where}


def _warm_up() -> None:
    """What every forked worker would otherwise pay for again: building the first optimiser
    imports torch._dynamo (about a second of CPU), which assignments that train all need."""
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


def main(module_name: str, module_path: str, helpers_path: str | None, banned: list[str]) -> None:
    _prepare(banned)
    serve(module_name, module_path, helpers_path, int(os.environ["KIT_REQUEST_FD"]), int(os.environ["KIT_ANSWER_FD"]))


def zygote_main(banned: list[str]) -> None:
    """Import everything once, then fork one fresh worker per request on the control socket.

    Never imports student code itself. Non-dumpable, so a worker (same user)
    cannot ptrace it to tamper with the workers forked after it.
    """
    import ctypes
    import json
    import signal
    import socket

    try:
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
    except (OSError, AttributeError):
        pass
    _prepare(banned)
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
                os.close(fds[2])
                os.chdir(spec["scratch"])
                os.environ["HOME"] = os.environ["TMPDIR"] = spec["scratch"]
                serve(spec["module"], spec["path"], spec["helpers"], fds[0], fds[1])
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)
        control.sendall(json.dumps({"pid": pid}).encode())


def serve(module_name: str, module_path: str, helpers_path: str | None, request_fd: int, answer_fd: int) -> None:
    requests = os.fdopen(request_fd, "rb", buffering=0)
    answers = os.fdopen(answer_fd, "wb")
    server = Server(module_name, module_path, helpers_path)
    while True:
        try:
            request = wire.read_message(requests)
        except EOFError:
            return
        wire.write_message(answers, server.answer(request))
        sys.stdout.flush()
        sys.stderr.flush()
