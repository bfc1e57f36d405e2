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

One job: :class:`Worker`, one student's process: start it (forked from a :mod:`.zygote`),
send it requests with a time limit, kill it and everything it started. Its limits are
:mod:`.limits`, what the platform allows :mod:`.isolation`, and the watchdog that runs while
it answers :mod:`.watchdog`.
"""

from __future__ import annotations

import os
from pathlib import Path

import psutil

from . import proctree
from .capture import OutputCapture
from .channel import Channel, ChannelClosed, ChannelTimeout, ChannelViolation
from .clock import StudentClock, TimeLimit
from .isolation import masked_folders
from .limits import Limits, WorkerDied, WorkerProtocol, WorkerTimeout
from .staging import make_staging, remove_staging
from .users import ensure_student_user
from .watchdog import Watchdog, _Stop
from .zygote import Zygote, worker_python


class Worker(Watchdog):
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
        self.python = python or worker_python()
        self.zygote = zygote
        self._own_zygote: Zygote | None = None
        self.user = zygote.user if zygote is not None else ensure_student_user()
        self.pid: int | None = None
        self.output: OutputCapture | None = None
        self.channel: Channel | None = None
        self._staging: Path | None = None
        self._foreign: set[int] = set()  # our children that are not the worker's (zygotes, other workers)
        self._last_watch = 0.0
        # Where writes are not refused: the count of the student user's own files (as root), or free bytes
        # per watched filesystem (without root); the filesystems that live in memory; what the count found
        # {filesystem: bytes}, and how many entries of its own.
        self._file_count: proctree.FileCount | None = None
        self._disk_baseline: dict[str, int] = {}
        self._memory_devices: set[int] = set()
        self._files: dict[int, int] = {}
        self._file_entries = 0
        self._private_tmpfs: dict[str, int] = {}  # the worker's own tmpfs folders and sizes (MB), read through /proc/<pid>/root
        self._held = 0  # memory held outside any process's RSS (memfds, SysV segments, tmpfs files)
        self._last_held = 0.0
        self.failure: Exception | None = None  # what the watchdog found
        self.clock: StudentClock | None = None  # the running request's time (the watchdog samples it)

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
            self._start_watching_disk("namespaces" in features)

    def alive(self) -> bool:
        if self.pid is None:
            return False
        return proctree.alive(self.pid)  # any of its threads: a leader gone with the bare exit call is not the end

    def request(self, message: dict, limit: TimeLimit) -> dict:
        """Send one request and wait for its answer, for at most ``limit.seconds`` of the student's
        time (:mod:`.clock`) and never past ``limit.wall``."""
        if not self.alive() or self.channel is None:
            raise WorkerDied("the worker is not running")
        self.clock = StudentClock(limit.seconds)
        try:
            request_id = self.channel.send(message, limit.wall, self._watch)
            return self.channel.receive(request_id, limit.wall, self._watch)
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
        finally:
            self.clock = None

    def kill(self) -> None:
        """Kill the worker and everything it started, until nothing is left; safe to call twice."""
        if self.user is not None:
            proctree.kill_user(self.user.pw_uid)
        else:
            proctree.kill_tree(self._process_objects(), find_more=self._process_objects)
        if self._file_count is not None:
            self._file_count.close()
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
