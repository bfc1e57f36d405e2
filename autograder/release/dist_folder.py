"""dist/<a>/ changes only to a release that was proven: the build beside it, the swap, what a refusal keeps.

One job: where a release is built and how it replaces the last one. Each assignment is built and self-checked
in a folder of its own under ``dist/.building/`` (:func:`staging_folder`: on the same file system as dist/<a>/,
so the swap is a rename; unique, so two releases never share one), and only a build that passed moves into
``dist/<a>/`` (:func:`swap_in`: one atomic exchange of the two folders where Linux offers it, ``renameat2``
with ``RENAME_EXCHANGE``, else two renames a moment apart; the old release is removed after). A refused
build is removed and dist/<a>/ is left as it was: the last good release stays until a new one is proven
(:func:`kept` says which one that is). Everything the self-check reads of the build (the zips, the
simulated Gradescope and PrairieLearn trees made from them, the caches keyed on their bytes) comes from the
folder being built, never from dist/<a>/.
"""

from __future__ import annotations

import ctypes
import datetime as dt
import os
import shutil
import tempfile
from pathlib import Path

BUILDING = ".building"  # dist/.building/<a>-XXXX/: the builds being proven (a killed release may leave one; delete it)
AT_FDCWD, RENAME_EXCHANGE = -100, 2  # linux/fcntl.h, linux/fs.h


def staging_folder(out: Path, name: str) -> Path:
    """A new empty folder beside ``out/<name>/`` to build and prove ``name`` in."""
    building = out / BUILDING
    building.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=building))


def _exchange(a: Path, b: Path) -> bool:
    """Swap two folders in one step (Linux's renameat2); False where the system cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return renameat2(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0


def swap_in(staged: Path, target: Path) -> None:
    """Make the proven build ``staged`` the release at ``target``; the old release, if any, is removed after."""
    if not target.exists():
        os.rename(staged, target)
        return
    if _exchange(staged, target):
        old = staged
    else:
        old = staged.with_name(staged.name + ".old")
        os.rename(target, old)
        os.rename(staged, target)
    shutil.rmtree(old, ignore_errors=True)


def discard(staged: Path) -> None:
    """Remove a build that was refused (or failed before its self-check ended)."""
    shutil.rmtree(staged, ignore_errors=True)


def tidy(out: Path) -> None:
    """Remove dist/.building/ when no build is left in it (another release may still be using it)."""
    try:
        (out / BUILDING).rmdir()
    except OSError:
        pass


def kept(out: Path, name: str) -> str:
    """What ``out/<name>/`` holds after a refusal: the last good release (and when it was made), or nothing."""
    target = out / name
    if not target.is_dir():
        return f"nothing was written to {target}/ (it had no earlier release)"
    files = [p for p in (target / "student.zip", target / "selfcheck.txt", target) if p.exists()]
    when = dt.datetime.fromtimestamp(files[0].stat().st_mtime).strftime("%Y-%m-%d %H:%M")
    return f"{target}/ is unchanged: it keeps the last good release (built {when})"
