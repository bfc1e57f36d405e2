"""The grading environment: a venv holding exactly what the platform installs (``requirements.txt``) and nothing else.

One job: make, keep and name that environment. Every path that runs student code on a course staff's machine
(``grade``, ``grade-all``, the release's self-check, the simulations, snapshot, determinism, mutants, the kit's
tests) starts its workers with this environment's interpreter, so a file that imports a package the kit's own
venv happens to hold (matplotlib, pandas...) grades as it will on Gradescope, where ``setup.sh`` installs
``requirements.txt`` alone.

It costs no download: the pinned distributions and everything they require are already installed in the kit's
venv (``make venv`` installs ``requirements.txt`` first), so their files are hard-linked (copied across
filesystems) into a fresh venv, byte-code caches included. The environment is kept by the hash of the pins, the
interpreter and the linked versions, in ``.grading-env/`` of the checkout, and rebuilt aside and swapped in when
that hash changes.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata as metadata
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from ..config import KIT_ROOT, ConfigError

# The variable the sandbox reads for its workers' interpreter (sandbox/zygote.py); unset on a platform.
GRADING_PYTHON = "KIT_GRADING_PYTHON"
STAMP = "kit-grading-env.json"


def pinned_requirements(requirements: Path) -> list[Requirement]:
    """The requirements of ``requirements.txt`` that apply to this interpreter (markers evaluated)."""
    found = []
    for number, line in enumerate(requirements.read_text(encoding="utf-8").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            requirement = Requirement(text)
        except InvalidRequirement as exc:
            raise ConfigError(f"{requirements}:{number}: {text!r} is not a requirement ({exc}); fix the line.") from None
        if requirement.marker is None or requirement.marker.evaluate():
            found.append(requirement)
    return found


def closure(requirements: list[Requirement]) -> dict[str, metadata.Distribution]:
    """Every installed distribution the requirements need, by canonical name; each pin checked against what is
    installed (a mismatch means the kit's venv is stale: the grading environment would not be the platform's)."""
    environment = default_environment()
    wanted: dict[str, metadata.Distribution] = {}
    queue = [(r, "requirements.txt") for r in requirements]
    while queue:
        requirement, needed_by = queue.pop()
        name = canonicalize_name(requirement.name)
        if name in wanted:
            continue
        try:
            dist = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            raise ConfigError(
                f"{requirement.name} (needed by {needed_by}) is not installed in {sys.prefix}: run `make venv`."
            ) from None
        if requirement.specifier and not requirement.specifier.contains(dist.version, prereleases=True):
            raise ConfigError(
                f"{requirement.name} {dist.version} is installed in {sys.prefix}, but {needed_by} asks for "
                f"{requirement.specifier}: run `make venv` to install the pins."
            )
        wanted[name] = dist
        for text in dist.requires or []:
            sub = Requirement(text)
            if sub.marker is None or sub.marker.evaluate({**environment, "extra": ""}):
                queue.append((sub, f"{dist.metadata['Name']} {dist.version}"))
    return wanted


def environment_key(requirements: Path, dists: dict[str, metadata.Distribution]) -> str:
    h = hashlib.sha256(requirements.read_bytes())
    h.update(f"{sys.version} {sys.base_prefix}".encode())
    for name in sorted(dists):
        h.update(f"{name}=={dists[name].version}\n".encode())
    return h.hexdigest()[:16]


def ensure_grading_env(kit_root: Path = KIT_ROOT) -> Path:
    """The grading environment's interpreter, made (or remade) when its pins changed. Safe to call from
    several processes at once: one builds, the others wait and reuse."""
    requirements = kit_root / "requirements.txt"
    dists = closure(pinned_requirements(requirements))
    key = environment_key(requirements, dists)
    home = kit_root / ".grading-env"
    python = home / "bin" / "python"
    if _stamp(home).get("key") == key:
        return python
    lock_path = kit_root / ".grading-env.lock"
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _stamp(home).get("key") != key:  # another process may have built it while we waited
            _build(home, dists, key)
    return python


def _stamp(home: Path) -> dict:
    try:
        return json.loads((home / STAMP).read_text())
    except (OSError, ValueError):
        return {}


def _build(home: Path, dists: dict[str, metadata.Distribution], key: str) -> None:
    """Build aside, then swap in: a grading that started with the old environment keeps its files."""
    aside = home.with_name(f"{home.name}.building")
    shutil.rmtree(aside, ignore_errors=True)
    # the base interpreter, not this venv's: the new venv must not see the kit's site-packages
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(aside)], check=True)  # type: ignore[attr-defined]
    target = Path(
        subprocess.run(
            [str(aside / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    source = Path(sysconfig.get_paths()["purelib"])
    linked = 0
    for dist in dists.values():
        linked += _link_distribution(dist, source, target)
    (aside / STAMP).write_text(
        json.dumps(
            {
                "key": key,
                "python": sys.version.split()[0],
                "distributions": {d.metadata["Name"]: d.version for d in dists.values()},
                "files": linked,
            },
            indent=1,
        )
    )
    old = home.with_name(f"{home.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if home.exists():
        home.rename(old)
    aside.rename(home)
    shutil.rmtree(old, ignore_errors=True)


def _link_distribution(dist: metadata.Distribution, source: Path, target: Path) -> int:
    """Link the files a distribution installed under site-packages (its RECORD), and their byte-code caches
    (compiled after install, so not in RECORD: without them every worker would compile torch again)."""
    count = 0
    tag = sys.implementation.cache_tag
    for entry in dist.files or []:
        relative = Path(os.path.normpath(str(entry)))
        if relative.is_absolute() or relative.parts[:1] == ("..",):
            continue  # console scripts and data outside site-packages: grading runs `python -m`
        paths = [relative]
        if relative.suffix == ".py":
            paths += [relative.parent / "__pycache__" / f"{relative.stem}.{tag}{suffix}" for suffix in (".pyc", ".opt-1.pyc")]
        for path in paths:
            origin = source / path
            if not origin.is_file():
                continue
            destination = target / path
            destination.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(origin, destination)
            except FileExistsError:
                continue
            except OSError:  # another filesystem
                shutil.copy2(origin, destination)
            count += 1
    return count


def grading_python_for_children(kit_root: Path = KIT_ROOT) -> str:
    """Make sure the environment exists and that this process and its children grade with it."""
    python = os.environ.get(GRADING_PYTHON)
    if not python:
        python = str(ensure_grading_env(kit_root))
        os.environ[GRADING_PYTHON] = python
    return python


def distributions(python: str) -> dict[str, str]:
    """What an interpreter's environment holds, {canonical name: version} (the proof that two environments agree)."""
    code = "import importlib.metadata as m, json; print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"
    out = subprocess.run([python, "-I", "-c", code], check=True, capture_output=True, text=True).stdout
    return {canonicalize_name(k): v for k, v in json.loads(out).items()}


__all__ = ["GRADING_PYTHON", "distributions", "ensure_grading_env", "grading_python_for_children"]
