"""The trust boundary: start, limit, talk to and kill the student's worker process.

What it guarantees (the README's threat model has the long form):

* Student code runs only in the worker, never in the grader process that
  holds the reference, the expected values and the results.
* When the grader is root, the worker runs as the unprivileged user
  ``STUDENT_USER`` (created if missing), so it cannot read the grader's 0700
  folders, write the results or signal the grader. Without root the worker is
  still a separate process with the same limits, but shares the user id; the
  grader says so in its log.
* Limits: address space and file size (``setrlimit``), a process cap when the
  user switch is on, a deadline per request, an RSS watchdog over every
  process the worker started, and a bounded capture of what it prints.
* Every process the worker started is killed before results are written:
  the grader is the child subreaper, so even double-forked orphans are
  re-parented to it and found.
"""

from __future__ import annotations

import ctypes
import json
import os
import pwd
import queue
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from .worker import wire

STUDENT_USER = "kit-student"


def student_user_name() -> str:
    """kit-student, or kit-student-<slot> for one of several graders running at once (batch grading),
    so that concurrent students' workers cannot signal each other."""
    slot = os.environ.get("KIT_WORKER_SLOT", "")
    return f"{STUDENT_USER}-{slot}" if slot.isdigit() else STUDENT_USER


WORKER_PACKAGE = Path(__file__).parent / "worker"


@dataclass(frozen=True)
class Limits:
    """Resource limits for one worker. Defaults fit Gradescope's 768 MB, half-CPU box."""

    address_space_mb: int = 1400  # importing torch alone maps about 650 MB of address space
    rss_mb: int = 420  # all worker processes together; the grader itself takes about 250 MB
    max_processes: int = 48  # watched by the grader; RLIMIT_NPROC (per user) is only a backstop
    nproc_backstop: int = 1024
    file_size_mb: int = 32
    output_bytes: int = 64 * 1024  # kept from what the student prints, per worker


class WorkerDied(Exception):
    """The worker exited or was killed while answering."""


class WorkerTimeout(Exception):
    """The worker did not answer before the deadline (and has been killed)."""


class WorkerMemory(Exception):
    """The worker used more memory than allowed (and has been killed)."""


def running_as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def ensure_student_user() -> pwd.struct_passwd | None:
    """The unprivileged account student code runs as; None when we are not root."""
    if not running_as_root():
        return None
    name = student_user_name()
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    useradd = shutil.which("useradd") or "/usr/sbin/useradd"
    for _ in range(10):  # useradd fails while another grader holds the passwd lock
        done = subprocess.run(
            [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
            check=False,
            capture_output=True,
        )
        if done.returncode in (0, 9):  # 9: already exists
            break
        time.sleep(0.3)
    try:
        return pwd.getpwnam(name)
    except KeyError:
        return pwd.getpwnam("nobody")


def make_interpreter_reachable(python: str) -> list[str]:
    """Let the student user reach the interpreter: add traverse-only (o+x) bits where missing.

    Needed when Python lives under a private home (pyenv in /root): otherwise
    the unprivileged worker cannot even start. Only search permission is
    added, never read: folder listings stay private. Returns what was changed.
    """
    changed = []
    targets = {Path(os.path.realpath(python)), Path(os.path.realpath(sys.base_prefix)), Path(os.path.realpath(sys.prefix))}
    for target in targets:
        for folder in [target, *target.parents] if target.is_dir() else list(target.parents):
            mode = folder.stat().st_mode
            if not mode & 0o001:
                folder.chmod(mode | 0o001)
                changed.append(str(folder))
    return changed


def _become_subreaper() -> None:
    """Orphaned grandchildren of the worker are re-parented to us, so we can find and kill them."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        pass


class OutputCapture:
    """Reads what the worker prints; keeps the first ``limit`` bytes and counts the rest."""

    def __init__(self, stream, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0
        self.total = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream) -> None:
        while True:
            try:
                chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            with self._lock:
                room = self.limit - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
                self.dropped += max(0, len(chunk) - max(room, 0))
                self.total += len(chunk)

    def mark(self) -> int:
        with self._lock:
            return self.total

    def since(self, mark: int, max_chars: int) -> str:
        """What was printed after ``mark`` (as far as it was kept), cut to ``max_chars``."""
        with self._lock:
            text = bytes(self.kept[mark:]).decode("utf-8", "replace") if mark < len(self.kept) else ""
            extra = self.total - mark - len(text.encode("utf-8", "replace"))
        if len(text) > max_chars:
            extra += len(text) - max_chars
            text = text[:max_chars]
        if extra > 0:
            text += f"\n[... {extra} more bytes of output not shown]"
        return text


def _worker_env(scratch: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
    }


def _limit_preexec(limits: Limits, switched: bool):
    nproc = limits.nproc_backstop if switched else None

    def apply_limits() -> None:  # runs in the child, after the user switch
        mb = 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_mb * mb,) * 2)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_size_mb * mb,) * 2)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if nproc:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))

    return apply_limits


def _make_staging(user: pwd.struct_passwd | None, runtime: bool, files: dict[str, Path]) -> Path:
    """A fresh folder readable by the worker: optionally the worker runtime, the given files, a scratch dir."""
    staging = Path(tempfile.mkdtemp(prefix="kit-worker-"))
    if runtime:
        shutil.copytree(WORKER_PACKAGE, staging / "_kit_worker", ignore=shutil.ignore_patterns("__pycache__"))
    for name, source in files.items():
        shutil.copyfile(source, staging / name)
    scratch = staging / "scratch"
    scratch.mkdir()
    for path in [staging, *staging.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    if user:
        os.chown(scratch, user.pw_uid, user.pw_gid)
    return staging


def _kill_tree(procs: list[psutil.Process]) -> None:
    for _ in range(20):
        procs = [p for p in procs if p.pid != os.getpid() and _running(p)]
        if not procs:
            return
        for p in procs:
            try:
                p.send_signal(signal.SIGKILL)
            except psutil.Error:
                pass
        psutil.wait_procs(procs, timeout=0.5)
        _reap_children()


def _running(p: psutil.Process) -> bool:
    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _spawn_runtime(
    python: str, user: pwd.struct_passwd | None, limits: Limits, staging: Path, call: str, pass_fds: tuple, env: dict, stdout
) -> subprocess.Popen:
    """Start ``_kit_worker.server.<call>`` from ``staging``: as ``user``, limited, in its own session."""
    code = f"import sys; sys.path.insert(0, {str(staging)!r}); from _kit_worker import server; server.{call}"
    extra = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []} if user else {}
    return subprocess.Popen(
        [python, "-I", "-B", "-c", code],
        stdin=subprocess.DEVNULL,
        stdout=stdout,
        stderr=subprocess.STDOUT if stdout == subprocess.PIPE else subprocess.DEVNULL,
        pass_fds=pass_fds,
        cwd=staging / "scratch",
        env=env,
        start_new_session=True,
        preexec_fn=_limit_preexec(limits, bool(user)),
        **extra,
    )


class Zygote:
    """A worker template that has imported torch once and forks a fresh worker per submission.

    Same user, limits and environment as a worker, and it never imports student
    code itself, so a forked worker is exactly a freshly started one minus the
    ~1.5 s of imports. Used when one grader process grades many submissions.
    """

    def __init__(self, banned: list[str] | None = None, limits: Limits = Limits(), python: str | None = None) -> None:
        self.forks = 0  # workers started from this template (after it dies, workers start from scratch)
        self.banned = list(banned or [])
        self.limits = limits
        self.python = python or sys.executable
        self.user = ensure_student_user()
        if self.user:
            make_interpreter_reachable(self.python)
        _become_subreaper()
        self._staging = _make_staging(self.user, runtime=True, files={})
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = _worker_env(self._staging / "scratch")
        env["KIT_CONTROL_FD"] = str(theirs.fileno())
        self.proc = _spawn_runtime(
            self.python,
            self.user,
            limits,
            self._staging,
            f"zygote_main({self.banned!r})",
            (theirs.fileno(),),
            env,
            subprocess.DEVNULL,
        )
        theirs.close()
        self.control = ours
        self.control.settimeout(120)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def spawn(self, module_name: str, module_path: Path, helpers_path: Path | None, scratch: Path) -> tuple[int, int, int, int]:
        """Fork a worker; returns (pid, request write fd, answer read fd, output read fd)."""
        request_r, request_w = os.pipe()
        answer_r, answer_w = os.pipe()
        output_r, output_w = os.pipe()
        spec = {
            "module": module_name,
            "path": str(module_path),
            "helpers": str(helpers_path) if helpers_path else None,
            "scratch": str(scratch),
        }
        try:
            socket.send_fds(self.control, [json.dumps(spec).encode()], [request_r, answer_w, output_w])
            reply = self.control.recv(4096)
        finally:
            for fd in (request_r, answer_w, output_w):
                os.close(fd)
        if not reply:
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
        _kill_tree(procs)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        shutil.rmtree(self._staging, ignore_errors=True)


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
        self.user = ensure_student_user()
        if self.user:
            make_interpreter_reachable(self.python)
        self.proc: subprocess.Popen | None = None
        self.pid: int | None = None
        self.output: OutputCapture | None = None
        self._answers: queue.Queue = queue.Queue()
        self._staging: Path | None = None
        self._foreign: set[int] = set()  # our children that are not the worker's
        _become_subreaper()

    @property
    def isolated_user(self) -> str | None:
        return self.user.pw_name if self.user else None

    # -- life cycle -----------------------------------------------------------
    def start(self) -> None:
        self._foreign = {p.pid for p in psutil.Process().children(recursive=True)}
        files = {f"{self.module_name}.py": self.student_file}
        if self.helpers_file:
            files["_kit_helpers.py"] = self.helpers_file
        use_zygote = self.zygote is not None and self.zygote.alive()
        self._staging = staging = _make_staging(self.user, runtime=not use_zygote, files=files)
        module_path = staging / f"{self.module_name}.py"
        helpers_path = staging / "_kit_helpers.py" if self.helpers_file else None
        if use_zygote:
            self.pid, request_w, answer_r, output_r = self.zygote.spawn(
                self.module_name, module_path, helpers_path, staging / "scratch"
            )
            output = os.fdopen(output_r, "rb")
        else:
            request_r, request_w = os.pipe()
            answer_r, answer_w = os.pipe()
            env = _worker_env(staging / "scratch")
            env["KIT_REQUEST_FD"] = str(request_r)
            env["KIT_ANSWER_FD"] = str(answer_w)
            helpers = repr(str(helpers_path)) if helpers_path else "None"
            call = f"main({self.module_name!r}, {str(module_path)!r}, {helpers}, {self.banned!r})"
            self.proc = _spawn_runtime(
                self.python, self.user, self.limits, staging, call, (request_r, answer_w), env, subprocess.PIPE
            )
            self.pid = self.proc.pid
            os.close(request_r)
            os.close(answer_w)
            output = self.proc.stdout
        self._requests = os.fdopen(request_w, "wb")
        self._answers = queue.Queue()
        answers = os.fdopen(answer_r, "rb")
        threading.Thread(target=self._read_answers, args=(answers, self._answers), daemon=True).start()
        self.output = OutputCapture(output, self.limits.output_bytes)

    @staticmethod
    def _read_answers(stream, sink: queue.Queue) -> None:
        while True:
            try:
                sink.put(wire.read_message(stream))
            except (EOFError, OSError, ValueError, wire.WireError) as exc:
                sink.put(exc)
                return

    def alive(self) -> bool:
        if self.proc is not None:
            return self.proc.poll() is None
        if self.pid is None:
            return False
        try:
            return _running(psutil.Process(self.pid))
        except psutil.Error:
            return False

    def _exit_code(self) -> int | None:
        if self.proc is None:
            return None
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def request(self, message: dict, deadline: float) -> dict:
        """Send one request and wait for its answer until ``deadline`` (time.monotonic)."""
        if not self.alive():
            raise WorkerDied("the worker is not running")
        try:
            wire.write_message(self._requests, message)
        except (BrokenPipeError, OSError):
            self.kill()
            raise WorkerDied("the worker exited") from None
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise WorkerTimeout()
            try:
                answer = self._answers.get(timeout=min(remaining, 0.05))
            except queue.Empty:
                if self._over_memory():
                    self.kill()
                    raise WorkerMemory() from None  # (or too many processes)
                continue
            if isinstance(answer, BaseException):
                code = self._exit_code()
                self.kill()
                raise WorkerDied(_describe_exit(code))
            return answer

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
        # Orphans re-parented to us: we are the child subreaper, so even a
        # double-forked, setsid() process of the student's comes back here.
        # (Not "every process of the student user": concurrent graders share it.)
        for child in psutil.Process().children(recursive=True):
            if child.pid not in self._foreign:
                procs.setdefault(child.pid, child)
        return list(procs.values())

    def _over_memory(self) -> bool:
        """Over the RSS budget, or more processes than allowed (a fork bomb)."""
        total = 0
        procs = self._processes()
        if len(procs) > self.limits.max_processes:
            return True
        for p in procs:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total > self.limits.rss_mb * 1024 * 1024

    def kill(self) -> None:
        """Kill the worker and everything it started; safe to call twice."""
        _kill_tree(self._processes())
        if self.proc is not None:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        try:
            self._requests.close()
        except (AttributeError, OSError):
            pass
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None


def _reap_children() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "the worker stopped answering"
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        if -code == signal.SIGKILL:
            return "the process was killed (SIGKILL), most often for using too much memory"
        return f"the process was killed by signal {name}"
    return f"the process exited with status {code} (sys.exit or os._exit in your code?)"
