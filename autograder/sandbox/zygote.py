"""The zygote: the one way a worker is started, forked from a template that imported torch once.

One job: :class:`Zygote` starts a runtime process (limited address space and file size, its
own network namespace where allowed, no extended attributes or io_uring: a seccomp filter that
every worker inherits, :func:`refuse_kernel_memory_calls`) that has imported torch and never imports student
code; :meth:`Zygote.spawn` forks a fresh worker from it for each submission, handing it the
request, answer and output pipes and what it must do before the student's file is imported
(take its namespaces, mount its private folders, drop to the slot's user). Starting one
protects the secrets and clears what an earlier grader left in the slot's account (every
process of the slot's user, however hidden: :func:`.proctree.kill_user`, and its files).
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import socket
import subprocess
import sys
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Iterator

import psutil

from . import proctree
from .isolation import CLONE_NEWNET, isolation_features, masked_folders
from .limits import Limits, WorkerDied
from .staging import make_staging, remove_staging
from .users import ensure_student_user, make_interpreter_reachable, protect_secrets

KIT_ROOT = Path(__file__).resolve().parent.parent.parent
log = logging.getLogger("autograder.sandbox")


def worker_python() -> str:
    """The interpreter workers run student code with: on a course staff's machine the grading environment's
    (``KIT_GRADING_PYTHON``, set by the kit's commands: release/grading_env.py), which holds exactly the
    packages the platform installs; on a platform, the grader's own."""
    return os.environ.get("KIT_GRADING_PYTHON") or sys.executable


def _worker_env() -> dict[str, str]:
    from ..grading.numerics import PINNED_ENV

    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        **{k: os.environ.get(k, v) for k, v in PINNED_ENV.items()},  # the grader's own (pinned) kernels
        "MALLOC_ARENA_MAX": "2",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
    }


# System calls the worker template and everything forked from it may not make. Extended attributes
# (set*xattr*): a file's user.* attributes on tmpfs are kernel memory that no file size, free space or
# RSS shows (24,000 of them held 1.5 GB). io_uring: it can set them too, past this filter. Refused as a
# filesystem without extended attributes refuses them (EOPNOTSUPP), and io_uring as a kernel without it.
_REFUSED_CALLS = {  # machine: (audit architecture, {call: errno})
    "x86_64": (0xC000003E, {188: 95, 189: 95, 190: 95, 463: 95, 425: 38, 426: 38, 427: 38}),
    "aarch64": (0xC00000B7, {5: 95, 6: 95, 7: 95, 463: 95, 425: 38, 426: 38, 427: 38}),
}


def _refusing_filter(arch: int, refused: dict[int, int]) -> list[tuple[int, int, int, int]]:
    """A seccomp BPF program: another architecture's calls (and x32's) fail with ENOSYS, ``refused``
    calls with their errno, everything else is allowed."""
    load, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, errno = 0x7FFF0000, 0x00050000
    calls = sorted(refused.items())
    to_enosys = 4 + 2 * len(calls) + 1  # the last instruction: a test per call, allow, a return per call, ENOSYS
    program = [(load, 0, 0, 4), (jeq, 0, to_enosys - 2, arch), (load, 0, 0, 0), (jge, to_enosys - 4, 0, 0x40000000)]
    for call, _ in calls:
        program.append((jeq, len(calls), 0, call))  # to this call's return: past the other tests and allow
    program.append((ret, 0, 0, allow))
    program += [(ret, 0, 0, errno | code) for _, code in calls]  # (one return each, in the same order)
    program.append((ret, 0, 0, errno | 38))
    return program


def refuse_kernel_memory_calls() -> bool:
    """Install :data:`_REFUSED_CALLS` as a seccomp filter on this process and all it will start (for
    good: no process can remove a filter). True when it is in force."""
    machine = os.uname().machine
    if machine not in _REFUSED_CALLS:
        return False
    program = _refusing_filter(*_REFUSED_CALLS[machine])

    class Instruction(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Instruction))]

    instructions = (Instruction * len(program))(*[Instruction(*i) for i in program])
    fprog = Program(len(program), instructions)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0:  # PR_SET_SECCOMP, SECCOMP_MODE_FILTER (as root)
        return True
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS: what a filter needs without CAP_SYS_ADMIN
    return libc.prctl(22, 2, ctypes.byref(fprog), 0, 0) == 0


def _seccomp_filters(pid: int | str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("Seccomp_filters:")), 0)
    except (OSError, ValueError):
        return 0


def _zygote_preexec(limits: Limits, own_netns: bool):
    def apply() -> None:  # in the zygote, before exec
        mb = 1024 * 1024
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_mb * mb,) * 2)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_mb * mb,) * 2)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if own_netns:
            ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWNET)
        refuse_kernel_memory_calls()

    return apply


class Zygote:
    """A worker template that has imported torch once and forks a fresh worker per submission."""

    def __init__(
        self, banned: list[str] | None = None, limits: Limits = Limits(), python: str | None = None, trains: bool = True
    ) -> None:
        """``trains``: the assignment's code trains (``Assignment.trains``): the template imports what an
        optimiser needs once, instead of in every worker."""
        self.forks = 0
        self.trains = trains
        self.banned = list(banned or [])
        self.limits = limits
        self.python = python or worker_python()
        self.user = ensure_student_user()
        self.features = isolation_features()
        self.namespaces = "namespaces" in self.features
        protect_secrets(KIT_ROOT)  # here, because every path that runs student code starts a zygote
        if self.user:
            make_interpreter_reachable(self.python)
            # The slot's user is ours alone now: whatever it still holds was left by an earlier grader
            # that stopped before cleaning up, and must not count against (or be read by) our workers.
            proctree.kill_user(self.user.pw_uid)
            proctree.remove_user_files(self.user.pw_uid)
            proctree.remove_user_ipc(self.user.pw_uid)
        proctree.become_subreaper()
        self._staging = make_staging(None, {}, runtime=True)  # the runtime only: read by the zygote (root or us)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = _worker_env()
        env["KIT_CONTROL_FD"] = str(theirs.fileno())
        code = (
            f"import sys; sys.path.insert(0, {str(self._staging)!r}); "
            f"from _kit_worker import server; server.zygote_main({self.banned!r}, {self.trains!r})"
        )
        self.proc = subprocess.Popen(
            [self.python, "-I", "-B", "-c", code],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(theirs.fileno(),),
            cwd=self._staging,
            env=env,
            start_new_session=True,
            preexec_fn=_zygote_preexec(limits, self.namespaces),
        )
        theirs.close()
        # The filter is in force once Popen returns (it was installed before the exec): one more than ours.
        self.xattrs_refused = _seccomp_filters(self.proc.pid) > _seccomp_filters("self")
        if not self.xattrs_refused:
            log.warning("extended attributes could not be refused to workers (no seccomp): the disk watch counts them")
        self.control = ours
        self.control.settimeout(120)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def spawn(self, module_name: str, staging: Path, helpers: bool) -> tuple[int, int, int, int]:
        """Fork a worker; returns (pid, request write fd, answer read fd, output read fd)."""
        request_r, request_w = os.pipe()
        answer_r, answer_w = os.pipe()
        output_r, output_w = os.pipe()
        spec = {
            "module": module_name,
            "path": str(staging / f"{module_name}.py"),
            "helpers": str(staging / "_kit_helpers.py") if helpers else None,
            "staging": str(staging),
            "scratch": str(staging / "scratch"),
            "uid": self.user.pw_uid if self.user else None,
            "gid": self.user.pw_gid if self.user else None,
            "private_tmp": self.namespaces,
            "masked": masked_folders(self.limits) if self.namespaces else {},
            "readonly": "readonly" in self.features,
            "hide_processes": "hide_processes" in self.features,
            "ipc": "ipc" in self.features,
            "limits": asdict(self.limits),
        }
        try:
            socket.send_fds(self.control, [json.dumps(spec).encode()], [request_r, answer_w, output_w])
            reply = self.control.recv(4096)
        except OSError:
            reply = b""
        finally:
            for fd in (request_r, answer_w, output_w):
                os.close(fd)
        if not reply:
            for fd in (request_w, answer_r, output_r):
                os.close(fd)
            raise WorkerDied("the worker template stopped")
        self.forks += 1
        return int(json.loads(reply)["pid"]), request_w, answer_r, output_r

    def close(self) -> None:
        try:
            self.control.close()
        except OSError:
            pass
        try:
            procs = [psutil.Process(self.proc.pid), *psutil.Process(self.proc.pid).children(recursive=True)]
        except psutil.Error:
            procs = []
        proctree.kill_tree(procs)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        remove_staging(self._staging)


@contextmanager
def started_before_torch(banned: list[str], trains: bool = True) -> Iterator[Zygote | None]:
    """A template started while the grader is still to import torch: both imports overlap.

    A grading path (``grade``, the Gradescope entry point) enters this before importing the grader's
    modules (``autograder.grading.grade`` imports torch) and hands the zygote to ``grade_submission``; it is
    closed on leaving. On one core nothing is lost; on two, about the time of one torch import is won.
    If the template cannot start here, None: ``grade_submission`` starts its own and reports what went
    wrong with the results.
    """
    try:
        zygote = Zygote(list(banned), trains=trains)
    except Exception:  # noqa: BLE001 - the grading path's own start reports it with the results
        zygote = None
    try:
        yield zygote
    finally:
        if zygote is not None:
            zygote.close()
