"""The trust boundary on every grading path: one hostile upload per class of attack, each graded
through the Gradescope entry point (``run_autograder`` in a simulated tree) and through
``grade-all``, both as root like Gradescope and CI.

For every attack and path: the score is 0 or exactly what the honest part earns; results.json is
valid UTF-8 JSON under 1 MB; grading ends inside the budget; the grader's own processes stay
under 600 MB; no process the attack started is left; no grader file reaches the output.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
import zlib
from pathlib import Path

import psutil
import pytest
from conftest import KIT, reference_source, stub_source, validate_results

from autograder.release import gradescope_sim
from autograder.sandbox import namespaces_available, running_as_root

# The red team grades about 30 whole submissions through the Gradescope entry point and grade-all:
# run by `make proofs` (CI, after `make test`), which keeps `make test` within its four minutes.
pytestmark = [
    pytest.mark.skipif(not running_as_root(), reason="attacks are graded as root, as on Gradescope and CI"),
    pytest.mark.proof,
]

REFERENCE = reference_source("attention")
STUB = stub_source("attention")
HIDDEN_MARKER = "def test_"  # in every hidden test file
REFERENCE_MARKER = "# BEGIN SOLUTION"
CROSS_MARKER = "KITMARKER-7f3e-other-student"
BUDGET_S = 300  # well inside Gradescope's 10 minutes (the run limit is 420 s; these end far sooner)
GRADER_MB = 600

# The loopback server a network attack tries to reach (started once per test process).
_server = socket.socket()
_server.bind(("127.0.0.1", 0))
_server.listen(8)
PORT = _server.getsockname()[1]
threading.Thread(target=lambda: [c.close() for c, _ in iter(_server.accept, None)], daemon=True).start()


def _find_pipes() -> str:
    """Source that finds the worker's pipe descriptors (what an attacker would do)."""
    return """
import os, stat, fcntl
def _pipes(writable):
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode) and fd > 2:
                mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
                if (mode == os.O_WRONLY) == writable:
                    found.append(fd)
        except OSError:
            pass
    return found
def _frame(obj):
    import json, struct
    body = json.dumps(obj).encode()
    return struct.pack("<Q", len(body)) + body
"""


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buffer.getvalue()


# Each attack: (how to lay out the upload in a folder, the points its honest part may earn).
def _links(folder: Path, kit: Path) -> None:
    (folder / "attention.py").symlink_to(kit / "solutions" / "attention" / "attention.py")
    (folder / "notes.py").symlink_to("/proc/self/cwd/solutions/attention/attention.py")
    (folder / "hidden.py").symlink_to(next((kit / "assignments" / "attention" / "tests" / "hidden").glob("test_*.py")))
    (folder / "up").symlink_to("..")


def _secrets(folder: Path, kit: Path) -> None:
    (folder / "attention.py").write_text(
        STUB
        + f"""
import glob, os
_leaks = []
for pattern in ["{kit}/solutions/*/*.py", "{kit}/assignments/*/tests/hidden/*.py", "{kit}/dist/*/*.zip",
                "{kit}/.cache/**", "/autograder/source/solutions/*/*.py", "{kit}/../**/solutions/attention/attention.py"]:
    for path in glob.glob(pattern, recursive=True):
        try:
            text = open(path, errors="replace").read()
        except OSError:
            continue
        _leaks.append("LEAK " + path + text[:500])
        if path.endswith("attention.py") and "def softmax" in text:
            exec(text)
def causal_mask(n):
    print("\\n".join(_leaks))
    raise NotImplementedError
"""
    )


def _forged_banned(folder: Path, kit: Path) -> None:
    body = REFERENCE.replace(
        "def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:",
        "def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:\n    return torch.softmax(x, dim)\n\n\ndef _unused(x, dim=-1):",
    )
    forge = "\nimport sys\nfor _m in list(sys.modules.values()):\n    if getattr(_m, '__name__', '').endswith('guards'):\n        _m.used = lambda: []\n        _m.reset = lambda: None\n"
    (folder / "attention.py").write_text(body + forge)


def _pipe_stall(folder: Path, kit: Path) -> None:
    (folder / "attention.py").write_text(
        REFERENCE
        + _find_pipes()
        + """
import time
def causal_mask(n):
    for fd in _pipes(writable=False):
        try:
            fcntl.fcntl(fd, 1031, 4096)  # F_SETPIPE_SZ: the smallest pipe, then never read again
        except OSError:
            pass
    time.sleep(3600)
"""
    )


def _answer_flood(folder: Path, kit: Path) -> None:
    (folder / "attention.py").write_text(
        STUB
        + _find_pipes()
        + """
import threading
def _flood():
    junk = _frame({"id": -1, "ok": "x" * (8 * 1024 * 1024)})
    for fd in _pipes(writable=True):
        for _ in range(6):
            try:
                os.write(fd, junk)
            except OSError:
                break
threading.Thread(target=_flood, daemon=True).start()
"""
    )


def _huge_names(folder: Path, kit: Path) -> None:
    (folder / "attention.py").write_text(
        STUB + "\nclass Boom(Exception):\n    pass\nBoom.__name__ = 'B' * 1_000_000\nraise Boom('m' * 1_000_000)\n"
    )


def _bad_text(folder: Path, kit: Path) -> None:
    (folder / "attention.py").write_text(
        STUB
        + "\nimport sys\nsys.stdout.buffer.write(b'\\xff\\xfe \\x00\\x1b[31m\\x07 bad\\n')\n"
        + "def causal_mask(n):\n    print('\\ud800\\x00\\x1b')\n    raise ValueError('\\udcff\\x00\\x1b[2J' * 1000)\n",
    )
    (folder / os.fsdecode(b"\xff\xfe-notes\x1b.py")).write_bytes(b"x = 1\n")


def _malformed(folder: Path, kit: Path) -> None:
    (folder / "attention.py").write_text(
        REFERENCE + _find_pipes() + "\nfor _fd in _pipes(writable=True):\n    os.write(_fd, _frame({'id': 1, 'ok': 7}))\n"
    )


def _disk_fill(folder: Path, kit: Path) -> None:
    (folder / "attention.py").write_text(
        STUB
        + """
import os
def causal_mask(n):
    block = b"\\0" * (1 << 20)
    for base in ("/tmp", "/var/tmp", "/dev/shm", os.path.expanduser("~"), "."):
        for i in range(400):
            try:
                with open(os.path.join(base, f"@TAG@-fill-{i}"), "wb") as f:
                    f.write(block * 8)
            except OSError:
                break
    raise NotImplementedError
"""
    )


def _fork_hop(folder: Path, kit: Path) -> None:
    hop = """
import os, time, ctypes
def _hop():
    ctypes.CDLL(None).prctl(15, b"@TAG@", 0, 0, 0)  # PR_SET_NAME, so the test can look for it
    while True:
        if os.fork():
            os._exit(0)  # the parent leaves: the live process keeps changing its pid
        time.sleep(0.002)
if os.fork() == 0:
    os.setsid()
    _hop()
"""
    (folder / "attention.py").write_text(STUB + hop)


def _nested(folder: Path, kit: Path) -> None:
    data = _zip({"attention.py": STUB.encode()})
    for level in range(20):
        data = _zip({f"level{level}.zip": data, "bomb.txt": b"\0" * (8 * 1024 * 1024)})
    (folder / "upload.zip").write_bytes(data)


def _cpu_hogs(folder: Path, kit: Path) -> None:
    hogs = """
import os, ctypes
for _ in range(16):
    if os.fork() == 0:
        os.setsid()
        ctypes.CDLL(None).prctl(15, b"@TAG@", 0, 0, 0)
        while True:
            pass
"""
    (folder / "attention.py").write_text(REFERENCE + hogs)


def _network(folder: Path, kit: Path) -> None:
    (folder / "attention.py").write_text(
        STUB
        + f"""
import socket
def causal_mask(n):
    try:
        socket.create_connection(("127.0.0.1", {PORT}), timeout=2).close()
        print("NETWORK-REACHED")
    except OSError as exc:
        print("network blocked:", exc)
    raise NotImplementedError
"""
    )


def _cross_holder(folder: Path, kit: Path) -> None:
    (folder / "attention.py").write_text(STUB + f"\nSECRET = {CROSS_MARKER!r}\nimport time\ntime.sleep(4)\n")


def _cross_reader(folder: Path, kit: Path) -> None:
    (folder / "attention.py").write_text(
        STUB
        + f"""
import glob, time
_seen = []
for _ in range(40):
    for path in glob.glob("/tmp/**/attention.py", recursive=True) + glob.glob("/tmp/kit-*/**", recursive=True):
        try:
            _seen.append(open(path, errors="replace").read())
        except OSError:
            pass
    time.sleep(0.1)
_marker = {CROSS_MARKER[:10]!r} + {CROSS_MARKER[10:]!r}  # split, so this file does not match itself
def causal_mask(n):
    print("{CROSS_MARKER[:8]}-found" if any(_marker in s for s in _seen) else "nothing found")
    raise NotImplementedError
"""
    )


def _shm_hold(folder: Path, kit: Path) -> None:
    """Memory no RSS shows: memfds written but not mapped, detached System V segments, files in
    /dev/shm and /run/lock; all kept while the function sleeps."""
    (folder / "attention.py").write_text(
        REFERENCE
        + """
import ctypes, os, time, zlib
_held = []
def causal_mask(n):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    block = b"y" * (1 << 20)
    done = []
    try:
        for _ in range(40):
            fd = os.memfd_create("@TAG@")
            _held.append(fd)
            for _ in range(30):
                os.write(fd, block)
        done.append("memfd")
    except OSError as exc:
        done.append(f"memfd: {exc}")
    key = zlib.crc32(b"@TAG@") & 0x7FFF0000
    for i in range(8):
        sid = libc.shmget(key + i, 100 << 20, 0o1600)
        if sid < 0:
            done.append("shmget refused")
            break
        address = libc.shmat(sid, None, 0)
        ctypes.memset(ctypes.c_void_p(address), 1, 100 << 20)
        libc.shmdt(ctypes.c_void_p(address))
    for base in ("/dev/shm", "/run/lock"):
        try:
            with open(os.path.join(base, "@TAG@-hold"), "wb") as f:
                for _ in range(300):
                    f.write(block)
        except OSError as exc:
            done.append(f"{base}: {exc}")
    time.sleep(5)
    raise ValueError("held " + "; ".join(done))
"""
    )


def _answer_bomb(folder: Path, kit: Path) -> None:
    """A 40 MB answer to the load request of 13 million empty lists (the grader grew to 2.55 GB)."""
    (folder / "attention.py").write_text(
        STUB
        + _find_pipes()
        + """
_body = b'{"id": 1, "ok": [' + b"[]," * (13 * 1024 * 1024) + b'[]]}'
import struct
for _fd in _pipes(writable=True):
    _data = memoryview(struct.pack("<Q", len(_body)) + _body)
    while _data:
        try:
            _data = _data[os.write(_fd, _data):]
        except OSError:
            break
"""
    )


def _malformed_load(folder: Path, kit: Path) -> None:
    """A well-formed frame for the load request whose tensor is not one (was: an internal error)."""
    (folder / "attention.py").write_text(
        REFERENCE
        + _find_pipes()
        + "\nfor _fd in _pipes(writable=True):\n"
        + "    os.write(_fd, _frame({'id': 1, 'ok': {'__tensor__': 'float32', 'shape': ['x'], 'data': '!'}}))\n"
    )


def _zip_directory(folder: Path, kit: Path) -> None:
    """A 140 KB upload: a zip holding a zip whose central directory lists a million files (47 MB)."""
    import struct

    entry = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0) + b"a"
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, 1, 0) + b"a"
    directory = entry * 1_000_000
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, len(directory), len(local), 0)
    inner = local + directory + end
    (folder / "upload.zip").write_bytes(_zip({"inner.zip": inner, "attention.py": STUB.encode()}))


def _clock_dodge(folder: Path, kit: Path) -> None:
    """Against the student-time clock (sandbox/clock.py): look runnable while charged little. causal_mask
    sleeps and spins in turn (sampled runnable, its CPU is half the wall) while busy children in sessions of
    their own load the machine (a load the clock must charge to the student, not excuse)."""
    dodge = """
import os, sys, time
def causal_mask(n):
    for _ in range(3):  # small busy interpreters (a forked copy of torch would be stopped for its memory)
        os.posix_spawn(sys.executable, [sys.executable, "-c",
                       "import ctypes; ctypes.CDLL(None).prctl(15, b'@TAG@', 0, 0, 0); any(iter(int, 1))"],
                       dict(os.environ), setsid=True)
    while True:
        end = time.monotonic() + 0.04
        while time.monotonic() < end:
            pass
        time.sleep(0.04)
"""
    (folder / "attention.py").write_text(REFERENCE + dodge)


ATTACKS = {
    "clock_dodge": (_clock_dodge, None),  # the honest part: everything but causal_mask
    "links": (_links, 0),
    "secrets": (_secrets, 0),
    "forged_banned": (_forged_banned, None),  # the honest part: everything but softmax and what uses it
    "pipe_stall": (_pipe_stall, None),  # the honest part: everything but causal_mask
    "answer_flood": (_answer_flood, 0),
    "huge_names": (_huge_names, 0),
    "bad_text": (_bad_text, 0),
    "malformed": (_malformed, 0),
    "disk_fill": (_disk_fill, 0),
    "fork_hop": (_fork_hop, 0),
    "nested": (_nested, 0),
    "cpu_hogs": (_cpu_hogs, None),
    "network": (_network, 0),
    "cross_holder": (_cross_holder, 0),
    "cross_reader": (_cross_reader, 0),
    "shm_hold": (_shm_hold, None),  # the honest part: everything but causal_mask
    "answer_bomb": (_answer_bomb, 0),
    "malformed_load": (_malformed_load, 0),
    "zip_directory": (_zip_directory, 0),
}


def run_watched(cmd: list[str], **kwargs) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run ``cmd``; return (result, seconds, peak MB of the grader's own processes).

    The grader's processes are the root-owned ones in the command's tree (graders and their
    worker templates); each grader process with its template is counted on its own, as each
    would be alone in its container. Memory is PSS (pages shared by the grader and its template,
    such as torch's libraries, counted once, as the container's memory limit counts them)."""
    started = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)
    peak = 0.0
    out: list[str] = []
    readers = [threading.Thread(target=lambda s=s: out.append(s.read()), daemon=True) for s in (proc.stdout, proc.stderr)]
    for r in readers:
        r.start()
    while proc.poll() is None:
        try:
            top = psutil.Process(proc.pid)
            graders = [p for p in top.children(recursive=True) if "grade" in " ".join(p.cmdline()[:6])] or [top]
            for grader in graders:
                tree = [grader, *grader.children(recursive=True)]
                pss = sum(p.memory_full_info().pss for p in tree if p.uids().real == 0)
                peak = max(peak, pss / 2**20)
        except psutil.Error:
            pass
        if time.monotonic() - started > 900:
            proc.kill()
        time.sleep(0.2)
    for r in readers:
        r.join()
    result = subprocess.CompletedProcess(cmd, proc.returncode, "".join(out), "")
    return result, time.monotonic() - started, peak


def new_tag(name: str) -> str:
    """A process name (under 15 characters) and file prefix for one grading of the attacks, so that
    attacks graded at the same time by another test (xdist) are never taken for leftovers."""
    return f"ka{os.getpid() % 10000}{name[:4]}{len(_TAGS)}"[:14]  # psutil reads 15-character names from the command line


_TAGS: list[str] = []


def build_tagged(build, folder: Path, kit: Path, tag: str) -> None:
    """Lay out an attack, its process and file names set to ``tag``."""
    build(folder, kit)
    _TAGS.append(tag)
    for path in folder.rglob("*.py"):
        text = path.read_text(errors="surrogateescape")
        if "@TAG@" in text:
            path.write_text(text.replace("@TAG@", tag), errors="surrogateescape")


def leftovers(tag: str) -> list[str]:
    """Processes an attack started that are still alive, and files it left in the shared folders."""
    found = []
    for p in psutil.process_iter(["name", "status"]):
        if p.info["name"] == tag and p.info["status"] != psutil.STATUS_ZOMBIE:
            found.append(str(p.pid))
    for folder in ("/tmp", "/var/tmp", "/dev/shm", "/run/lock"):
        found += [str(f) for f in Path(folder).glob(f"{tag}-*")]
    key = zlib.crc32(tag.encode()) & 0x7FFF0000  # the System V segments of _shm_hold
    for line in Path("/proc/sysvipc/shm").read_text().splitlines()[1:]:
        if key <= int(line.split()[0]) < key + 8:
            found.append(f"SysV segment {line.split()[1]}")
    return found


def check_document(name: str, raw: bytes, honest: float | None) -> dict:
    assert len(raw) < 1_000_000, f"{name}: results.json is {len(raw)} bytes"
    document = json.loads(raw.decode("utf-8"))  # strict: must be valid UTF-8
    validate_results(document)
    text = document["output"] + "".join(t["output"] + t["name"] for t in document["tests"])
    assert REFERENCE_MARKER not in text and "LEAK" not in text, f"{name}: grader files reached the output"
    assert "NETWORK-REACHED" not in text or not namespaces_available(), f"{name}: the worker reached the network"
    assert f"{CROSS_MARKER[:8]}-found" not in text, f"{name}: read another student's file"
    if honest is not None:
        assert document["score"] == honest, f"{name}: scored {document['score']}, expected {honest}"
    return document


def lost(document: dict) -> set[str]:
    return {t["name"].split(":")[0] for t in document["tests"] if t["score"] < t["max_score"]}


def check_partial(name: str, document: dict) -> None:
    """The attacks whose honest part earns points: exactly the attacked function loses."""
    if name == "forged_banned":  # exactly what the same code earns when it does not forge the report
        assert "softmax" in lost(document), "a banned call must cost points even if the worker denies it"
        assert any("torch.softmax" in t["output"] for t in document["tests"])
        assert document["score"] == honest_forged_score()
    if name == "pipe_stall":
        assert lost(document) <= {"causal_mask", "padding_mask"} and "causal_mask" in lost(document)
        assert any("time limit" in t["output"] for t in document["tests"])
    if name == "cpu_hogs":
        assert document["score"] <= 100
    if name == "clock_dodge":  # stopped by the time limit like any hang, within the grading budget
        assert lost(document) <= {"causal_mask", "padding_mask"} and "causal_mask" in lost(document)
        assert any("time limit" in t["output"] for t in document["tests"] if t["name"].startswith("causal_mask"))
    if name == "shm_hold":  # stopped by the watchdog, or refused by the private tmpfs and IPC limits
        why = [t["output"][:300] for t in document["tests"] if t["score"] < t["max_score"]][:4]
        assert lost(document) <= {"causal_mask", "padding_mask"} and "causal_mask" in lost(document), why
        outputs = " ".join(t["output"] for t in document["tests"] if t["name"].startswith("causal_mask"))
        assert "MB of memory" in outputs or ("shmget refused" in outputs and "No space left" in outputs), outputs[:1000]
    if name in ("answer_bomb", "malformed_load"):
        assert "internal error" not in document["output"] and "interfered with the grader's channel" in document["output"]
    if name == "zip_directory":
        assert "lists more than 2000 files" in document["output"], document["output"]


_honest: list[float] = []


def honest_forged_score() -> float:
    """The score of the forged_banned submission without its forging lines (graded once)."""
    if not _honest:
        folder = Path(tempfile.mkdtemp(prefix="kit-attack-"))
        try:
            _forged_banned(folder, KIT)
            source = (folder / "attention.py").read_text()
            (folder / "attention.py").write_text(source[: source.index("\nimport sys\nfor _m in")])
            results = folder / "results.json"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "autograder",
                    "grade",
                    "attention",
                    str(folder / "attention.py"),
                    "--results",
                    str(results),
                ],
                cwd=KIT,
                capture_output=True,
                check=True,
            )
            _honest.append(json.loads(results.read_text())["score"])
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return _honest[0]


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_through_gradescope(name, installed_tree):
    build, honest = ATTACKS[name]
    parent = Path(tempfile.mkdtemp(prefix="kit-attack-"))
    try:
        parent.chmod(0o755)
        root = parent / "autograder"
        shutil.copytree(installed_tree, root, symlinks=True)
        tag = new_tag(name)
        build_tagged(build, root / "submission", root / "source", tag)
        env = gradescope_sim.environment(root)
        result, seconds, peak = run_watched([str(root / "run_autograder")], cwd=root, env=env)
        assert seconds < BUDGET_S, f"{name}: grading took {seconds:.0f} s"
        assert peak < GRADER_MB, f"{name}: the grader used {peak:.0f} MB"
        document = check_document(name, (root / "results" / "results.json").read_bytes(), honest)
        check_partial(name, document)
        if name == "links":
            assert "a link" in document["output"], "the student is told which entries were ignored"
        assert not leftovers(tag), f"{name}: left behind {leftovers(tag)}"
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def test_attacks_through_grade_all(tmp_path):
    """All attacks in one class, graded with `grade-all` (parallel graders, one user each)."""
    export = tmp_path / "export"
    tag = new_tag("all")
    for name, (build, _) in ATTACKS.items():
        (export / name).mkdir(parents=True)
        build_tagged(build, export / name, KIT, tag)
    out = tmp_path / "graded"
    result, seconds, peak = run_watched(
        [sys.executable, "-m", "autograder", "grade-all", "attention", str(export), "--out", str(out)], cwd=KIT
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert peak < GRADER_MB, f"a grader used {peak:.0f} MB"
    assert seconds < BUDGET_S * 2, f"grade-all took {seconds:.0f} s"
    for name, (_, honest) in ATTACKS.items():
        document = check_document(name, (out / "results" / f"{name}.json").read_bytes(), honest)
        check_partial(name, document)
    assert not leftovers(tag), f"left behind {leftovers(tag)}"
    shutil.rmtree(export, ignore_errors=True)


WITHOUT_NAMESPACES = (
    "clock_dodge",
    "shm_hold",
    "disk_fill",
    "answer_bomb",
    "malformed_load",
    "fork_hop",
    "cross_holder",
    "cross_reader",
)


def test_attacks_through_grade_all_without_namespaces(tmp_path):
    """The attacks on what is held and left behind, where namespaces are refused (KIT_NO_NAMESPACES=1,
    as on Gradescope most likely): no private /tmp, /proc or IPC; the watchdog counts memfds, SysV
    segments and /dev/shm, and everything of the student's user is removed afterwards."""
    export = tmp_path / "export"
    tag = new_tag("nons")
    for name in WITHOUT_NAMESPACES:
        (export / name).mkdir(parents=True)
        build_tagged(ATTACKS[name][0], export / name, KIT, tag)
    out = tmp_path / "graded"
    result, seconds, peak = run_watched(
        [sys.executable, "-m", "autograder", "grade-all", "attention", str(export), "--out", str(out)],
        cwd=KIT,
        env={**os.environ, "KIT_NO_NAMESPACES": "1"},
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert peak < GRADER_MB, f"a grader used {peak:.0f} MB"
    for name in WITHOUT_NAMESPACES:
        document = check_document(name, (out / "results" / f"{name}.json").read_bytes(), ATTACKS[name][1])
        check_partial(name, document)
    disk = json.loads((out / "results" / "disk_fill.json").read_text())
    assert any("MB to disk" in t["output"] for t in disk["tests"]), "the disk watchdog stops the filler"
    assert not leftovers(tag), f"left behind {leftovers(tag)}"


@pytest.fixture
def no_namespaces(monkeypatch):
    """This process grades as where namespaces are refused (``KIT_NO_NAMESPACES=1``), as
    Gradescope's containers most likely do; child processes inherit the setting."""
    from autograder.sandbox import isolation

    monkeypatch.setenv("KIT_NO_NAMESPACES", "1")
    isolation.isolation_features.cache_clear()
    yield
    monkeypatch.delenv("KIT_NO_NAMESPACES")
    isolation.isolation_features.cache_clear()


def test_where_namespaces_are_refused_disk_is_watched_and_cleaned(tmp_path, no_namespaces):
    """The fallback of a platform without namespaces (no private /tmp): the disk watchdog stops the
    disk-filling attack and the student user's files in the shared folders are removed afterwards."""
    from autograder.grading.seam import Deadlines, RemoteStudent, StudentCodeError
    from autograder.sandbox.zygote import Zygote

    tag = new_tag("fallback")
    build_tagged(_disk_fill, tmp_path, KIT, tag)
    zygote = Zygote([])
    try:
        assert not zygote.namespaces
        student = RemoteStudent("attention", tmp_path / "attention.py", None, [], zygote=zygote, deadlines=Deadlines(request=120))
        assert student.load() is None
        with pytest.raises(StudentCodeError) as failure:
            student.causal_mask(3)
        student.close()
    finally:
        zygote.close()
    assert "MB to disk" in str(failure.value), str(failure.value)
    assert not leftovers(tag), f"left behind {leftovers(tag)}"


# ---- one student, one world: an attacker beside an honest classmate in grade-all ----------------

# New for each run: no file on the machine (this one, a copy of the kit) holds them beforehand.
_RUN = uuid.uuid4().hex[:10]
CLASSMATE_NAME = f"Honest Classmate {_RUN.upper()}"
CLASSMATE_EMAIL = f"honest.classmate.{_RUN}@example.edu"
CLASSMATE_CODE = f"KITMARKER-honest-code-{_RUN}"  # a comment in the classmate's file
CLASS_METADATA = f"""\
submission_2001:
  :submitters:
  - :name: {CLASSMATE_NAME}
    :sid: '1002'
    :email: {CLASSMATE_EMAIL}
  :created_at: 2026-11-01 10:00:00.000000000 -08:00
submission_2002:
  :submitters:
  - :name: Curious Attacker
    :sid: '1003'
    :email: curious.attacker@example.edu
  :created_at: 2026-11-01 10:05:00.000000000 -08:00
"""


def _world_reader_source() -> str:
    """Looks everywhere a worker could for the classmate: other processes' command lines (the
    grade-all line names the export and --out), every path they name, the shared folders, and the
    objects in its own memory (what the worker template may have carried over). Keeps scanning for
    a while, so the classmate is being graded meanwhile. The markers are written reversed: this
    file must not find itself."""
    reversed_needles = [n[::-1] for n in (CLASSMATE_CODE, CLASSMATE_NAME, CLASSMATE_EMAIL)]
    return (
        STUB
        + f"""
import gc, glob, os, time
_NEEDLES = [n[::-1] for n in {reversed_needles!r}]  # reversed in the file (no constant holds them)
_found, _stats = [], {{"cmdlines": 0, "grade_all": False, "files": 0, "objects": 0}}

def _look(text, where):
    for needle in _NEEDLES:
        at = text.find(needle)
        if at >= 0:
            _found.append(where[:120] + ": " + text[max(0, at - 40): at + 80])

def _read(path):
    try:
        with open(path, "rb") as f:
            data = f.read(200_000)
    except OSError:
        return
    _stats["files"] += 1
    _look(data.decode("utf-8", "replace"), path)

def _walk(top, budget=3000):
    if os.path.isfile(top):
        _read(top)
        return
    for folder, dirs, files in os.walk(top):
        for name in files:
            budget -= 1
            if budget < 0:
                return
            _read(os.path.join(folder, name))

def _scan():
    paths = set()
    for cmdline in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            args = open(cmdline, "rb").read().split(b"\\0")
        except OSError:
            continue
        _stats["cmdlines"] += 1
        words = [a.decode("utf-8", "replace") for a in args]
        if "grade-all" in words:
            _stats["grade_all"] = True
        paths.update(w for w in words if w.startswith("/") and not w.startswith(("/usr", "/proc")))
        _look(" ".join(words), cmdline)
    for path in sorted(paths) + ["/tmp", "/var/tmp", "/dev/shm", "/run/lock"]:
        _walk(path)
    for obj in gc.get_objects():
        _stats["objects"] += 1
        if obj is _NEEDLES or obj is _found:
            continue
        if isinstance(obj, dict):
            items = list(obj.keys()) + list(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            items = list(obj)
        else:
            continue
        for item in items:
            if isinstance(item, (str, bytes)) and len(item) > 8:
                _look(item if isinstance(item, str) else item.decode("utf-8", "replace"), "memory")

_until = time.monotonic() + 12
while time.monotonic() < _until:
    _scan()
    time.sleep(0.5)

def causal_mask(n):
    raise ValueError(f"WORLD {{_stats}} HITS {{len(_found)}}: " + " | ".join(_found[:5]))
"""
    )


@pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "no-namespaces"])
def test_a_student_reads_nothing_of_a_classmate_in_grade_all(namespaces):
    """The attack of issue 23: a worker finds grade-all's command line, walks the export and --out,
    reads the shared folders and its own memory, looking for a classmate graded at the same time.
    The export sits where other users could read it (a 0755 folder, as an unzipped download in a
    home folder often is); grade-all makes it, --out and each staging private before any worker starts."""
    if namespaces and not namespaces_available():
        pytest.skip("namespaces are not allowed here")
    parent = Path(tempfile.mkdtemp(prefix="kit-class-"))
    try:
        parent.chmod(0o755)
        export, out = parent / "export", parent / "graded"
        export.mkdir(mode=0o755)
        export.chmod(0o755)
        (export / "submission_metadata.yml").write_text(CLASS_METADATA)
        for sid, source in (
            ("submission_2001", REFERENCE + f"\n# {CLASSMATE_CODE}\n"),
            ("submission_2002", _world_reader_source()),
        ):
            (export / sid).mkdir()
            (export / sid / "attention.py").write_text(source)
        for path in [export, *export.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        env = {k: v for k, v in os.environ.items() if k != "KIT_NO_NAMESPACES"}
        if not namespaces:
            env["KIT_NO_NAMESPACES"] = "1"
        result, seconds, peak = run_watched(
            [sys.executable, "-m", "autograder", "grade-all", "attention", str(export), "--out", str(out), "--jobs", "2"],
            cwd=KIT,
            env=env,
        )
        assert result.returncode == 0, result.stdout[-3000:]
        assert peak < GRADER_MB, f"a grader used {peak:.0f} MB"
        honest = json.loads((out / "results" / "submission_2001.json").read_text())
        assert honest["score"] == 100
        raw = (out / "results" / "submission_2002.json").read_bytes()
        document = check_document("world_reader", raw, 0)
        text = raw.decode("utf-8")
        report = next(t["output"] for t in document["tests"] if "WORLD" in t["output"])
        assert re.search(r"HITS 0\b", report), report[:2000]
        for needle in (CLASSMATE_CODE, CLASSMATE_NAME, CLASSMATE_EMAIL):
            assert needle not in text, f"the attacker's results hold {needle!r}"
        assert "'objects': 0" not in report and "'cmdlines': 0" not in report, report[:500]
        # what it could see: with namespaces, not even grade-all's command line; without, the line
        # but nothing behind it
        assert ("'grade_all': True" in report) == (not namespaces), report[:500]
        assert not export.stat().st_mode & 0o007, "the export stays closed to other users"
        assert (out.stat().st_mode & 0o777) == 0o700 and (out / "results").stat().st_mode & 0o777 == 0o700
        assert all(p.stat().st_mode & 0o077 == 0 for p in (out / "results").glob("*.json"))
    finally:
        shutil.rmtree(parent, ignore_errors=True)
