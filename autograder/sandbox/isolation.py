"""What this machine lets the sandbox do, probed once: namespaces, read-only mounts, hidden processes, IPC.

One job: :func:`isolation_features` probes, in a throwaway child, which protections the
platform allows a worker (root, Linux, namespaces; ``KIT_NO_NAMESPACES=1`` turns them off on
purpose); :func:`isolation_summary` is the grader's log line saying which were in force;
:func:`masked_folders` is the private tmpfs each world-writable folder becomes. The worker's
processes, memory and CPU time are counted by a scan of /proc, thread by thread, on every machine
(:func:`accounting_mechanism` says "process scan"): the kit uses no cgroup, which is often not
writable where it runs (a container, a cgroup v1 or hybrid hierarchy).
"""

from __future__ import annotations

import ctypes
import os
import pwd
import sys
from functools import lru_cache

from ..worker.mounts import CLONE_NEWIPC, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE, MS_REC, make_all_readonly
from . import proctree
from .limits import Limits
from .users import running_as_root

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000


def masked_folders(limits: Limits) -> dict[str, int]:
    """Each world-writable folder and the size (MB) of the private tmpfs the worker gets there."""
    sizes = {"/tmp": limits.tmp_mb, "/var/tmp": 16, "/dev/shm": 16}
    return {folder: sizes.get(folder, 1) for folder in proctree.world_writable_folders()}


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


def accounting_mechanism() -> str:
    """How a grading counts the worker's processes, memory and CPU time: "process scan" (``proctree``:
    /proc read thread by thread, zombie leaders with live threads included, and ``kill(-1)`` as the
    worker's user until the kernel finds nothing left). No grading uses "cgroup v2"."""
    return "process scan"


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
        return (
            f"isolation: worker as {name}, no network, private /tmp{extra}, secrets 0700, lower CPU priority; "
            f"accounting: {accounting_mechanism()}"
        )
    forced = " (KIT_NO_NAMESPACES)" if os.environ.get(NO_NAMESPACES_ENV, "") not in ("", "0") else ""
    return (
        f"isolation: worker as {name}, secrets 0700, lower CPU priority; namespaces not allowed here{forced}, "
        "so the worker has network access, sees other processes and the shared /tmp (its files and IPC objects "
        "are removed afterwards, and count against its memory and disk limits); "
        f"accounting: {accounting_mechanism()}"
    )
