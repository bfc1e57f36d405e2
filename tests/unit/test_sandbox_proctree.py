"""Processes the kit must see whatever they do, and files it must count and remove (``sandbox/proctree.py``).

A *ghost* is a process whose main thread ended with the bare ``exit`` system call while another
thread runs on: /proc shows its leader as a zombie with no memory, yet it holds memory, takes CPU
time and can signal every process of its user. Each test here failed before the process scan went
thread by thread (the ghost was skipped as a zombie: not counted, not killed).
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import user_files

from autograder.sandbox import proctree
from autograder.sandbox.users import running_as_root

needs_root = pytest.mark.skipif(not running_as_root(), reason="needs a second user")
SYS_EXIT = {"x86_64": 60, "aarch64": 93}.get(os.uname().machine)
needs_ghosts = pytest.mark.skipif(SYS_EXIT is None or not sys.platform.startswith("linux"), reason="Linux x86-64 or arm64")

GHOST = """
import ctypes, sys, threading, time
mb, busy, name = int(sys.argv[1]), sys.argv[2] == "busy", sys.argv[3].encode()
ready = threading.Event()
def hold():
    ctypes.CDLL(None).prctl(15, name, 0, 0, 0)  # PR_SET_NAME: this thread's name
    block = bytearray(mb << 20)
    for i in range(0, len(block), 4096):
        block[i] = 1
    ready.set()
    while True:
        if not busy:
            time.sleep(0.05)
threading.Thread(target=hold).start()
ready.wait()
ctypes.CDLL(None).syscall(%d, 0)  # the bare exit of the main thread: a zombie leader, its thread runs on
""" % (SYS_EXIT or 0)


def state(path: str) -> str:
    try:
        return Path(path).read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return "gone"


def live_threads(pid: int) -> list[str]:
    """The tasks of ``pid`` that still run, read here from /proc (not with the code under test)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    return [tid for tid in tids if state(f"/proc/{pid}/task/{tid}/stat") not in ("Z", "X", "x", "gone")]


def ghost_is_ready(pid: int) -> bool:
    return state(f"/proc/{pid}/stat") == "Z" and bool(live_threads(pid))


def start_ghost(mb: int = 8, busy: bool = False, user=None, name: str = "kit-ghost") -> subprocess.Popen:
    """A ghost of ``mb`` MB (as ``user``, or as us), once its leader is a zombie and its thread runs on."""
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable
    ids = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []} if user is not None else {}
    proc = subprocess.Popen(
        [python, "-I", "-c", GHOST, str(mb), "busy" if busy else "idle", name], start_new_session=True, cwd="/", **ids
    )
    deadline = time.monotonic() + 20
    while not ghost_is_ready(proc.pid):
        assert proc.poll() is None and time.monotonic() < deadline, "the ghost did not start"
        time.sleep(0.05)
    return proc


def end(proc: subprocess.Popen) -> None:
    try:
        os.kill(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    proc.wait(timeout=10)


@pytest.fixture
def student():
    from autograder.sandbox.users import ensure_student_user

    user = ensure_student_user()
    proctree.kill_user(user.pw_uid)
    proctree.remove_user_files(user.pw_uid)
    yield user
    proctree.kill_user(user.pw_uid)
    proctree.remove_user_files(user.pw_uid)


def as_user(user, work) -> None:
    """Run ``work()`` in a child that has become ``user``; fail if it fails."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
            os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
            work()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


# -- processes ----------------------------------------------------------------------------------


@needs_root
@needs_ghosts
def test_a_ghost_is_seen_counted_measured_and_killed(student):
    ghost = start_ghost(mb=96, busy=True, user=student)
    try:
        assert ghost.pid in proctree.user_pids(student.pw_uid), "the ghost is one of its processes"
        assert proctree.kill_user(student.pw_uid, timeout=3)
        ghost.wait(timeout=10)
        assert not live_threads(ghost.pid), "and it is killed"
        ghost = start_ghost(mb=96, busy=True, user=student)
        assert ghost.pid in proctree.user_pids(student.pw_uid)
        rss, cpu = proctree.usage(ghost.pid)
        assert rss >= 96 << 20, f"the ghost's memory is read from its live thread: {rss >> 20} MB"
        time.sleep(0.5)
        assert proctree.usage(ghost.pid)[1] >= cpu + 0.2, "its busy thread's CPU time is charged"
        assert proctree.runnable(ghost.pid), "its busy thread is runnable, whatever its leader shows"
        assert proctree.kill_user(student.pw_uid)
        ghost.wait(timeout=10)
        assert not live_threads(ghost.pid) and not proctree.user_pids(student.pw_uid)
    finally:
        end(ghost)


@needs_root
@needs_ghosts
def test_the_kill_signals_first_whatever_proc_shows(student, monkeypatch):
    """kill_user sends kill(-1) as the user before looking: a process /proc does not show is killed too."""
    ghost = start_ghost(user=student)
    try:
        monkeypatch.setattr(proctree, "user_pids", lambda uid: [], raising=False)  # a process the scan cannot see
        assert proctree.kill_user(student.pw_uid)
        ghost.wait(timeout=10)
        assert not live_threads(ghost.pid)
        monkeypatch.undo()
        assert not proctree.user_pids(student.pw_uid)
        assert proctree.kill_user(student.pw_uid), "nothing left: the kernel finds nothing to signal"
    finally:
        end(ghost)


@needs_ghosts
def test_without_root_a_ghost_is_running_and_its_tree_is_killed():
    import psutil

    ghost = start_ghost()
    try:
        p = psutil.Process(ghost.pid)
        assert p.status() == psutil.STATUS_ZOMBIE and proctree.running(p)
        assert proctree.kill_tree([p], timeout=3)
        assert ghost.wait(timeout=10) is not None and not live_threads(ghost.pid)
    finally:
        end(ghost)


@needs_root
@needs_ghosts
def test_a_worker_template_starts_by_killing_every_hidden_process_of_its_user(student):
    from autograder.sandbox.zygote import Zygote

    ghost = start_ghost(user=student)
    try:
        zygote = Zygote([])
        try:
            assert zygote.user.pw_uid == student.pw_uid
            ghost.wait(timeout=10)
            assert not live_threads(ghost.pid)
            assert zygote.xattrs_refused, "the template's seccomp filter is in force"
        finally:
            zygote.close()
    finally:
        end(ghost)


# -- files --------------------------------------------------------------------------------------


@needs_root
def test_entries_of_other_owners_never_count_nor_make_the_count_fail(student, tmp_path):
    """60,000 entries of another owner in a shared folder (once: "incomplete", then "wrote more than
    256 MB to disk" for whoever was graded) count for nothing; the student's 1 MB counts."""
    crowd = Path(f"/tmp/kit-crowd-{os.getpid()}")
    crowd.mkdir(mode=0o1777)
    crowd.chmod(0o1777)
    try:
        for i in range(60_000):
            os.close(os.open(crowd / str(i), os.O_CREAT | os.O_WRONLY, 0o644))

        def write() -> None:
            with open(f"/var/tmp/kit-own-{student.pw_uid}.bin", "wb") as f:
                f.write(b"z" * (1 << 20))

        as_user(student, write)
        used, within = user_files(student.pw_uid)
        assert within and 1 << 20 <= sum(used.values()) < 2 << 20, used
        count = proctree.FileCount(student.pw_uid, [], proctree.world_writable_folders())
        steps = 1
        while not count.step([], 0.002):  # the same count, walked a sliver of time at a time
            steps += 1
        assert steps > 1 and count.used() == used and count.entries() == 1
    finally:
        shutil.rmtree(crowd, ignore_errors=True)


@needs_root
def test_extended_attributes_of_the_students_files_count(student):
    def write() -> None:
        path = f"/dev/shm/kit-xattr-{student.pw_uid}"
        open(path, "wb").close()
        for i in range(64):
            os.setxattr(path, f"user.k{i}", b"x" * 65536)

    try:
        as_user(student, write)
    except AssertionError:
        pytest.skip("this kernel keeps no user.* attributes on tmpfs")
    used, _ = user_files(student.pw_uid)
    assert used.get(os.stat("/dev/shm").st_dev, 0) >= 4 << 20, used
    assert proctree.remove_user_files(student.pw_uid) == 1


@needs_root
def test_the_clean_up_covers_every_folder_whatever_one_holds(student):
    """100,200 empty files in /dev/shm once used up a budget shared by all folders: /var/tmp and /tmp were
    never looked at. Each folder has its own budget now, checked at every entry."""

    def fill() -> None:
        for i in range(100_200):
            os.close(os.open(f"/dev/shm/kit-many-{i}", os.O_CREAT | os.O_WRONLY, 0o600))
        for folder in ("/tmp", "/var/tmp"):
            os.makedirs(f"{folder}/kit-deep-{os.getuid()}/a/b", exist_ok=True)
            for i in range(10):
                with open(f"{folder}/kit-deep-{os.getuid()}/a/b/{i}", "wb") as f:
                    f.write(b"y" * (1 << 20))

    as_user(student, fill)
    started = time.monotonic()
    assert proctree.remove_user_files(student.pw_uid) == 100_202
    assert time.monotonic() - started < 30
    for folder in proctree.world_writable_folders():
        assert not [e.name for e in os.scandir(folder) if e.stat(follow_symlinks=False).st_uid == student.pw_uid]


def test_a_budget_stops_the_clean_up_inside_a_folder(tmp_path):
    tree = tmp_path / "t"
    (tree / "a" / "b").mkdir(parents=True)
    for i in range(50):
        (tree / "a" / "b" / str(i)).touch()
    parent = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        assert not proctree._remove_tree(parent, "t", proctree._Budget(10, 60))
        left = len(list((tree / "a" / "b").iterdir()))
        assert left == 43, f"stopped inside the folder, at its budget (a pass, 2 folders, 7 files): {left} left"
        assert proctree._remove_tree(parent, "t", proctree._Budget(1000, 60)) and not tree.exists()
    finally:
        os.close(parent)


def test_the_clean_up_never_follows_a_link_and_empties_trees_deeper_than_its_open_folders(tmp_path):
    """The red team's race, in its end state: a folder of the tree replaced by a link to a folder of root's. The
    clean-up opens every folder as itself (no link followed, the inode it listed), so the target keeps its files;
    and a chain of folders deeper than the folders it keeps open is moved up and removed whole."""
    target = tmp_path / "root_folder"
    target.mkdir()
    (target / "keep").write_text("a classmate's results")
    tree = tmp_path / "t"
    (tree / "dK").mkdir(parents=True)
    (tree / "link").symlink_to(target, target_is_directory=True)
    deep = tree / "dK"
    for _ in range(proctree.MAX_OPEN_FOLDERS * 3):
        deep = deep / "d"
    deep.mkdir(parents=True)
    (deep / "f").touch()
    parent = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        info = os.stat("t", dir_fd=parent, follow_symlinks=False)
        assert proctree._remove_tree(parent, "t", proctree._Budget(10_000, 60), info) and not tree.exists()
        # a folder swapped since it was listed is not opened: another inode under the listed name
        (tmp_path / "t").mkdir()
        listed = os.stat(target)
        assert not proctree._remove_tree(parent, "t", proctree._Budget(100, 60), listed) and (tmp_path / "t").exists()
        os.rmdir(tmp_path / "t")
        (tmp_path / "t").symlink_to(target, target_is_directory=True)
        assert not proctree._remove_tree(parent, "t", proctree._Budget(100, 60))
    finally:
        os.close(parent)
    assert (target / "keep").read_text() == "a classmate's results"


@needs_ghosts
def test_the_template_filter_refuses_extended_attributes_and_io_uring(tmp_path):
    from autograder.sandbox.zygote import refuse_kernel_memory_calls

    target = Path("/dev/shm") / f"kit-filter-{os.getpid()}"
    target.touch()
    try:
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                import ctypes

                assert refuse_kernel_memory_calls()
                try:
                    os.setxattr(target, "user.k", b"x" * 1000)
                except OSError as exc:
                    assert exc.errno == errno.EOPNOTSUPP
                    libc = ctypes.CDLL(None, use_errno=True)
                    assert libc.syscall(425, 8, ctypes.create_string_buffer(256)) == -1  # io_uring_setup
                    assert ctypes.get_errno() == errno.ENOSYS
                    code = 0
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        os.setxattr(target, "user.k", b"x")  # this process is not filtered
    except OSError as exc:
        if exc.errno != errno.EOPNOTSUPP:
            raise
    finally:
        target.unlink()


@needs_root
def test_what_an_earlier_student_left_is_not_counted_as_the_next_ones(student):
    """The red team's grade-all attack: a student left more files than its clean-up's budget removes; the
    next student graded by the same slot user was stopped for "more than 100000 files and folders" (it lost
    14 points of a correct seq2seq). A count settles on what the user owns before its worker runs."""
    folder = f"/dev/shm/kit-left-{student.pw_uid}"

    def leave(n: int, start: int) -> None:
        os.makedirs(folder, exist_ok=True)
        for i in range(start, start + n):
            with open(f"{folder}/{i}", "wb") as f:
                f.write(b"x" * 4096)

    try:
        as_user(student, lambda: leave(3_000, 0))
        count = proctree.FileCount(student.pw_uid, [], proctree.world_writable_folders())
        count.settle(10.0)
        while not count.step([], 1.0):
            pass
        assert count.entries() == 0 and sum(count.used().values()) == 0, (count.entries(), count.used())
        as_user(student, lambda: leave(5, 3_000))  # the next student's own five files count, and only they
        while not count.step([], 1.0):
            pass
        assert count.entries() == 5 and 5 * 4096 <= sum(count.used().values()) < 5 * 4096 + 65536, count.used()
    finally:
        proctree.remove_user_files(student.pw_uid)
