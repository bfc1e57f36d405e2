"""The wire format between the grader and the student's worker process.

Only plain data crosses: None, bools, ints, floats, strings, lists, tuples,
dicts, torch tensors, NumPy arrays and references to objects that stay in the
worker. Messages are JSON with tensors as raw little-endian bytes in base64,
so decoding can never execute code (unlike pickle). Every tensor that comes
back is rebuilt here as a fresh, plain ``torch.Tensor``: a subclass with a
forged ``__torch_function__`` or ``__eq__`` cannot survive the trip.

This module is imported on both sides, so it must not import anything secret.
"""

from __future__ import annotations

import base64
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


def _float_out(x: float) -> Any:
    if math.isnan(x):
        return {"__float__": "nan"}
    if math.isinf(x):
        return {"__float__": "inf" if x > 0 else "-inf"}
    return x


def encode(value: Any, make_ref=None, _depth: int = 0) -> Any:
    """Turn ``value`` into JSON-able data. ``make_ref(obj)`` handles other objects."""
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
        data = t.numpy().tobytes() if dtype != "bfloat16" else t.view(torch.int16).numpy().tobytes()
        return {"__tensor__": dtype, "shape": list(t.shape), "data": base64.b64encode(data).decode()}
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
            "data": base64.b64encode(a.astype(a.dtype.newbyteorder("<")).tobytes()).decode(),
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
    ``MAX_DECODE_DEPTH``, more than ``MAX_DECODE_VALUES`` values, and a tensor whose bytes do
    not match its shape and dtype are refused before anything is allocated for them; and
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


_CHUNK = 1 << 22  # base64 characters decoded at a time (a multiple of 4): no second whole copy of the data


def _raw_bytes(data: dict, itemsize: int, room: Room) -> np.ndarray:
    """The tensor's bytes (a writable uint8 array), once its shape, dtype and data length are known to
    agree and ``room`` has them; decoded a chunk at a time into the array that is returned."""
    shape = data["shape"]
    if not isinstance(shape, list) or len(shape) > 32 or not all(type(s) is int and s >= 0 for s in shape):
        raise WireError("malformed tensor shape")
    encoded = data["data"]
    if not isinstance(encoded, str):
        raise WireError("malformed tensor data")
    n = itemsize
    for s in shape:
        n *= s
    if len(encoded) != 4 * ((n + 2) // 3):
        raise WireError("tensor data does not match its shape")
    room.take(n)
    out = np.empty(n, dtype=np.uint8)
    done = 0
    for start in range(0, len(encoded), _CHUNK):
        piece = np.frombuffer(base64.b64decode(encoded[start : start + _CHUNK], validate=True), dtype=np.uint8)
        if done + len(piece) > n:
            raise WireError("tensor data does not match its shape")
        out[done : done + len(piece)] = piece
        done += len(piece)
    if done != n:  # padding inside the data: never hand out the array's uninitialised bytes
        raise WireError("tensor data does not match its shape")
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


def write_message(stream: BinaryIO, message: dict) -> None:
    body = json.dumps(message, allow_nan=False).encode()
    stream.write(struct.pack("<Q", len(body)) + body)
    stream.flush()


def read_message(stream: BinaryIO) -> dict:
    header = _read_exact(stream, 8)
    (size,) = struct.unpack("<Q", header)
    if size > MAX_MESSAGE_BYTES:
        raise WireError(f"message of {size} bytes is larger than the limit")
    message = json.loads(_read_exact(stream, size))
    if not isinstance(message, dict):
        raise WireError("malformed message")
    return message


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    chunks = []
    while n:
        chunk = stream.read(n)
        if not chunk:
            raise EOFError("the other side closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)
