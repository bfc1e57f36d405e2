"""The binary wire (issue 49): a frame is a JSON header whose tensors are byte ranges of the raw payload that
follows it. The worker is the student's (it can write any bytes into the answer pipe), so every claim a header
makes (a range, a shape, a dtype, a length, a depth) is checked against the others and against the grader's
budgets before anything of the claimed size is allocated; these attacks are each refused, within a small
fraction of what they claim (tracemalloc counts the grader's Python and NumPy allocations)."""

from __future__ import annotations

import io
import json
import os
import struct
import threading
import time
import tracemalloc

import numpy as np
import pytest
import torch

from autograder.sandbox.channel import MAX_ANSWER_BYTES, Channel, ChannelClosed, ChannelViolation
from autograder.worker import wire

GIB = 2**30


def _frame(header: object, payload: bytes = b"") -> bytes:
    """A frame as a hostile worker writes it: any header, any payload."""
    body = json.dumps(header).encode()
    return struct.pack("<Q", len(body)) + body + payload


def _tensor(shape: list, start: int, size: int, dtype: str = "float32") -> dict:
    return {"__tensor__": dtype, "shape": shape, "data": {"__raw__": [start, size]}}


class _Peak:
    """The grader's peak allocation (bytes) while the block runs."""

    def __enter__(self) -> _Peak:
        tracemalloc.start()
        return self

    def __exit__(self, *exc) -> None:
        self.bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()


def _receive(*frames: bytes, request_id: int = 1) -> dict:
    """What the grader's channel makes of ``frames`` written into its answer pipe (then closed), decoded."""
    answer_r, answer_w = os.pipe()
    request_r, request_w = os.pipe()
    channel = Channel(request_w, answer_r)

    def write() -> None:
        with os.fdopen(answer_w, "wb") as out:
            for f in frames:
                try:
                    out.write(f)
                except BrokenPipeError:
                    return

    writer = threading.Thread(target=write)
    writer.start()
    try:
        answer = channel.receive(request_id, time.monotonic() + 30)
        return {**answer, "ok": wire.decode(answer["ok"], lambda ref, kind: ref, wire.Room(64 * 2**20))}
    finally:
        channel.close()
        os.close(request_r)
        writer.join()


# -- honest values -------------------------------------------------------------------------------

VALUES = [
    torch.randn(3, 4),
    torch.ones(2, dtype=torch.bfloat16),
    torch.tensor([1 + 2j, 3 - 4j], dtype=torch.complex64),
    torch.tensor([True, False]),
    torch.zeros(0, 3),
    torch.tensor(2.5),
    torch.arange(12).reshape(3, 4).t(),  # not contiguous
    np.arange(6, dtype=np.int16).reshape(2, 3),
    np.array([1.5, -2.0], dtype=">f8"),  # big-endian: sent little-endian, arrives as float64 of the same values
    np.float32(1.25),
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_every_kind_of_value_makes_the_round_trip_through_a_frame(value):
    message = {"id": 1, "ok": wire.encode([value, {"k": value}]), "banned": []}
    stream = io.BytesIO()
    wire.write_message(stream, message)
    stream.seek(0)
    back = wire.decode(wire.read_message(stream)["ok"])
    for got in back[0], back[1]["k"]:
        if isinstance(value, torch.Tensor):
            assert type(got) is torch.Tensor and got.dtype == value.dtype and torch.equal(got, value)
        elif isinstance(value, np.ndarray):
            assert got.dtype == value.dtype.newbyteorder("=") and np.array_equal(got, value)
        else:
            assert got == value.item()


def test_a_frame_without_tensors_is_the_plain_json_message():
    """Frames written by hand as JSON (tests/test_attacks.py's `_frame`) still read the same."""
    pieces = wire.frame({"id": 1, "ok": [1, "a", None], "banned": []})
    assert len(pieces) == 1 and json.loads(pieces[0][8:]) == {"id": 1, "ok": [1, "a", None], "banned": []}


def test_the_encoder_sends_the_tensors_own_bytes_and_the_decoded_tensor_owns_its_memory():
    t = torch.randn(4 * 2**20)  # 16 MiB
    with _Peak() as peak:
        pieces = wire.frame({"id": 1, "ok": wire.encode(t)})
    assert peak.bytes < 2**20, f"encoding copied {peak.bytes} bytes"
    assert len(pieces) == 2 and pieces[1].nbytes == t.numel() * 4
    message, blobs = wire.parse_header(pieces[0][8:])
    payload = bytearray(pieces[1])
    wire.attach(blobs, payload)
    back = wire.decode(message["ok"])
    payload[:] = bytes(len(payload))  # the payload is reused or freed: the tensor must not change
    assert torch.equal(back, t)
    back += 1  # and writable
    assert torch.equal(back, t + 1)


def test_a_channel_reads_a_tensor_answer_and_drops_an_unrequested_one_with_its_payload():
    t = torch.arange(10, dtype=torch.float64)
    dropped = b"".join(wire.frame({"id": 7, "ok": wire.encode(torch.ones(1000)), "banned": []}))
    honest = b"".join(wire.frame({"id": 1, "ok": wire.encode({"t": t, "n": 3}), "banned": []}))
    answer = _receive(dropped, honest)
    assert torch.equal(answer["ok"]["t"], t) and answer["ok"]["n"] == 3


def test_a_request_carries_its_tensors_to_the_worker():
    request_r, request_w = os.pipe()
    answer_r, answer_w = os.pipe()
    channel = Channel(request_w, answer_r)
    x = torch.randn(300, 300)  # more than a pipe holds: written while read
    reader = threading.Thread(target=lambda: got.append(wire.read_message(os.fdopen(request_r, "rb", buffering=0))))
    got: list = []
    reader.start()
    channel.send({"op": "call", "ref": 1, "args": wire.encode([x])}, time.monotonic() + 30)
    reader.join()
    channel.close()
    os.close(answer_w)
    assert got[0]["id"] == 1 and torch.equal(wire.decode(got[0]["args"])[0], x)


# -- attacks: each refused without allocating what it claims ------------------------------------


def test_a_shape_whose_bytes_exceed_the_payload_is_refused():
    """4 bytes sent, a [2**28] float32 (1 GiB) claimed."""
    with _Peak() as peak, pytest.raises(wire.WireError, match="does not match its shape"):
        _receive(_frame({"id": 1, "ok": _tensor([2**28], 0, 4)}, b"\0" * 4))
    assert peak.bytes < 2**20
    with pytest.raises(wire.WireError, match="does not match its shape"):  # too many bytes for the shape
        _receive(_frame({"id": 1, "ok": _tensor([1], 0, 8)}, b"\0" * 8))


@pytest.mark.parametrize(
    "ranges",
    [[[0, 8], [4, 8]], [[0, 8], [0, 8]], [[0, 8], [16, 8]], [[4, 8]], [[-4, 8]], [[0, -8]], [[0, 8.0]], [[0]], ["0,8"]],
    ids=["overlap", "same", "gap", "not-from-0", "negative-offset", "negative-length", "float", "short", "text"],
)
def test_a_byte_range_overlapping_or_outside_the_payload_is_refused_before_the_payload_is_read(ranges):
    tensors = [{"__tensor__": "float32", "shape": [2], "data": {"__raw__": r}} for r in ranges]
    with pytest.raises(ChannelViolation, match="not a valid message"):
        _receive(_frame({"id": 1, "ok": tensors}, b"\0" * 64))


def test_a_byte_range_past_the_bytes_sent_is_never_read_past():
    """The header claims 1 MiB, the worker sends 8 bytes and closes: the channel waits for them, then gives up."""
    with pytest.raises(ChannelClosed):
        _receive(_frame({"id": 1, "ok": _tensor([2**18], 0, 2**20)}, b"\0" * 8))


def test_a_range_with_a_forged_neighbour_or_in_the_wrong_place_is_malformed():
    with pytest.raises(ChannelViolation, match="not a valid message"):
        _receive(_frame({"id": 1, "ok": {"__raw__": [0, 4], "shape": [1]}}, b"\0" * 4))
    with pytest.raises(wire.WireError, match="malformed"):  # bytes where a value is expected
        _receive(_frame({"id": 1, "ok": [{"__raw__": [0, 4]}]}, b"\0" * 4))
    with pytest.raises(ChannelViolation, match="malformed list of banned"):
        _receive(_frame({"id": 1, "ok": 1, "banned": [{"__raw__": [0, 4]}]}, b"\0" * 4))


@pytest.mark.parametrize("dtype", ["float128", "object", "str", "complex256", "<U8", "", None, ["float32"]])
def test_a_dtype_not_allowed_is_refused(dtype):
    """Its bytes (1 MiB, 16 a value) are read, as an answer's are, but nothing is built from them."""
    size = 2**20
    for tag in ("__tensor__", "__ndarray__"):
        frame = _frame({"id": 1, "ok": {tag: dtype, "shape": [size // 16], "data": {"__raw__": [0, size]}}}, bytes(size))
        with _Peak() as peak, pytest.raises(wire.WireError, match="unknown .* dtype|malformed message"):
            _receive(frame)
        assert peak.bytes < size + 2**18, "the claimed tensor was built"


def test_an_element_count_over_budget_is_refused_before_it_is_allocated():
    # the ranges the header claims (2**28 float32, 1 GiB) are past what an answer may hold: nothing is read
    with _Peak() as peak, pytest.raises(ChannelViolation, match="an answer of"):
        _receive(_frame({"id": 1, "ok": _tensor([2**28], 0, GIB)}))
    assert peak.bytes < 2**20
    # a tensor that fits the answer but not what the test has left: OverBudget before it is copied
    blob = wire.encode(torch.zeros(2**20))  # 4 MiB
    room = wire.Room(2**20)
    with _Peak() as peak, pytest.raises(wire.OverBudget):
        wire.decode(blob, None, room)
    assert peak.bytes < 2**20 and room.used == room.limit
    with pytest.raises(wire.WireError, match="does not match"):  # 2**188 bytes claimed: compared, never allocated
        wire.decode({**blob, "shape": [2**62, 2**62, 2**62]})


@pytest.mark.parametrize("size", [2**63, 2**64 - 1, MAX_ANSWER_BYTES + 1])
def test_a_huge_declared_length_is_refused_before_it_is_read(size):
    with _Peak() as peak, pytest.raises(ChannelViolation, match="the limit is"):
        _receive(struct.pack("<Q", size) + b"{}")
    assert peak.bytes < 2**20
    size = max(size, wire.MAX_MESSAGE_BYTES + 1)  # the worker's side of the same checks (it reads the grader's requests)
    with pytest.raises(wire.WireError, match="larger than the limit"):
        wire.read_message(io.BytesIO(struct.pack("<Q", size) + b"{}"))
    header = json.dumps({"op": "call", "args": _tensor([1], 0, size)}).encode()
    with _Peak() as peak, pytest.raises(wire.WireError, match="larger than the limit"):
        wire.read_message(io.BytesIO(struct.pack("<Q", len(header)) + header))
    assert peak.bytes < 2**20


def test_nesting_over_budget_is_refused():
    deep: object = _tensor([1], 0, 4)
    for _ in range(wire.MAX_DECODE_DEPTH + 5):
        deep = [deep]
    with pytest.raises(wire.WireError, match="nested too deeply"):
        _receive(_frame({"id": 1, "ok": deep}, b"\0" * 4))
    body = b'{"id": 1, "ok": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"  # deeper than the JSON parser goes
    with _Peak() as peak, pytest.raises(ChannelViolation, match="not a valid message"):
        _receive(struct.pack("<Q", len(body)) + body)
    assert peak.bytes < 2**21


def test_the_old_base64_form_is_refused():
    with pytest.raises(wire.WireError, match="malformed tensor data"):
        wire.decode({"__tensor__": "float32", "shape": [1], "data": "AAAAAA=="})
