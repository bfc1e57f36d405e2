"""The attacks of "the grader's evidence, round two" on what the sandbox counts and cleans: processes
it could not see, a disk count shared by everyone, a clean-up that ran out of budget in one folder, and
kernel memory held in extended attributes. Each graded as root like Gradescope and CI, with namespaces
and where they are refused (``KIT_NO_NAMESPACES=1``), through the Gradescope entry point or grade-all.

A *ghost* is a process whose main thread ends with the bare ``exit`` system call while another thread
runs on: /proc shows its leader as a zombie with no memory. The scan of the student's processes used
to skip zombies, so a ghost was never counted against the process cap or the memory limit, never
charged to the clock and never killed: it held 2 GB beside a 420 MB limit, outlived the grading, and
in grade-all killed the worker of every later classmate graded under the same worker user.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from test_attacks import BUDGET_S, GRADER_MB, KIT, REFERENCE, STUB, build_tagged, check_document, lost, new_tag, run_watched
from test_attacks import leftovers as files_and_segments

from autograder.release import gradescope_sim
from autograder.sandbox import namespaces_available, running_as_root

pytestmark = [
    pytest.mark.skipif(not running_as_root(), reason="attacks are graded as root, as on Gradescope and CI"),
    pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"), reason="the ghost's exit call is for x86-64 or arm64"),
    pytest.mark.proof,
]

SYS_EXIT = {"x86_64": 60, "aarch64": 93}.get(os.uname().machine, 60)
NAMESPACES = pytest.mark.parametrize("namespaces", [True, False], ids=["namespaces", "no-namespaces"])


def ghost_source(work: str) -> str:
    """A small interpreter's program: a thread named @TAG@ runs ``work`` (indented source) while the
    main thread ends with the bare exit call (ctypes lets the GIL go: the thread runs on). ``_ended()``
    tells the thread that its leader has gone."""
    return f"""
import ctypes, os, sys, threading, time
_ready = threading.Event()
def _ended():
    return open(f"/proc/{{os.getpid()}}/stat").read().rpartition(")")[2].split()[0] == "Z"
def _work():
    ctypes.CDLL(None).prctl(15, b"@TAG@", 0, 0, 0)
    _ready.set()
{work}
threading.Thread(target=_work).start()
_ready.wait()
ctypes.CDLL(None).syscall({SYS_EXIT}, 0)
"""


def spawn_ghosts_source(count: int, work: str, pause: float = 0.0, arg: str = "''") -> str:
    """Student code that starts ``count`` ghosts, orphaned at once (``sh -c '... &'``: re-parented to the
    grader, out of the worker's tree), in a session of their own; ``arg`` is their ``sys.argv[1]``."""
    return f"""
import os as _os, sys as _sys, time as _time
for _ in range({count}):
    _sh = _os.posix_spawn("/bin/sh", ["sh", "-c", '"$0" -I -S -c "$1" "$2" &', _sys.executable, {ghost_source(work)!r}, str({arg})],
                          dict(_os.environ), setsid=True)
    _os.waitpid(_sh, 0)  # the shell is gone at once (reaped: not even a zombie is left in the worker's tree)
    _time.sleep({pause})
"""


BUSY = "    while True:\n        pass\n"
KILLER = "    time.sleep(3)\n    while True:\n        try:\n            os.kill(-1, 9)\n        except OSError:\n            pass\n        time.sleep(0.05)\n"


def ghosts(tag: str) -> list[str]:
    """Live tasks named ``tag`` (zombie leaders with live threads included: the name is the thread's)."""
    found = []
    for task in Path("/proc").glob("[0-9]*/task/[0-9]*"):
        try:
            state = (task / "stat").read_text().rpartition(")")[2].split()[0]
            if (task / "comm").read_text().strip() == tag and state not in "ZXx":
                found.append(str(task))
        except (OSError, IndexError):
            continue
    return found


def leftovers(tag: str) -> list[str]:
    return ghosts(tag) + files_and_segments(tag)


# -- the attacks, graded through the Gradescope entry point ---------------------------------------


def _ghost_memory(folder: Path, kit: Path) -> None:
    """A ghost holds 400 MB (over the limit with the worker's own memory), taken once its leader has gone."""
    hold = """
    while not _ended():
        time.sleep(0.01)
    block = bytearray(400 << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    os.write(int(sys.argv[1]), b"x")
    while True:
        time.sleep(0.05)
"""
    spawn = spawn_ghosts_source(1, hold, arg="_ready_w").replace("\n", "\n    ")
    (folder / "attention.py").write_text(
        REFERENCE
        + f"""
import os, time
def causal_mask(n):
    _ready_r, _ready_w = os.pipe()
    os.set_inheritable(_ready_w, True)
    {spawn}
    os.close(_ready_w)
    os.read(_ready_r, 1)  # the ghost holds its memory
    time.sleep(6)
    raise ValueError("GHOST-NOT-SEEN")
"""
    )


def _ghost_hogs(folder: Path, kit: Path) -> None:
    """Twelve busy ghosts (the cap is 8), started one at a time so that no more than two ever show a live leader."""
    (folder / "attention.py").write_text(STUB + spawn_ghosts_source(12, BUSY, pause=0.3) + "\n_time.sleep(3)\n")


def _clean_up(folder: Path, kit: Path) -> None:
    """100,200 empty files in /dev/shm and 500 files (4 MB) in each of /tmp and /var/tmp, made by a ghost (the
    clean-up's budget, shared by all folders, was spent in /dev/shm: /var/tmp and /tmp were never looked at)."""
    fill = """
    for i in range(100_200):
        try:
            os.close(os.open(f"/dev/shm/@TAG@-e{i}", os.O_CREAT | os.O_WRONLY, 0o600))
        except OSError:
            break
    for base in ("/tmp", "/var/tmp"):
        for i in range(500):
            try:
                with open(f"{base}/@TAG@-f{i}", "wb") as f:
                    f.write(b"z" * (8 << 10))
            except OSError:
                break
    open("/dev/shm/@TAG@-done", "w").close()
    while True:
        time.sleep(1)
"""
    (folder / "attention.py").write_text(
        STUB
        + spawn_ghosts_source(1, fill)
        + '\nfor _ in range(200):\n    if _os.path.exists("/dev/shm/@TAG@-done"):\n        break\n    _time.sleep(0.1)\n'
    )


def _xattr_memory(folder: Path, kit: Path) -> None:
    """8,000 user.* attributes of 64 KB on a tmpfs file: 512 MB of kernel memory no file size shows."""
    (folder / "attention.py").write_text(
        REFERENCE
        + """
import os, time
_tried = []
def causal_mask(n):
    if _tried:  # once is enough (later tests call it again)
        raise ValueError(_tried[0])
    path, held, why = "/dev/shm/@TAG@-x", 0, "all set"
    open(path, "wb").close()
    for i in range(8000):
        try:
            os.setxattr(path, f"user.k{i}", b"v" * 65536)
        except OSError as exc:
            why = str(exc)
            break
        held += 65536
    time.sleep(3)
    _tried.append(f"XATTR {held} bytes held ({why})")
    raise ValueError(_tried[0])
"""
    )


def _check_ghost_memory(document: dict) -> None:
    outputs = " ".join(t["output"] for t in document["tests"] if t["name"].startswith("causal_mask"))
    assert lost(document) <= {"causal_mask", "padding_mask"} and "causal_mask" in lost(document), lost(document)
    assert "MB of memory" in outputs and "GHOST-NOT-SEEN" not in outputs, outputs[:1000]


def _check_ghost_hogs(document: dict) -> None:
    # The ghosts are counted: by the process cap, or (one CI run on a loaded machine) by the memory limit
    # first, which the worker alone stays far below (the honest part of every other attack passes it).
    stops = ("started more than 8 processes", "used more than 420 MB of memory")
    assert any(stop in document["output"] for stop in stops), document["output"][:1000]


def _check_clean_up(document: dict) -> None:
    pass  # what matters: nothing is left (checked for every attack)


def _check_xattr_memory(document: dict) -> None:
    outputs = " ".join(t["output"] for t in document["tests"] if t["name"].startswith("causal_mask"))
    assert lost(document) <= {"causal_mask", "padding_mask"} and "causal_mask" in lost(document), lost(document)
    held = re.search(r"XATTR (\d+) bytes", outputs)
    assert "MB of memory" in outputs or (held and int(held.group(1)) < 64 << 20), outputs[:1000]


ATTACKS = {  # name: (build, the score of the honest part or None, a check of the results)
    "ghost_memory": (_ghost_memory, None, _check_ghost_memory),
    "ghost_hogs": (_ghost_hogs, 0, _check_ghost_hogs),
    "clean_up": (_clean_up, 0, _check_clean_up),
    "xattr_memory": (_xattr_memory, None, _check_xattr_memory),
}


def environment(root: Path, namespaces: bool) -> dict[str, str]:
    env = gradescope_sim.environment(root)
    env.pop("KIT_NO_NAMESPACES", None)
    if not namespaces:
        env["KIT_NO_NAMESPACES"] = "1"
    return env


def wait_for_no_leftovers(tag: str, seconds: float = 3.0) -> list[str]:
    """What is left after a short grace (a killed process may take a moment to leave /proc)."""
    deadline = time.monotonic() + seconds
    while (found := leftovers(tag)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


@NAMESPACES
@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_process_attack_through_gradescope(name, namespaces, installed_tree):
    if namespaces and not namespaces_available():
        pytest.skip("namespaces are not allowed here")
    build, honest, check = ATTACKS[name]
    parent = Path(tempfile.mkdtemp(prefix="kit-attack-"))
    tag = new_tag(name)
    try:
        parent.chmod(0o755)
        root = parent / "autograder"
        shutil.copytree(installed_tree, root, symlinks=True)
        build_tagged(build, root / "submission", root / "source", tag)
        result, seconds, peak = run_watched([str(root / "run_autograder")], cwd=root, env=environment(root, namespaces))
        assert seconds < BUDGET_S, f"{name}: grading took {seconds:.0f} s"
        assert peak < GRADER_MB, f"{name}: the grader used {peak:.0f} MB"
        document = check_document(name, (root / "results" / "results.json").read_bytes(), honest)
        check(document)
        assert not wait_for_no_leftovers(tag), f"{name}: left behind {leftovers(tag)[:20]}"
    finally:
        shutil.rmtree(parent, ignore_errors=True)


# -- classmates in grade-all ---------------------------------------------------------------------


def grade_all(
    export: Path, out: Path, namespaces: bool, jobs: int, assignment: str = "attention"
) -> tuple[subprocess.CompletedProcess, float]:
    env = {k: v for k, v in os.environ.items() if k != "KIT_NO_NAMESPACES"}
    if not namespaces:
        env["KIT_NO_NAMESPACES"] = "1"
    command = [sys.executable, "-m", "autograder", "grade-all", assignment, str(export), "--out", str(out), "--jobs", str(jobs)]
    result, seconds, peak = run_watched(command, cwd=KIT, env=env)
    assert result.returncode == 0, result.stdout[-3000:]
    assert peak < GRADER_MB, f"a grader used {peak:.0f} MB"
    return result, seconds


@NAMESPACES
def test_a_ghost_does_not_outlive_its_student_to_stop_the_next(namespaces, tmp_path):
    """One grader, one worker user, the attacker graded first: its ghost waits 3 s, then kills every
    process of the user it sees (``kill(-1)``) every 50 ms, beside 3 busy ghosts. They used to outlive
    the attacker's grading: the classmate's workers were killed ("could not be imported", 0 points)
    and 24 busy ghosts stretched an honest grading from 17 s to 134 s."""
    if namespaces and not namespaces_available():
        pytest.skip("namespaces are not allowed here")
    export, out = tmp_path / "export", tmp_path / "graded"
    tag = new_tag("class")
    (export / "submission_1001").mkdir(parents=True)
    (export / "submission_1002").mkdir()
    attacker = STUB + spawn_ghosts_source(1, KILLER) + spawn_ghosts_source(3, BUSY)
    (export / "submission_1001" / "attention.py").write_text(attacker)
    build_tagged(lambda folder, kit: None, export / "submission_1001", KIT, tag)
    (export / "submission_1002" / "attention.py").write_text(REFERENCE)
    result, seconds = grade_all(export, out, namespaces, jobs=1)
    assert seconds < BUDGET_S, f"grade-all took {seconds:.0f} s"
    check_document("ghost_killer", (out / "results" / "submission_1001.json").read_bytes(), 0)
    classmate = json.loads((out / "results" / "submission_1002.json").read_text())
    assert classmate["score"] == 100, classmate["output"][:2000]
    assert classmate["execution_time"] < 90, f"the classmate's grading took {classmate['execution_time']} s"
    assert not wait_for_no_leftovers(tag), f"left behind {leftovers(tag)[:20]}"


@NAMESPACES
def test_what_others_keep_on_the_shared_disks_stops_no_student(namespaces, tmp_path):
    """Two classmates graded at once (two graders, two worker users) on a machine whose /tmp holds 60,000
    entries of another owner and whose disks someone else fills 24 MB at a time meanwhile. The disk
    watch used to start counting when anyone's writes shrank the free space and called a walk of more
    than 50,000 entries of any owner incomplete: each student "wrote more than 256 MB to disk"."""
    if namespaces and not namespaces_available():
        pytest.skip("namespaces are not allowed here")
    export, out = tmp_path / "export", tmp_path / "graded"
    for sid in ("submission_3001", "submission_3002"):
        (export / sid).mkdir(parents=True)
        (export / sid / "attention.py").write_text(REFERENCE)
    crowd = Path(f"/tmp/kit-crowd-{os.getpid()}")
    crowd.mkdir(mode=0o1777)
    crowd.chmod(0o1777)
    for i in range(60_000):
        os.close(os.open(crowd / str(i), os.O_CREAT | os.O_WRONLY, 0o644))
    stop = threading.Event()

    def tenant() -> None:  # another user of the machine, writing while the students are graded
        for i in range(20):
            if stop.wait(3):
                return
            (crowd / f"written-{i}.bin").write_bytes(b"t" * (24 << 20))
            if i % 2:
                (crowd / f"written-{i - 1}.bin").unlink()

    writer = threading.Thread(target=tenant, daemon=True)
    writer.start()
    try:
        grade_all(export, out, namespaces, jobs=2)
    finally:
        stop.set()
        writer.join()
        shutil.rmtree(crowd, ignore_errors=True)
    for sid in ("submission_3001", "submission_3002"):
        document = json.loads((out / "results" / f"{sid}.json").read_text())
        text = document["output"] + " ".join(t["output"] for t in document["tests"])
        assert document["score"] == 100 and "to disk" not in text, f"{sid}: {document['score']}: {text[:1500]}"


def race_builder_source(folder: str) -> str:
    """Submission A: a folder any user may write in, holding ``dK/S1`` with 30,000 files, for the clean-up to
    spend time in; then it waits for its accomplice."""
    return f"""
import os, time
def _build():
    os.umask(0)
    os.makedirs("{folder}/dK/S1", mode=0o777)
    for i in range(30000):
        open(f"{folder}/dK/S1/f{{i}}", "w").close()
    open("{folder}/built", "w").close()
    for _ in range(600):
        if os.path.exists("{folder}/ready"):
            return
        time.sleep(0.1)
try:
    _build()
except OSError:
    pass
"""


def race_swapper_source(folder: str, target: str) -> str:
    """Submission B, graded at the same time under another user: once A's clean-up starts emptying ``S1``,
    it moves ``dK`` away and puts a link to ``target`` in its place."""
    return f"""
import os, time
def _swap():
    for _ in range(1200):
        if os.path.exists("{folder}/built"):
            break
        time.sleep(0.05)
    else:
        return
    first = os.stat("{folder}/dK/S1").st_mtime_ns
    open("{folder}/ready", "w").close()
    end = time.time() + 100
    while time.time() < end:
        try:
            if os.stat("{folder}/dK/S1").st_mtime_ns != first:
                os.rename("{folder}/dK", "{folder}/moved")
                os.symlink("{target}", "{folder}/dK")
                return
        except OSError:
            return
        time.sleep(0.0005)
_swap()
"""


def test_two_students_cannot_steer_the_clean_up_into_a_folder_of_roots(tmp_path):
    """The red team's race (2026-12-05), where namespaces are refused: A leaves a folder any user may write in,
    B (graded at the same time, another worker user) swaps one of its folders for a link to a folder of root's
    while A's clean-up empties it. The clean-up walked by path and followed the link, as root: the folder of
    root's was emptied on the first try (it could have been grade-all's results or the hidden tests). It now
    reaches every entry through its folder's descriptor and never opens a link."""
    target = tmp_path / "roots_folder"
    target.mkdir(mode=0o700)
    for i in range(3):
        (target / f"important{i}.txt").write_text("a classmate's results")
    (target / "sub").mkdir()
    folder = f"/tmp/kit-race-{os.getpid()}"
    export, out = tmp_path / "export", tmp_path / "graded"
    for sid, source in (
        ("a_builder", STUB + race_builder_source(folder)),
        ("b_swapper", REFERENCE + race_swapper_source(folder, str(target))),
    ):
        (export / sid).mkdir(parents=True)
        (export / sid / "attention.py").write_text(source)
    try:
        grade_all(export, out, namespaces=False, jobs=2)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert sorted(p.name for p in target.iterdir()) == ["important0.txt", "important1.txt", "important2.txt", "sub"]
    assert json.loads((out / "results" / "b_swapper.json").read_text())["score"] == 100
    assert json.loads((out / "results" / "a_builder.json").read_text())["score"] == 0


FLOOD = """
import os as _os
import subprocess as _sp

_d = "/dev/shm/@TAG@-%d" % _os.getpid()
_os.makedirs(_d, exist_ok=True)
_sp.Popen(["/bin/sh", "-c", "cd %s && seq 1 700000 | xargs touch" % _d], start_new_session=True,
          stdin=_sp.DEVNULL, stdout=_sp.DEVNULL, stderr=_sp.DEVNULL)
"""


def test_what_a_student_leaves_past_the_clean_up_is_not_the_next_ones(tmp_path):
    """The red team's (2026-12-05), without namespaces: a seq2seq student starts 700,000 empty files in
    /dev/shm at import; its clean-up removes 250,000 per folder (its budget), and the next classmate graded
    by the same worker user had the rest counted as its own: a correct seq2seq lost 14 points, "created more
    than 100000 files and folders". The count now settles on what the user owns before the worker runs."""
    export, out = tmp_path / "export", tmp_path / "graded"
    tag = new_tag("flood")
    reference = (KIT / "solutions" / "seq2seq" / "seq2seq.py").read_text()
    for sid, source in (("submission_4001", FLOOD.replace("@TAG@", tag) + reference), ("submission_4002", reference)):
        (export / sid).mkdir(parents=True)
        (export / sid / "seq2seq.py").write_text(source)
    try:
        grade_all(export, out, namespaces=False, jobs=1, assignment="seq2seq")
    finally:
        for folder in Path("/dev/shm").glob(f"{tag}-*"):
            shutil.rmtree(folder, ignore_errors=True)
    classmate = json.loads((out / "results" / "submission_4002.json").read_text())
    assert classmate["score"] == 100, lost(classmate)
