"""The documentation cannot drift: the site builds in strict mode, and every command block a tutorial or how-to
page marks as runnable runs, as written, in a fresh copy of the kit.

A page marks a block with an HTML comment on the line before its fence:

    <!-- runnable -->          cheap (seconds): run by `make test`
    <!-- runnable: slow -->    a release's package, a simulation or a grade-all (up to about a minute): `make proofs`

Each block runs with bash (`set -euo pipefail`) in the copy's root, with the kit's `.venv` linked into it, so
`.venv/bin/attention-kit ...` is the command a reader types; `attention-kit` works on the checkout it runs in (the
copy). `/tmp/` in a block is the test's own temporary folder. The slow blocks share one copy in which the
assignments they name were released first (`release <a> --no-check`: the tutorial's `make release`, without the
self-check that CI's own `make release` runs).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import KIT

DOCS = KIT / "docs"
RUNNABLE = re.compile(r"<!-- runnable(?P<slow>: slow)? -->\s*\n```[^\n]*\n(?P<code>.*?)```", re.DOTALL)


def _blocks(slow: bool) -> list[tuple[str, str]]:
    found = []
    for page in sorted([*DOCS.glob("tutorials/*.md"), *DOCS.glob("how-to/*.md")]):
        for n, match in enumerate(RUNNABLE.finditer(page.read_text()), 1):
            if bool(match.group("slow")) == slow:
                found.append((f"{page.relative_to(DOCS)}#{n}", match.group("code")))
    return found


def _copy_kit(target: Path) -> Path:
    """The kit's files as git knows them (tracked, and new files not ignored), as a fresh clone has them, with the
    kit's venv linked in."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=KIT, capture_output=True, check=True
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        source = KIT / rel
        if source.is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / rel)
    (target / ".venv").symlink_to(Path(sys.prefix))  # the venv running the tests: the kit's .venv, or a shared one
    return target


def _run(block: str, kit: Path, scratch: Path, timeout: float) -> subprocess.CompletedProcess:
    script = "set -euo pipefail\n" + block.replace("/tmp/", f"{scratch}/")
    env = {k: v for k, v in os.environ.items() if k != "KIT_ROOT"}
    return subprocess.run(["bash", "-c", script], cwd=kit, capture_output=True, text=True, timeout=timeout, env=env)


def test_pages_mark_runnable_blocks():
    """The tutorials and how-to pages keep their runnable blocks (a marker lost in an edit would test nothing)."""
    cheap, slow = _blocks(False), _blocks(True)
    assert len(cheap) >= 4 and len(slow) >= 3, (cheap, slow)
    commands = "\n".join(code for _, code in cheap + slow)
    for needed in ("attention-kit points", "attention-kit new", "simulate gradescope", "simulate prairielearn", "grade-all"):
        assert needed in commands, f"no runnable block runs {needed!r}"


def test_the_site_builds_strictly(tmp_path):
    """`make docs`: the generated reference pages, then `mkdocs build --strict` (a broken link or anchor, a page
    left out of the nav, is an error)."""
    pytest.importorskip("mkdocs", reason="mkdocs is pinned in requirements-dev.txt: `make venv`")
    gen = subprocess.run([sys.executable, "tools/gen_docs.py"], cwd=KIT, capture_output=True, text=True, timeout=120)
    assert gen.returncode == 0, gen.stderr[-3000:]
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=KIT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr[-5000:]
    assert "WARNING" not in built.stderr, built.stderr[-5000:]
    for page in ("index.html", "tutorials/first-term/index.html", "reference/cli/index.html", "reference/config/index.html"):
        assert (tmp_path / "site" / page).is_file(), page


@pytest.mark.parametrize("where,block", _blocks(slow=False), ids=[w for w, _ in _blocks(slow=False)])
def test_runnable_block(where, block, tmp_path):
    kit = _copy_kit(tmp_path / "kit")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    proc = _run(block, kit, scratch, timeout=120)
    assert proc.returncode == 0, f"{where} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"


@pytest.fixture(scope="module")
def released_copy(tmp_path_factory):
    """One copy of the kit for the slow blocks, with the assignments they name released (`dist/<a>/`)."""
    kit = _copy_kit(tmp_path_factory.mktemp("kit"))
    names = sorted({m for _, code in _blocks(slow=True) for m in re.findall(r"simulate \w+ (\w+)", code)})
    for name in names:
        proc = _run(f".venv/bin/attention-kit release {name} --no-check\n", kit, kit, timeout=300)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return kit


@pytest.mark.proof  # a simulation or a grade-all each: `make proofs`
@pytest.mark.parametrize("where,block", _blocks(slow=True), ids=[w for w, _ in _blocks(slow=True)])
def test_slow_runnable_block(where, block, released_copy, tmp_path):
    proc = _run(block, released_copy, tmp_path, timeout=300)
    assert proc.returncode == 0, f"{where} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    if "simulate" in block:
        assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
