#!/usr/bin/env python3
"""The venv's install stamp, by content: ``make venv`` rebuilds only when what it installs from changed.

    venv_stamp.py check STAMP FILE...   exit 0 when STAMP holds the hash of FILE... (the venv is up to date),
                                        1 (and says why on stderr) when the venv must be built or rebuilt
    venv_stamp.py write STAMP FILE...   record that hash in STAMP (the last step of `make venv`)

The Makefile used the stamp's modification time, so a fresh clone (every file new) sharing a venv
(`make VENV=/shared/venv`, or a linked `.venv`) reinstalled it; the files' content is what matters. A stamp
of the old kind (empty, written by `touch`) is taken over when it is newer than every file, as the old rule
said the venv was up to date. Standard library only: it runs before the venv exists, with `$(PYTHON)`.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

VERSION = "attention-kit venv stamp 1"


def key(files: list[Path]) -> str:
    """One line naming the stamp's kind and the hash of every file's name and content, in order."""
    h = hashlib.sha256()
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return f"{VERSION} sha256:{h.hexdigest()}"


def stale(stamp: Path, files: list[Path]) -> str:
    """Why the venv beside ``stamp`` must be (re)built, or "" when it is up to date."""
    if not stamp.is_file():
        return f"no {stamp} (no venv installed here yet)"
    if not (stamp.parent / "bin" / "python").exists():
        return f"{stamp.parent} has no bin/python"
    recorded = stamp.read_text(encoding="utf-8", errors="replace").strip()
    wanted = key(files)
    if recorded == wanted:
        return ""
    if not recorded:  # the old stamp, written by `touch`: up to date if newer than every file, as it said
        made = stamp.stat().st_mtime
        newer = [f.name for f in files if f.stat().st_mtime > made]
        if newer:
            return f"{', '.join(newer)} changed since the venv was installed (an old, time-based stamp)"
        stamp.write_text(wanted + "\n", encoding="utf-8")
        return ""
    return f"{', '.join(f.name for f in files)} differ from what the venv was installed from"


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[0] not in ("check", "write"):
        print(__doc__, file=sys.stderr)
        return 2
    stamp, files = Path(argv[1]), [Path(f) for f in argv[2:]]
    if argv[0] == "write":
        stamp.write_text(key(files) + "\n", encoding="utf-8")
        return 0
    why = stale(stamp, files)
    if why:
        print(f"make venv: {why}", file=sys.stderr)
    return 1 if why else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
