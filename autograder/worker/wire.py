"""The wire format between the grader and the student's worker process.

Only plain data crosses: None, bools, ints, floats, strings, lists, tuples,
dicts, torch tensors, NumPy arrays and references to objects that stay in the
worker. A message is a frame: the length of a JSON header (8 bytes, little-endian),
the header, then the payload: the raw little-endian bytes of every tensor and array
in it, one after another. In the header a tensor's data is ``{"__raw__": [offset,
length]}``, its range of the payload; the ranges follow each other from 0 with no gap
or overlap, and the payload ends where the last one does, so the header alone says how
many bytes follow and a reader sizes them against its limit before reading one. (Tensors
were base64 strings in the JSON: a 32 MiB tensor was a 42.7 MiB string that the
grader parsed, then decoded, three copies and about a second.) A frame without
tensors is the plain JSON message it always was. Decoding can never execute code
(unlike pickle). Every tensor that comes back is rebuilt here as a fresh, plain
``torch.Tensor`` that owns its memory: a subclass with a forged
``__torch_function__`` or ``__eq__`` cannot survive the trip.

This module is imported on both sides, so it must not import anything secret.
"""

from __future__ import annotations

import json
import math
import struct
from typing import Any, BinaryIO

import numpy as np
import torch

MAX_MESSAGE_BYTES = 256 * 1024 * 1024

_TORCH_DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
}
_NUMPY_DTYPES = {"float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"}


class WireError(Exception):
    """A value cannot be sent, or a message cannot be read."""


class OverBudget(Exception):
    """An answer's data would take the grader past what a :class:`Room` leaves (not a malformed message)."""


VALUE_BYTES = 32  # what one decoded list, tuple or dict slot costs the grader, about (a float and its pointer)


class Room:
    """How many bytes of decoded data the grader may still take in (the seam: one per test).

    Counted as :func:`decode` builds a value, before each tensor or array is allocated: the bytes of its
    data, the length of every string, ``VALUE_BYTES`` per slot of a list, tuple or dict. ``used`` is what
    the values decoded so far take; an answer that would take it past ``limit`` is refused (OverBudget),
    and then nothing more fits (``used`` becomes ``limit``)."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.used = 0

    def take(self, n: int) -> None:
        if self.used + n > self.limit:
            self.used = self.limit  # refused: nothing more fits in this room either
            raise OverBudget(f"more than {self.limit / 2**20:.0f} MB")
        self.used += n


class Blob:
    """The bytes of one tensor or array, in a value :func:`encode` made or a frame delivered: ``view``, a
    view of the sender's own data (never a copy: the frame writes it straight out) or of the payload read,
    which :func:`decode` copies into the tensor it builds. ``start`` and ``size`` are its range of the
    payload, from the header, until :func:`attach` gives it its view."""

    __slots__ = ("view", "start", "size")

    def __init__(self, view: memoryview | None, start: int = 0, size: int = 0) -> None:
        self.view, self.start, self.size = view, start, size


def _blob(a: np.ndarray) -> Blob:
    return Blob(memoryview(a.reshape(-1).view(np.uint8)))


def _float_out(x: float) -> Any:
    if math.isnan(x):
        return {"__float__": "nan"}
    if math.isinf(x):
        return {"__float__": "inf" if x > 0 else "-inf"}
    return x


def encode(value: Any, make_ref=None, _depth: int = 0) -> Any:
    """Turn ``value`` into data a frame carries: JSON-able, but for each tensor's bytes (a :class:`Blob`, a
    view of the tensor's own memory: keep the tensor unchanged until the frame is written). ``make_ref(obj)``
    handles other objects."""
    if _depth > 50:
        raise WireError("value is nested too deeply to send")
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int or isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float):
        return _float_out(float(value))
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if t.is_sparse or t.layout != torch.strided:
            t = t.to_dense()
        t = torch.Tensor.contiguous(torch.Tensor.cpu(t.as_subclass(torch.Tensor)))
        dtype = str(t.dtype).replace("torch.", "")
        if dtype not in _TORCH_DTYPES:
            raise WireError(f"tensors of dtype {dtype} cannot be sent")
        data = (t if dtype != "bfloat16" else t.view(torch.int16)).numpy()
        return {"__tensor__": dtype, "shape": list(t.shape), "data": _blob(data)}
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        a = np.ascontiguousarray(np.asarray(value))
        if a.dtype.kind in "UO":  # words (`np.array(vocab)[order]`) or objects: sent as the lists they hold
            return encode(a.tolist(), make_ref, _depth + 1)
        if a.dtype.name not in _NUMPY_DTYPES:
            raise WireError(f"arrays of dtype {a.dtype.name} cannot be sent")
        if a.ndim == 0 and isinstance(value, np.generic):
            item = a.item()
            return encode(item, make_ref, _depth + 1)
        return {
            "__ndarray__": a.dtype.name,
            "shape": list(a.shape),
            "data": _blob(a.astype(a.dtype.newbyteorder("<"), copy=False)),
        }
    if isinstance(value, (list, tuple)):
        items = [encode(v, make_ref, _depth + 1) for v in value]
        return items if type(value) is list else {"__tuple__": items}
    if isinstance(value, dict):
        return {"__dict__": [[encode(k, make_ref, _depth + 1), encode(v, make_ref, _depth + 1)] for k, v in value.items()]}
    if isinstance(value, torch.dtype):
        return {"__dtype__": str(value).replace("torch.", "")}
    if make_ref is not None:
        return make_ref(value)
    raise WireError(f"a value of type {type(value).__name__} cannot be sent")


MAX_DECODE_DEPTH = 64  # encode refuses deeper than 50
MAX_DECODE_VALUES = 2_000_000  # values in one message; a long list should be a tensor


def decode(data: Any, resolve_ref=None, room: Room | None = None) -> Any:
    """Inverse of :func:`encode`. ``resolve_ref(ref_id, type_name)`` maps references.

    Whatever ``data`` holds, the only exceptions are :class:`WireError`: nesting deeper than
    ``MAX_DECODE_DEPTH``, more than ``MAX_DECODE_VALUES`` values, a dtype not in the allow-list
    and a tensor whose bytes do not match its shape and dtype are refused before anything is
    allocated for them; and
    :class:`OverBudget`, when what the value takes is more than ``room`` leaves (checked before
    each tensor or array is allocated; ``room.used`` counts it; no room: no limit)."""
    budget = [MAX_DECODE_VALUES]
    try:
        return _decode(data, resolve_ref, 0, budget, room or Room(float("inf")))
    except (WireError, OverBudget):
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, RuntimeError, RecursionError) as exc:
        raise WireError(f"malformed message ({type(exc).__name__})") from None


def _count(budget: list[int], n: int, room: Room) -> None:
    budget[0] -= n
    if budget[0] < 0:
        raise WireError(f"more than {MAX_DECODE_VALUES:,} values in one message")
    room.take(n * VALUE_BYTES)


def _raw_bytes(data: dict, itemsize: int, room: Room) -> np.ndarray:
    """The tensor's bytes, copied into a writable uint8 array of its own, once its shape, dtype and data
    length are known to agree and ``room`` has them (the claimed size is never allocated before)."""
    shape = data["shape"]
    if not isinstance(shape, list) or len(shape) > 32 or not all(type(s) is int and s >= 0 for s in shape):
        raise WireError("malformed tensor shape")
    blob = data["data"]
    if not isinstance(blob, Blob) or not isinstance(blob.view, memoryview):
        raise WireError("malformed tensor data")
    n = itemsize
    for s in shape:
        n *= s
    if blob.view.nbytes != n:
        raise WireError("tensor data does not match its shape")
    room.take(n)
    out = np.empty(n, dtype=np.uint8)
    out[:] = np.frombuffer(blob.view, dtype=np.uint8)
    return out


def _decode_array(data: dict, room: Room) -> Any:
    """A tensor or a NumPy array, its data decoded once, into the array it is returned in."""
    if "__tensor__" in data:
        dtype_name = data["__tensor__"]
        if dtype_name not in _TORCH_DTYPES:
            raise WireError(f"unknown tensor dtype {str(dtype_name)[:40]!r}")
        shape = [int(s) for s in data["shape"]] if isinstance(data.get("shape"), list) else None
        if dtype_name == "bfloat16":
            arr = _raw_bytes(data, 2, room).view("<i2")
            return torch.from_numpy(arr).view(torch.bfloat16).reshape(shape)
        np_dtype = torch.empty(0, dtype=_TORCH_DTYPES[dtype_name]).numpy().dtype
        arr = _raw_bytes(data, np_dtype.itemsize, room).view(np_dtype)
        return torch.from_numpy(arr).reshape(shape)
    name = data["__ndarray__"]
    if name not in _NUMPY_DTYPES:
        raise WireError(f"unknown array dtype {str(name)[:40]!r}")
    dtype = np.dtype(name)
    arr = _raw_bytes(data, dtype.itemsize, room).view(dtype.newbyteorder("<"))
    return arr.astype(dtype, copy=False).reshape(data["shape"])


def _decode(data: Any, resolve_ref, depth: int, budget: list[int], room: Room) -> Any:
    if isinstance(data, str):
        room.take(len(data))
        return data
    if data is None or isinstance(data, (bool, int, float)):
        return data
    if depth > MAX_DECODE_DEPTH:
        raise WireError("message nested too deeply")
    if isinstance(data, list):
        _count(budget, len(data) + 1, room)
        return [_decode(v, resolve_ref, depth + 1, budget, room) for v in data]
    if not isinstance(data, dict):
        raise WireError("malformed message")
    _count(budget, len(data) + 1, room)
    if "__tensor__" in data or "__ndarray__" in data:
        return _decode_array(data, room)
    if "__float__" in data:
        if data["__float__"] not in ("nan", "inf", "-inf"):
            raise WireError("malformed float")
        return float(data["__float__"])
    if "__tuple__" in data:
        items = data["__tuple__"]
        if not isinstance(items, list):
            raise WireError("malformed tuple")
        _count(budget, len(items), room)
        return tuple(_decode(v, resolve_ref, depth + 1, budget, room) for v in items)
    if "__dict__" in data:
        pairs = data["__dict__"]
        if not isinstance(pairs, list):
            raise WireError("malformed dictionary")
        _count(budget, len(pairs), room)
        out = {}
        for pair in pairs:
            if not isinstance(pair, list) or len(pair) != 2:
                raise WireError("malformed dictionary")
            key = _decode(pair[0], resolve_ref, depth + 1, budget, room)
            if isinstance(key, (list, dict)):
                raise WireError("dictionary keys must be plain values")
            out[key] = _decode(pair[1], resolve_ref, depth + 1, budget, room)
        return out
    if "__dtype__" in data:
        name = data["__dtype__"]
        if name not in _TORCH_DTYPES:
            raise WireError(f"unknown dtype {str(name)[:40]!r}")
        return _TORCH_DTYPES[name]
    if "__ref__" in data:
        if resolve_ref is None:
            raise WireError("unexpected object reference")
        if type(data["__ref__"]) is not int:
            raise WireError("malformed object reference")
        return resolve_ref(data["__ref__"], str(data.get("type", "object"))[:100])
    return {str(k): _decode(v, resolve_ref, depth + 1, budget, room) for k, v in data.items()}


def frame(message: dict) -> list[bytes | memoryview]:
    """The pieces of ``message``'s frame, to write in order: the header's length and the header, then the
    bytes of each tensor (the :class:`Blob` views themselves: one message, no copy of its data)."""
    views: list[memoryview] = []
    end = [0]

    def raw(blob: Any) -> dict:
        if not isinstance(blob, Blob) or blob.view is None:
            raise TypeError(f"a {type(blob).__name__} is not part of a message")
        view = memoryview(blob.view).cast("B")
        views.append(view)
        end[0] += view.nbytes
        return {"__raw__": [end[0] - view.nbytes, view.nbytes]}

    header = json.dumps(message, allow_nan=False, default=raw).encode()
    return [struct.pack("<Q", len(header)) + header, *views]


def parse_header(header: bytes | bytearray) -> tuple[Any, list[Blob]]:
    """The message a frame's header holds, each ``{"__raw__": [offset, length]}`` in it a :class:`Blob`
    without its bytes yet, and those blobs in order. A range that does not start where the one before it
    ended (an overlap, a gap, a negative offset or length) is refused here, before anything is read for it;
    :func:`payload_size` then tells the reader how many bytes follow, to size against its limit first."""
    blobs: list[Blob] = []

    def hook(obj: dict) -> Any:
        if "__raw__" not in obj:
            return obj
        ref = obj["__raw__"]
        if len(obj) != 1 or type(ref) is not list or len(ref) != 2 or not all(type(x) is int for x in ref):
            raise WireError("malformed byte range")
        start, size = ref
        if start != payload_size(blobs) or size < 0:
            raise WireError("a byte range that overlaps another, leaves a gap or lies outside the payload")
        blobs.append(Blob(None, start, size))
        return blobs[-1]

    try:
        return json.loads(header, object_hook=hook), blobs
    except (ValueError, RecursionError):
        raise WireError("a message header that is not valid JSON") from None


def payload_size(blobs: list[Blob]) -> int:
    """How many payload bytes follow a header whose blobs (from :func:`parse_header`) these are."""
    return blobs[-1].start + blobs[-1].size if blobs else 0


def attach(blobs: list[Blob], payload: bytearray) -> None:
    """Give each blob its range of the payload read after the header (views: no copy until decode)."""
    if len(payload) != payload_size(blobs):
        raise WireError("a payload that does not match its header")
    view = memoryview(payload)
    for blob in blobs:
        blob.view = view[blob.start : blob.start + blob.size]


def write_message(stream: BinaryIO, message: dict) -> None:
    for piece in frame(message):
        stream.write(piece)
    stream.flush()


def read_message(stream: BinaryIO) -> dict:
    (size,) = struct.unpack("<Q", _read_exact(stream, 8))
    if size > MAX_MESSAGE_BYTES:
        raise WireError(f"message of {size} bytes is larger than the limit")
    message, blobs = parse_header(_read_exact(stream, size))
    if size + payload_size(blobs) > MAX_MESSAGE_BYTES:
        raise WireError(f"message of {size + payload_size(blobs)} bytes is larger than the limit")
    attach(blobs, _read_exact(stream, payload_size(blobs)))
    if not isinstance(message, dict):
        raise WireError("malformed message")
    return message


def _read_exact(stream: BinaryIO, n: int) -> bytearray:
    """``n`` bytes, read into one buffer (no chunks joined: a second copy of a tensor's bytes)."""
    buffer = bytearray(n)
    view = memoryview(buffer)
    done = 0
    while done < n:
        got = stream.readinto(view[done:])
        if not got:
            raise EOFError("the other side closed the connection")
        done += got
    view.release()
    return buffer
