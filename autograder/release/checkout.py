"""Which kit checkout a command works on: the one it runs in, not only the one ``attention-kit`` came from.

One job. ``make venv`` installs ``attention-kit`` in editable mode, so the command imports the engine of the
checkout it was installed from, whose ``config.KIT_ROOT`` (assignments/, course.toml, dist/, caches) is that
checkout. Run from another checkout sharing the venv (a clone, a course's fork), it graded the wrong kit
("unknown assignment 'layernorm_rope' (no <installed checkout>/assignments/...)"). :func:`switch_checkout`
picks the checkout, in this order:

1. ``--kit-root PATH`` before the command (``attention-kit --kit-root ../course grade ...``);
2. the ``KIT_ROOT`` environment variable;
3. the current folder or its nearest parent that is a kit checkout (``assignments/`` and ``course.toml``);
4. else the installed checkout, as before.

When that is not the engine's own checkout, the command runs again, once, as ``python -m autograder`` with
that checkout first on ``PYTHONPATH``: its own engine, whose ``KIT_ROOT`` is itself (nothing else changes
where files are found), after one line on stderr saying which checkout is used. The platforms' entry points
(``gradescope``, ``prairielearn``) and the internal ``grade-many`` never switch: they run inside a built tree.
A shipped copy of the engine (autograder.zip, the PrairieLearn package) has no other checkout to choose and does
not carry this module: it is one of the instructor's tools.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Mapping

from ..config import KIT_ROOT

NEVER_SWITCH = ("gradescope", "prairielearn", "grade-many")
OPTION = "--kit-root"
ENVIRONMENT = "KIT_ROOT"
_SWITCHED = "ATTENTION_KIT_SWITCHED_TO"  # set for the command run again: it never switches twice


def is_checkout(folder: Path) -> bool:
    return (folder / "assignments").is_dir() and (folder / "course.toml").is_file()


def has_engine(folder: Path) -> bool:
    return (folder / "autograder" / "__main__.py").is_file() and (folder / "autograder" / "config.py").is_file()


def enclosing_checkout(start: Path) -> Path | None:
    """``start`` or its nearest parent that is a kit checkout."""
    for folder in (start, *start.parents):
        if is_checkout(folder):
            return folder
    return None


def take_option(argv: list[str]) -> tuple[list[str], str | None]:
    """``argv`` without a leading ``--kit-root PATH`` (or ``--kit-root=PATH``), and that path."""
    if argv[:1] == [OPTION] and len(argv) > 1:
        return argv[2:], argv[1]
    if argv[:1] and argv[0].startswith(OPTION + "="):
        return argv[1:], argv[0].split("=", 1)[1]
    return argv, None


def chosen_checkout(option: str | None, environ: Mapping[str, str], cwd: Path) -> tuple[Path | None, str]:
    """(the checkout to use, how it was chosen); (None, "") for the installed one by default."""
    if option:
        return (cwd / option).resolve(), f"{OPTION}"
    if environ.get(ENVIRONMENT):
        return (cwd / environ[ENVIRONMENT]).resolve(), f"{ENVIRONMENT}"
    found = enclosing_checkout(cwd.resolve())
    return (found, "the current folder's") if found is not None else (None, "")


def switch_checkout(
    argv: list[str], environ: Mapping[str, str] | None = None, cwd: Path | None = None
) -> tuple[list[str], int | None]:
    """(``argv`` without the option, an exit status or None to go on here). Runs the command in the chosen
    checkout's engine instead (``os.execve``: never returns) when that is another checkout."""
    environ = os.environ if environ is None else environ
    argv, option = take_option(argv)
    if argv[:1] and argv[0] in NEVER_SWITCH:
        return argv, None
    target, how = chosen_checkout(option, environ, Path.cwd() if cwd is None else cwd)
    installed = KIT_ROOT.resolve()
    if target is None or target == installed:
        return argv, None
    if not is_checkout(target):
        print(f"error: {target} ({how}) is not a kit checkout: it has no assignments/ and course.toml.", file=sys.stderr)
        return argv, 2
    if not has_engine(target):
        if how == "the current folder's":  # a folder of assignments only: say which kit grades, and go on
            print(f"attention-kit: using the checkout {installed} ({target} has no autograder/ engine)", file=sys.stderr)
            return argv, None
        print(f"error: {target} ({how}) has no autograder/ engine to run; pass a whole kit checkout.", file=sys.stderr)
        return argv, 2
    if environ.get(_SWITCHED):
        print(
            f"error: the engine of {target} could not be imported (it ran {installed}'s); run "
            f"`python -m autograder` from {target} instead.",
            file=sys.stderr,
        )
        return argv, 2
    print(f"attention-kit: using the checkout {target} ({how}; installed from {installed})", file=sys.stderr, flush=True)
    child = dict(environ)
    child[_SWITCHED] = str(target)
    child[ENVIRONMENT] = str(target)  # the command run again chooses the same checkout, wherever its cwd
    child["PYTHONPATH"] = os.pathsep.join([str(target), *filter(None, [environ.get("PYTHONPATH")])])
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, "-m", "autograder", *argv], child)
    return argv, 2  # not reached
