"""The grader's end of the pipes to the worker: bounded, with deadlines, validated.

Every write and every read has a deadline (a worker that stops reading, or
shrinks its pipe, cannot block the grader); answers are read one at a time,
only while a request is outstanding, so an unrequested flood stays in the
worker's pipe instead of the grader's memory; an answer not carrying the request's id is dropped, and too many of those, an
answer larger than ``MAX_ANSWER_BYTES``, or any malformed answer, is a :class:`ChannelViolation`: the student's code interfered with the
grader's channel. Only validated, plain answers leave this module. Messages are :mod:`..worker.wire` frames: a JSON header, then its
tensors' raw bytes, whose total the header declares, so an answer is sized whole before its payload is read.
"""

from __future__ import annotations

import os
import select
import struct
import time
from typing import Callable

from ..worker import wire

MAX_REQUEST_BYTES = 64 * 1024 * 1024
MAX_ANSWER_BYTES = 48 * 1024 * 1024  # the largest honest answer (float64 weights of a 256-token batch) is a few MB
# What one answer may hold, checked on its bytes before json.loads builds anything: each list or
# dict costs the grader ~60-250 bytes and each value ~30-60, so a 48 MB answer of `[[],[],...]`
# would otherwise take gigabytes. Honest answers are tensors (one base64 string each) and short lists.
MAX_ANSWER_CONTAINERS = 100_000
MAX_ANSWER_VALUES = 1_000_000
MAX_DROPPED = 8  # unrequested answers tolerated before the worker is treated as hostile
TEXT_LIMITS = {"type": 120, "class": 200, "message": 4000, "where_line": 300, "where_lines": 6, "banned": 20}


class ChannelTimeout(Exception):
    """The deadline passed while writing to or reading from the worker."""


class ChannelClosed(Exception):
    """The worker closed its end (it exited or was killed)."""


class ChannelViolation(Exception):
    """The worker sent something no honest worker sends (the message says what)."""


def _set_nonblocking(fd: int) -> None:
    os.set_blocking(fd, False)


class Channel:
    """Request/answer pipes to one worker. ``wait`` is called while waiting (the watchdog)."""

    def __init__(self, request_fd: int, answer_fd: int) -> None:
        self.request_fd = request_fd
        self.answer_fd = answer_fd
        _set_nonblocking(request_fd)
        _set_nonblocking(answer_fd)
        self.next_id = 1
        self.dropped = 0
        self.closed = False

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for fd in (self.request_fd, self.answer_fd):
            try:
                os.close(fd)
            except OSError:
                pass

    # -- writing -----------------------------------------------------------------
    def send(self, message: dict, deadline: float, watch: Callable[[], None] = lambda: None) -> int:
        """Send one request; returns its id. Raises ChannelTimeout / ChannelClosed."""
        request_id = self.next_id
        self.next_id += 1
        pieces = wire.frame({**message, "id": request_id})
        size = sum(len(piece) for piece in pieces) - 8
        if size > MAX_REQUEST_BYTES:
            raise ValueError(f"request of {size} bytes is larger than the grader allows")
        for piece in pieces:
            self._write(memoryview(piece), deadline, watch)
        return request_id

    def _write(self, data: memoryview, deadline: float, watch: Callable[[], None]) -> None:
        while data:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelTimeout()
            _, writable, _ = select.select([], [self.request_fd], [], min(remaining, 0.05))
            watch()
            if not writable:
                continue
            try:
                written = os.write(self.request_fd, data[: 1 << 16])
            except BlockingIOError:
                continue
            except (BrokenPipeError, OSError):
                raise ChannelClosed() from None
            data = data[written:]

    # -- reading -----------------------------------------------------------------
    def _read(self, n: int, deadline: float, watch: Callable[[], None]) -> bytearray:
        buffer = bytearray(n)  # read in place: no chunks to join (one copy of the answer, not two)
        view = memoryview(buffer)
        done = 0
        while done < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChannelTimeout()
            readable, _, _ = select.select([self.answer_fd], [], [], min(remaining, 0.05))
            watch()
            if not readable:
                continue
            try:
                got = os.readv(self.answer_fd, [view[done : done + (1 << 20)]])
            except BlockingIOError:
                continue
            except OSError:
                raise ChannelClosed() from None
            if not got:
                raise ChannelClosed()
            done += got
        view.release()
        return buffer

    def receive(self, request_id: int, deadline: float, watch: Callable[[], None] = lambda: None) -> dict:
        """The answer to ``request_id``, validated. Raises ChannelTimeout / ChannelClosed / ChannelViolation."""
        while True:
            (size,) = struct.unpack("<Q", self._read(8, deadline, watch))
            if size > MAX_ANSWER_BYTES:
                raise ChannelViolation(f"an answer of {size} bytes (the limit is {MAX_ANSWER_BYTES // 2**20} MB)")
            answer, blobs = parse_answer(self._read(size, deadline, watch))
            total = size + wire.payload_size(blobs)  # the header's ranges, checked in order: sized before one byte is read
            if total > MAX_ANSWER_BYTES:
                raise ChannelViolation(f"an answer of {total} bytes (the limit is {MAX_ANSWER_BYTES // 2**20} MB)")
            if blobs:  # read even for an answer that is dropped: the next frame starts after it
                wire.attach(blobs, self._read(total - size, deadline, watch))
            if isinstance(answer, dict) and answer.get("id") == request_id:
                return validate_answer(answer)
            self.dropped += 1
            if self.dropped > MAX_DROPPED:
                raise ChannelViolation(f"more than {MAX_DROPPED} answers nobody asked for")


def parse_answer(header: bytes | bytearray) -> tuple[object, list[wire.Blob]]:
    """The message in an answer's header, with its blobs (``wire.parse_header``), whose structure was first
    counted on its bytes: more lists and dicts, or more values, than any honest answer holds is refused
    before anything is built. (Brackets and commas inside strings count too: an over-estimate, never an
    under-estimate.)"""
    containers = header.count(b"[") + header.count(b"{")
    values = containers + header.count(b",") + header.count(b":")
    if containers > MAX_ANSWER_CONTAINERS or values > MAX_ANSWER_VALUES:
        raise ChannelViolation(
            f"an answer of {max(values, containers):,} values, more than the grader reads "
            f"({MAX_ANSWER_VALUES:,} values, {MAX_ANSWER_CONTAINERS:,} lists or dicts; return a tensor, not a long list)"
        )
    try:
        return wire.parse_header(header)
    except wire.WireError as exc:
        raise ChannelViolation(f"an answer that is not a valid message ({exc})") from None


def _text(value, limit: int) -> str:
    if not isinstance(value, str):
        raise ChannelViolation("an error description that is not text")
    return value[:limit]


def validate_answer(answer: dict) -> dict:
    """Keep exactly the fields an honest worker sends, with their types and sizes checked."""
    if set(answer) - {"id", "ok", "error", "banned"} or ("ok" in answer) == ("error" in answer):
        raise ChannelViolation("an answer with unexpected fields")
    banned = answer.get("banned", [])
    if not isinstance(banned, list) or not all(isinstance(b, str) for b in banned):
        raise ChannelViolation("a malformed list of banned calls")
    clean: dict = {"banned": [b[:200] for b in banned[: TEXT_LIMITS["banned"]]]}
    if "ok" in answer:
        clean["ok"] = answer["ok"]
        return clean
    error = answer["error"]
    if not isinstance(error, dict):
        raise ChannelViolation("a malformed error description")
    where, classes = error.get("where", []), error.get("classes", [])
    if not isinstance(where, list):
        raise ChannelViolation("a malformed error location")
    if not isinstance(classes, list):
        raise ChannelViolation("a malformed list of exception classes")
    clean["error"] = {
        "type": _text(error.get("type", "Exception"), TEXT_LIMITS["type"]),
        "message": _text(error.get("message", ""), TEXT_LIMITS["message"]),
        "where": [_text(w, TEXT_LIMITS["where_line"]) for w in where[: TEXT_LIMITS["where_lines"]]],
        # the exception's classes, most derived first (expect_raises compares these, never the message)
        "classes": [_text(c, TEXT_LIMITS["class"]) for c in classes[:32]],
    }
    return clean
