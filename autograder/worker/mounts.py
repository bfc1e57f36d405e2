"""Mount and namespace constants, and making a mount namespace read-only (no torch: the grader imports it too).

Used by the worker (``server._private_mounts``) and by the grader's probe of what the platform allows
(``sandbox/isolation.py``), which must not import torch before the zygote is started.
"""

from __future__ import annotations

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 4096, 16384, 1 << 18
CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
# System V IPC in the worker's own IPC namespace: a few small objects at most (an honest
# submission uses none); the namespace, and everything in it, ends with the worker.
IPC_SYSCTLS = {"shmmax": 16 << 20, "shmall": (16 << 20) // 4096, "shmmni": 16, "msgmni": 16, "msgmnb": 65536}


def make_all_readonly(libc) -> bool:
    """Every mount of this (private) mount namespace read-only: mount_setattr(2), Linux 5.12+."""
    import ctypes

    class MountAttr(ctypes.Structure):
        _fields_ = [
            ("attr_set", ctypes.c_uint64),
            ("attr_clr", ctypes.c_uint64),
            ("propagation", ctypes.c_uint64),
            ("userns_fd", ctypes.c_uint64),
        ]

    attr = MountAttr(1, 0, 0, 0)  # MOUNT_ATTR_RDONLY
    at_fdcwd, at_recursive, sys_mount_setattr = -100, 0x8000, 442  # 442 on x86-64 and arm64 alike
    return libc.syscall(sys_mount_setattr, at_fdcwd, b"/", at_recursive, ctypes.byref(attr), ctypes.sizeof(attr)) == 0
