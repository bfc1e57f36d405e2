"""The worker: one process holding the student's module, started one way only.

Every worker is forked from a *zygote*, a runtime process that has imported
torch once and never imports student code. A grader that grades many
submissions shares one zygote (``grade_many``); a single grade gets a private
one. As root the zygote stays root (the worker cannot signal or inspect it)
in its own network namespace (no network), and each forked child takes its
own mount and IPC namespaces: every mount read-only, a small private tmpfs on
each world-writable folder (bounded disk, nothing left behind, nothing shared
with other submissions), a /proc with hidepid=2 (no other process visible),
small System V limits; then it drops to the slot's unprivileged user for good
(no new privileges) before it imports the student's file. Without root, or
where namespaces are not allowed (or ``KIT_NO_NAMESPACES=1``), the same steps
run minus what the platform refuses, the watchdog also counts what the
student holds in shared memory and on disk, and :func:`isolation_summary`
says which protections were in force.
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

import psutil

from ..worker.server import CLONE_NEWIPC, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_REC, make_all_readonly
from . import proctree
from .capture import OutputCapture
from .channel import Channel, ChannelClosed, ChannelTimeout, ChannelViolation
from .staging import make_staging, remove_staging
from .users import ensure_student_user, make_interpreter_reachable, protect_secrets, running_as_root

KIT_ROOT = Path(__file__).resolve().parent.parent.parent

log = logging.getLogger("autograder.sandbox")
CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000


@dataclass(frozen=True)
class Limits:
    """Resource limits for one worker. Defaults fit Gradescope's 768 MB, half-CPU box."""

    address_space_mb: int = 1400  # importing torch alone maps about 650 MB of address space
    rss_mb: int = 420  # all worker processes together, with the shared memory they hold; the grader takes about 250 MB
    max_processes: int = 8  # watched by the grader; RLIMIT_NPROC (per user) is only a backstop; nothing in a
    # contract starts a process (torch's own threads are threads, and one thread is set)
    nproc_backstop: int = 256
    file_size_mb: int = 32
    tmp_mb: int = 64  # the private /tmp (and 16 MB each for /var/tmp and /dev/shm), where available
    disk_mb: int = 256  # without a private /tmp: disk the worker may fill before it is stopped
    output_bytes: int = 64 * 1024  # kept from what the student prints, per worker
    nice: int = 10  # the worker yields the CPU to the grader


def masked_folders(limits: Limits) -> dict[str, int]:
    """Each world-writable folder and the size (MB) of the private tmpfs the worker gets there."""
    sizes = {"/tmp": limits.tmp_mb, "/var/tmp": 16, "/dev/shm": 16}
    return {folder: sizes.get(folder, 1) for folder in proctree.world_writable_folders()}


class WorkerDied(Exception):
    """The worker exited or was killed while answering."""


class WorkerTimeout(Exception):
    """The worker did not answer before the deadline (and has been killed)."""


class WorkerMemory(Exception):
    """The worker used more memory, processes or disk than allowed (and has been killed)."""


class WorkerProtocol(Exception):
    """The worker sent what no honest worker sends (and has been killed)."""


NO_NAMESPACES_ENV = "KIT_NO_NAMESPACES"  # set to 1: grade as where namespaces are refused (tests, or to compare)


@lru_cache(maxsize=1)
def isolation_features() -> frozenset[str]:
    """What this machine allows a worker, probed once in a throwaway child (root, Linux):

    ``namespaces`` (own mount and network namespaces: private /tmp, no network), and with them
    ``readonly`` (every mount read-only), ``hide_processes`` (a /proc with hidepid=2) and ``ipc``
    (an IPC namespace). Empty without root, or with ``KIT_NO_NAMESPACES=1``."""
    if not running_as_root() or not sys.platform.startswith("linux") or os.environ.get(NO_NAMESPACES_ENV, "") not in ("", "0"):
        return frozenset()
    bits = {"namespaces": 1, "readonly": 2, "hide_processes": 4, "ipc": 8}
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.unshare(CLONE_NEWNS | CLONE_NEWNET) == 0 and libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) == 0:
                code |= bits["namespaces"]
                if libc.unshare(CLONE_NEWIPC) == 0:
                    code |= bits["ipc"]
                # a separate proc instance (Linux 5.8+): older kernels share hidepid with the host's /proc
                if (
                    _kernel_at_least(5, 8)
                    and libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, b"hidepid=2") == 0
                ):
                    code |= bits["hide_processes"]
                if make_all_readonly(libc):
                    code |= bits["readonly"]
        except BaseException:  # noqa: BLE001
            pass
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0
    if not code & bits["namespaces"]:
        return frozenset()
    return frozenset(name for name, bit in bits.items() if code & bit)


def _kernel_at_least(major: int, minor: int) -> bool:
    try:
        found = tuple(int(x) for x in os.uname().release.split("-")[0].split(".")[:2])
    except ValueError:
        return False
    return found >= (major, minor)


def namespaces_available() -> bool:
    """Can this process give a child its own network and mount namespaces? (root, CAP_SYS_ADMIN)"""
    return "namespaces" in isolation_features()


def isolation_summary(user: pwd.struct_passwd | None = None) -> str:
    """One line for the grader's log: which protections are in force."""
    if not running_as_root():
        return (
            "isolation REDUCED (not root): student code runs in a separate, limited process but as the grader's "
            "own user, with network access and the shared /tmp; grade as root for full isolation"
        )
    name = user.pw_name if user else "the student user"
    features = isolation_features()
    if "namespaces" in features:
        extra = "".join(
            text
            for key, text in (
                ("readonly", ", read-only disks"),
                ("hide_processes", ", other processes hidden"),
                ("ipc", ", private IPC"),
            )
            if key in features
        )
        return f"isolation: worker as {name}, no network, private /tmp{extra}, secrets 0700, lower CPU priority"
    forced = " (KIT_NO_NAMESPACES)" if os.environ.get(NO_NAMESPACES_ENV, "") not in ("", "0") else ""
    return (
        f"isolation: worker as {name}, secrets 0700, lower CPU priority; namespaces not allowed here{forced}, "
        "so the worker has network access, sees other processes and the shared /tmp (its files and IPC objects "
        "are removed afterwards, and count against its memory and disk limits)"
    )


def _worker_env() -> dict[str, str]:
    from ..numerics import PINNED_ENV

    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        **{k: os.environ.get(k, v) for k, v in PINNED_ENV.items()},  # the grader's own (pinned) kernels
        "MALLOC_ARENA_MAX": "2",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
    }


def _zygote_preexec(limits: Limits, own_netns: bool):
    def apply() -> None:  # in the zygote, before exec
        mb = 1024 * 1024
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_mb * mb,) * 2)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_mb * mb,) * 2)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if own_netns:
            ctypes.CDLL(None, use_errno=True).unshare(CLONE_NEWNET)

    return apply


class Zygote:
    """A worker template that has imported torch once and forks a fresh worker per submission."""

    def __init__(self, banned: list[str] | None = None, limits: Limits = Limits(), python: str | None = None) -> None:
        self.forks = 0
        self.banned = list(banned or [])
        self.limits = limits
        self.python = python or sys.executable
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
            f"from _kit_worker import server; server.zygote_main({self.banned!r})"
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


class Worker:
    """One worker process holding the student's module. Start it, ask it, kill it."""

    def __init__(
        self,
        module_name: str,
        student_file: Path,
        helpers_file: Path | None = None,
        banned: list[str] | None = None,
        limits: Limits = Limits(),
        python: str | None = None,
        zygote: Zygote | None = None,
    ) -> None:
        self.module_name = module_name
        self.student_file = Path(student_file)
        self.helpers_file = Path(helpers_file) if helpers_file else None
        self.banned = list(banned or [])
        self.limits = limits
        self.python = python or sys.executable
        self.zygote = zygote
        self._own_zygote: Zygote | None = None
        self.user = zygote.user if zygote is not None else ensure_student_user()
        self.pid: int | None = None
        self.output: OutputCapture | None = None
        self.channel: Channel | None = None
        self._staging: Path | None = None
        self._foreign: set[int] = set()  # our children that are not the worker's (zygotes, other workers)
        self._last_watch = 0.0
        # Where writes are not refused: free bytes per watched filesystem (a cheap trigger only: when
        # one shrinks, the student's own files are counted), the filesystems that live in memory, and
        # what the count found {filesystem: bytes}.
        self._disk_baseline: dict[str, int] = {}
        self._memory_devices: set[int] = set()
        self._files: dict[int, int] = {}
        self._files_complete = True
        self._private_tmpfs: dict[str, int] = {}  # the worker's own tmpfs folders and sizes (MB), read through /proc/<pid>/root
        self._held = 0  # memory held outside any process's RSS (memfds, SysV segments, tmpfs files)
        self._last_held = 0.0
        self.failure: Exception | None = None  # what the watchdog found

    # -- life cycle -----------------------------------------------------------
    def start(self) -> None:
        if self.zygote is None or not self.zygote.alive():
            self._own_zygote = Zygote(self.banned, self.limits, self.python)
            self.zygote = self._own_zygote
            self.user = self.zygote.user
        self._foreign = {p.pid for p in psutil.Process().children(recursive=True)}
        files = {f"{self.module_name}.py": self.student_file}
        if self.helpers_file:
            files["_kit_helpers.py"] = self.helpers_file
        self._staging = make_staging(self.user, files)
        self.pid, request_w, answer_r, output_r = self.zygote.spawn(self.module_name, self._staging, bool(self.helpers_file))
        self.channel = Channel(request_w, answer_r)
        self.output = OutputCapture(os.fdopen(output_r, "rb"), self.limits.output_bytes)
        features = self.zygote.features
        if "namespaces" in features:
            self._private_tmpfs = masked_folders(self.limits)
        if "readonly" not in features:  # the worker may write to the machine's disks: watch them
            folders = proctree.world_writable_folders()
            in_memory = set(proctree.memory_filesystems(folders))
            watched = _one_per_filesystem([str(self._staging), *folders])
            if "namespaces" in features:  # the world-writable folders are private tmpfs: the staging is left
                watched = [str(self._staging)]
            self._disk_baseline = {p: _free_bytes(p) for p in watched}
            if "namespaces" not in features:
                self._memory_devices = {os.stat(p).st_dev for p in in_memory}

    def alive(self) -> bool:
        if self.pid is None:
            return False
        try:
            return proctree.running(psutil.Process(self.pid))
        except psutil.Error:
            return False

    def request(self, message: dict, deadline: float) -> dict:
        """Send one request and wait for its answer until ``deadline`` (time.monotonic)."""
        if not self.alive() or self.channel is None:
            raise WorkerDied("the worker is not running")
        try:
            request_id = self.channel.send(message, deadline, self._watch)
            return self.channel.receive(request_id, deadline, self._watch)
        except ChannelTimeout:
            self.kill()
            raise WorkerTimeout() from None
        except _Stop:
            failure = self.failure
            self.kill()
            raise failure from None
        except ChannelViolation as exc:
            self.kill()
            raise WorkerProtocol(str(exc)) from None
        except ChannelClosed:
            self.kill()
            raise WorkerDied("the process stopped while answering (sys.exit, os._exit or a crash in your code?)") from None

    # -- the watchdog, run while waiting on the channel --------------------------
    def _watch(self) -> None:
        now = time.monotonic()
        if now - self._last_watch < 0.1:
            return
        self._last_watch = now
        procs = self._processes()
        if len(procs) > self.limits.max_processes:
            self.failure = WorkerMemory(f"started more than {self.limits.max_processes} processes")
            raise _Stop()
        rss = 0  # resident memory, mapped shared memory included (RssShmem is part of RSS)
        for p in procs:
            try:
                rss += p.memory_info().rss
            except psutil.Error:
                pass
        if now - self._last_held >= 0.25:  # a few more reads: what is held outside every process's RSS
            self._last_held = now
            self._count_files([p.pid for p in procs])
            self._held = self._held_memory([p.pid for p in procs])
        if rss + self._held > self.limits.rss_mb * 1024 * 1024:
            self.failure = WorkerMemory(f"used more than {self.limits.rss_mb} MB of memory")
            log.info("memory limit: %s; %d MB held in shared memory", _describe_processes(procs), self._held >> 20)
            raise _Stop()
        on_disk = sum(n for dev, n in self._files.items() if dev not in self._memory_devices)
        if on_disk > self.limits.disk_mb * 1024 * 1024 or not self._files_complete:
            self.failure = WorkerMemory(f"wrote more than {self.limits.disk_mb} MB to disk")
            raise _Stop()

    def _count_files(self, pids: list[int]) -> None:
        """The student's own files where writes are not refused, counted once the free space of a
        watched filesystem has shrunk by 16 MB (by whoever: the count itself is the student's only)."""
        trigger = 16 * 1024 * 1024
        if not any(baseline - _free_bytes(path) > trigger for path, baseline in self._disk_baseline.items()):
            self._files, self._files_complete = {}, True
            return
        if self.user is None:  # the grader's own user: no way to tell the student's files apart
            self._files = {0: max(baseline - _free_bytes(path) for path, baseline in self._disk_baseline.items())}
            return
        scratch = [str(self._staging / "scratch")] if self._staging is not None else []
        self._files, self._files_complete = proctree.user_files(self.user.pw_uid, scratch, pids)

    def _held_memory(self, pids: list[int]) -> int:
        """Shared memory the student holds that no RSS shows: memfds kept open without being mapped,
        the student user's System V segments, and files in world-writable folders that live in
        memory (the worker's private tmpfs with namespaces, else the machine's /dev/shm...)."""
        held = proctree.held_shared_memory(pids)
        if self.user is not None:
            held += proctree.user_sysv_shm_bytes(self.user.pw_uid)
        for folder, size_mb in self._private_tmpfs.items():
            try:
                info = os.statvfs(f"/proc/{self.pid}/root{folder}")
            except OSError:
                continue
            # Only the worker's own size-limited tmpfs counts. Until the worker has mounted it (just after
            # the fork), or where mounting it failed, this path is the machine's folder: its use is not the
            # student's (counting it stopped honest code "holding tens of GB" on a loaded machine).
            if info.f_blocks * info.f_frsize <= (size_mb + 1) * 1024 * 1024:
                held += (info.f_blocks - info.f_bfree) * info.f_frsize
        held += sum(n for dev, n in self._files.items() if dev in self._memory_devices)
        return held

    def _processes(self) -> list[psutil.Process]:
        procs: dict[int, psutil.Process] = {}
        if self.pid is not None:
            try:
                root = psutil.Process(self.pid)
                procs[root.pid] = root
                for child in root.children(recursive=True):
                    procs[child.pid] = child
            except psutil.Error:
                pass
        if self.user is not None:  # as root, the slot's user is this worker's alone
            for p in proctree.user_processes(self.user.pw_uid):
                procs.setdefault(p.pid, p)
        else:  # orphans re-parented to us (the child subreaper)
            for child in psutil.Process().children(recursive=True):
                if child.pid not in self._foreign and (self.zygote is None or child.pid != self.zygote.proc.pid):
                    procs.setdefault(child.pid, child)
        return list(procs.values())

    def kill(self) -> None:
        """Kill the worker and everything it started, until nothing is left; safe to call twice."""
        if self.user is not None:
            proctree.kill_user(self.user.pw_uid)
        else:
            proctree.kill_tree(self._processes(), find_more=self._processes)
        if self.channel is not None:
            self.channel.close()
        if self._staging is not None:
            remove_staging(self._staging)
            self._staging = None
            if self.user is not None:  # both paths: a refused namespace feature must not leave anything
                proctree.remove_user_files(self.user.pw_uid)
                proctree.remove_user_ipc(self.user.pw_uid)
        if self._own_zygote is not None:
            self._own_zygote.close()
            self._own_zygote = None

    def leftovers(self) -> list[int]:
        """Processes of the student still alive (after kill: should be none)."""
        return [p.pid for p in self._processes()]


def _describe_processes(procs: list[psutil.Process]) -> str:
    parts = []
    for p in procs:
        try:
            parts.append(f"{p.pid} ({p.username()}, {p.memory_info().rss >> 20} MB, {' '.join(p.cmdline()[:3])[:80]})")
        except psutil.Error:
            continue
    return "; ".join(parts)


class _Stop(Exception):
    """Raised by the watchdog inside the channel's wait loop."""


def _one_per_filesystem(paths: list[str]) -> list[str]:
    chosen: dict[int, str] = {}
    for path in paths:
        try:
            chosen.setdefault(os.stat(path).st_dev, path)
        except OSError:
            continue
    return list(chosen.values())


def _free_bytes(path: str) -> int:
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return 0


def describe_exit(code: int | None) -> str:
    if code is None:
        return "the worker stopped answering"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        if -code == signal.SIGKILL:
            return "the process was killed (SIGKILL), most often for using too much memory"
        return f"the process was killed by signal {name}"
    return f"the process exited with status {code} (sys.exit or os._exit in your code?)"
