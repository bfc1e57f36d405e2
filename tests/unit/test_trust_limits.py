"""The grader's own limits against a hostile worker or upload (issue 23): answers are counted before
they are parsed and decoded within bounds, a malformed one is the submission's fault, a zip's
directory is sized before it is read, and shared memory a process holds is seen."""

from __future__ import annotations

import io
import os
import pwd
import struct
import tracemalloc
import zipfile

import pytest
import torch
from conftest import user_files

from autograder.grading.submission import SubmissionProblem, UnpackBudget, central_directory, check_central_directory
from autograder.sandbox import channel, proctree
from autograder.sandbox.users import running_as_root
from autograder.worker import wire

# -- answers -------------------------------------------------------------------------------------


def test_an_answer_of_millions_of_empty_lists_is_refused_before_parsing():
    bomb = b'{"id": 1, "ok": [' + b"[]," * 5_000_000 + b"[]]}"
    tracemalloc.start()
    try:
        with pytest.raises(channel.ChannelViolation, match="more than the grader reads"):
            channel.parse_answer(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, f"refusing took {peak} bytes"


def test_honest_answers_pass_the_count():
    answer = {"id": 3, "ok": wire.encode({"weights": torch.randn(256, 256), "names": [f"n{i}" for i in range(5000)]})}
    header = wire.frame(answer)[0][8:]  # the weights' bytes follow the header: only a reference to them is counted
    parsed, blobs = channel.parse_answer(header)
    assert parsed["id"] == 3 and wire.payload_size(blobs) == 256 * 256 * 4


MALFORMED = [
    {"__tensor__": "float32", "shape": ["x"], "data": ""},
    {"__tensor__": "float32", "shape": [10**15], "data": "AAAA"},
    {"__tensor__": "float32", "shape": [-1], "data": ""},
    {"__tensor__": "float32", "shape": [2], "data": "!!!!!!!!!!!!"},
    {"__tensor__": "float32", "shape": [1]},
    {"__tensor__": ["float32"], "shape": [1], "data": "AAAAAA=="},
    {"__ndarray__": "float64", "shape": "3", "data": ""},
    {"__dict__": [[1]]},
    {"__dict__": 5},
    {"__dict__": [[[1], 2]]},
    {"__tuple__": 7},
    {"__float__": "1e999x"},
    {"__dtype__": "float128"},
    {"__ref__": "7"},
    {"__ref__": [1]},
]


@pytest.mark.parametrize("data", MALFORMED, ids=range(len(MALFORMED)))
def test_a_malformed_value_raises_only_wire_error(data):
    with pytest.raises(wire.WireError):
        wire.decode(data, lambda ref, kind: ref)


def test_decoding_is_bounded_in_depth_and_values():
    deep: list = []
    for _ in range(200):
        deep = [deep]
    with pytest.raises(wire.WireError, match="nested too deeply"):
        wire.decode(deep)
    with pytest.raises(wire.WireError, match="values in one message"):
        wire.decode([[]] * (wire.MAX_DECODE_VALUES + 1))


def test_values_still_make_the_round_trip():
    value = (
        torch.randn(3, 4),
        torch.ones(2, dtype=torch.bfloat16),
        {"k": [1, 2.5, float("nan")]},
        torch.int64,
        torch.zeros(0, 3),
    )
    back = wire.decode(wire.encode(value))
    assert torch.equal(back[0], value[0]) and back[1].dtype == torch.bfloat16 and back[3] is torch.int64
    assert back[2]["k"][:2] == [1, 2.5] and back[4].shape == (0, 3)


def test_an_array_of_words_arrives_as_the_list_it_holds():
    """`np.array(vocab)[order][:n]` from `nearest` was "nearest raised WireError: arrays of dtype str256 cannot be
    sent" in every nearest and analogy test (29 points of a correct embeddings.py, the outside grader's)."""
    import numpy as np

    words = np.array(["king", "queen", "princess"])
    assert wire.decode(wire.encode(words[[2, 0]])) == ["princess", "king"]
    assert wire.decode(wire.encode((np.str_("bank"), np.array([["a"], ["b"]]), np.array(["x", 1], dtype=object)))) == (
        "bank",
        [["a"], ["b"]],
        ["x", 1],
    )


def test_a_malformed_load_answer_is_the_submissions_failure(monkeypatch, tmp_path):
    """Was: "the grader hit an internal error (ValueError)"."""
    from autograder.grading import seam

    class FakeWorker:
        user = None

        def __init__(self, *args, **kwargs):
            pass

        def start(self):
            pass

        def alive(self):
            return True

        def kill(self):
            pass

        def request(self, message, deadline):
            return {"ok": {"__tensor__": "float32", "shape": ["x"], "data": ""}, "banned": []}

    monkeypatch.setattr(seam, "Worker", FakeWorker)
    student = seam.RemoteStudent("attention", tmp_path / "attention.py")
    error = student.load()
    assert error and "interfered with the grader's channel" in error and "malformed answer" in error, error


# -- zips ----------------------------------------------------------------------------------------


def _directory_only_zip(entries: int, zip64: bool = False) -> bytes:
    """A zip of ``entries`` central-directory entries for one local file (the attack's shape)."""
    local = struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, 1, 0) + b"a"
    entry = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0) + b"a"
    directory = entry * entries
    out = local + directory
    if zip64:
        record = len(out)
        out += struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, entries, entries, len(directory), len(local))
        out += struct.pack("<4sLQL", b"PK\x06\x07", 0, record, 1)
        return out + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return out + struct.pack(
        "<4s4H2LH", b"PK\x05\x06", 0, 0, min(entries, 0xFFFF), min(entries, 0xFFFF), len(directory), len(local), 0
    )


def test_the_central_directory_is_sized_from_its_end_record(tmp_path):
    real = tmp_path / "real.zip"
    with zipfile.ZipFile(real, "w") as zf:
        zf.writestr("attention.py", "x = 1\n")
        zf.writestr("notes.txt", "hello")
        zf.comment = b"a comment: the record is not the last 22 bytes"
    entries, size = central_directory(real)
    assert entries == 2 and 0 < size < 200
    check_central_directory(real, UnpackBudget())  # an honest zip passes
    for zip64 in (False, True):
        crafted = tmp_path / f"crafted{zip64}.zip"
        crafted.write_bytes(_directory_only_zip(100_000, zip64))
        assert central_directory(crafted) == (100_000 if zip64 else 0xFFFF, 100_000 * 47)
        with pytest.raises(SubmissionProblem, match="lists more than 2000 files"):
            check_central_directory(crafted, UnpackBudget())
    (tmp_path / "junk.zip").write_bytes(b"PK\x03\x04 not a zip")
    assert central_directory(tmp_path / "junk.zip") is None


def test_a_zip_inside_a_zip_with_a_huge_directory_costs_the_grader_nothing(tmp_path):
    from autograder.grading.submission import find_submission_file

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("inner.zip", _directory_only_zip(300_000))
    (tmp_path / "upload.zip").write_bytes(buffer.getvalue())
    tracemalloc.start()
    try:
        with pytest.raises(SubmissionProblem, match="lists more than 2000 files"):
            find_submission_file(tmp_path / "upload.zip", "attention.py", tmp_path, UnpackBudget())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20_000_000, f"refusing took {peak >> 20} MB"


# -- shared memory -------------------------------------------------------------------------------


def test_a_memfd_written_but_not_mapped_is_counted():
    before = proctree.held_shared_memory([os.getpid()])
    fd = os.memfd_create("kit-test")
    try:
        os.write(fd, b"x" * (8 << 20))
        assert proctree.held_shared_memory([os.getpid()]) - before >= 8 << 20
    finally:
        os.close(fd)


def test_world_writable_folders_are_found_once():
    found = proctree.world_writable_folders()
    assert "/tmp" in found and len(found) == len(set(found))
    assert all(os.stat(f).st_mode & 0o002 for f in found)


@pytest.mark.skipif(not running_as_root(), reason="needs a second user")
def test_a_users_sysv_segments_are_counted_and_removed():
    import ctypes

    from autograder.sandbox.users import ensure_student_user

    user = ensure_student_user()
    assert proctree.remove_user_ipc(user.pw_uid) >= 0  # a clean start
    pid = os.fork()
    if pid == 0:  # the student: a 4 MB segment, touched, detached, left behind
        try:
            os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
            os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
            libc = ctypes.CDLL(None, use_errno=True)
            libc.shmat.restype = ctypes.c_void_p
            sid = libc.shmget(0, 4 << 20, 0o1600)
            address = libc.shmat(sid, None, 0)
            ctypes.memset(ctypes.c_void_p(address), 1, 4 << 20)
            libc.shmdt(ctypes.c_void_p(address))
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    assert proctree.user_sysv_shm_bytes(user.pw_uid) >= 4 << 20
    assert proctree.remove_user_ipc(user.pw_uid) == 1
    assert proctree.user_sysv_shm_bytes(user.pw_uid) == 0
    with pytest.raises(ValueError):
        proctree.remove_user_ipc(0)
    assert pwd.getpwuid(user.pw_uid).pw_name.startswith("kit-student")


def test_the_no_namespace_path_can_be_forced(monkeypatch):
    from autograder.sandbox import isolation

    monkeypatch.setenv("KIT_NO_NAMESPACES", "1")
    isolation.isolation_features.cache_clear()
    try:
        assert isolation.isolation_features() == frozenset() and not isolation.namespaces_available()
        if running_as_root():
            assert "KIT_NO_NAMESPACES" in isolation.isolation_summary()
    finally:
        monkeypatch.delenv("KIT_NO_NAMESPACES")
        isolation.isolation_features.cache_clear()


@pytest.mark.skipif(not running_as_root(), reason="needs a second user")
def test_only_the_students_own_files_count_and_are_removed(tmp_path):
    from autograder.sandbox.users import ensure_student_user

    user = ensure_student_user()
    proctree.remove_user_files(user.pw_uid)
    (tmp_path / "not-theirs.bin").write_bytes(b"x" * (4 << 20))  # someone else's writes never count
    pid = os.fork()
    if pid == 0:  # the student: 3 MB in a folder of its own in /tmp, 1 MB at the top of /var/tmp
        try:
            os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
            os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
            os.makedirs(f"/tmp/kit-test-{user.pw_uid}/deep", exist_ok=True)
            with open(f"/tmp/kit-test-{user.pw_uid}/deep/a.bin", "wb") as f:
                f.write(b"y" * (3 << 20))
            with open(f"/var/tmp/kit-test-{user.pw_uid}.bin", "wb") as f:
                f.write(b"z" * (1 << 20))
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    used, complete = user_files(user.pw_uid)
    assert complete and 4 << 20 <= sum(used.values()) < 5 << 20, used
    assert proctree.remove_user_files(user.pw_uid) == 2
    assert sum(user_files(user.pw_uid)[0].values()) == 0
