"""A config file read against its schema (:mod:`.config_schema`), refused in words an author can act on.

Why words of our own: msgspec checks every key, type and value, but says ``Expected `array`, got `str` - at
`$.banned``` and stops at a table of free keys (``$.points[...]``). An author needs the file, the key with its
table path (``assignment[name = "decoding"].materail``), the nearest valid key or value, and what to write
instead. So msgspec converts; when it refuses, :func:`_explain` walks the same types down to the first value
they refuse and words it.
"""

from __future__ import annotations

import difflib
import json
import re
from pathlib import Path
from typing import Any, Iterable, Literal, TypeVar, Union, get_args, get_origin

import msgspec

from .config_schema import DATE_OR_TIME, dec_hook, is_table, meta_of, type_text, unwrap

T = TypeVar("T")
Step = Union[str, int]  # a key of a table, or the index of an item of a list
_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


class ConfigError(Exception):
    """An assignment's or the course's sources are inconsistent; the message says how to fix them."""


def nearest_key(key: str, keys: list[str]) -> str:
    """What an unknown key's error suggests: the nearest of ``keys``, or all of them."""
    near = difflib.get_close_matches(key, keys, n=1, cutoff=0.6)
    return f"did you mean {near[0]!r}?" if near else f"the keys here are {', '.join(keys)}"


def convert(data: dict, struct: type[T], path: Path | str, keys_help: str) -> T:
    """``data`` (a parsed TOML file) as ``struct``; anything the schema refuses is a ConfigError naming ``path``,
    the key and what to write (``keys_help``, after an unknown key: where the author reads every key)."""
    try:
        return msgspec.convert(data, struct, dec_hook=dec_hook)
    except msgspec.ValidationError as exc:
        problem = _explain(data, struct, (), data) or f"{exc} (msgspec's words)"
        if problem.startswith("unknown key"):
            problem += f" ({keys_help})"
        raise ConfigError(f"{path}: {problem}") from None


def _accepts(value: Any, tp: Any) -> bool:
    try:
        msgspec.convert(value, tp, dec_hook=dec_hook)
    except msgspec.ValidationError:
        return False
    return True


def _explain(value: Any, tp: Any, path: tuple[Step, ...], root: dict, about: str = "") -> str | None:
    """The first thing ``tp`` refuses in ``value`` (at ``path`` of the file ``root``), in words; None if nothing.
    ``about``: the description of the key it is, or is inside of (an entry of [points] is a test's points)."""
    if _accepts(value, tp):
        return None
    base = unwrap(tp)[0]
    origin, args = get_origin(base), get_args(base)
    if is_table(base) and isinstance(value, dict):
        return _explain_table(value, base, path, root) or _wrong(value, tp, path, root, about)
    if origin is list and isinstance(value, list):
        items: Iterable[tuple[Step, Any]] = enumerate(value)
    elif origin is dict and isinstance(value, dict):
        items = value.items()
    else:
        return _wrong(value, tp, path, root, about)
    item_type = args[0] if origin is list else args[1]
    for step, item in items:
        found = _explain(item, item_type, (*path, step), root, about)
        if found:
            return found
    return _wrong(value, tp, path, root, about)  # the items fit: the whole does not (an empty list where one is needed)


def _explain_table(value: dict, struct: type, path: tuple[Step, ...], root: dict) -> str | None:
    fields = {f.encode_name: f for f in msgspec.structs.fields(struct)}
    for key in value:
        if key not in fields:
            hint = nearest_key(key, sorted(fields))
            text = f"unknown key {_where((*path, key), root)!r}: {hint}{' ' if hint.endswith('?') else '. '}Rename or remove it"
            if path and isinstance(path[-1], int):  # a [[table]]: later lines fall into it until the next header
                header = f"a [[{_where(path[:-1], root)}]]"
            elif path and not hint.endswith("?"):  # no key like it here: perhaps a line meant for another table
                header = f"the [{_where(path, root)}]"
            else:
                return text
            return f"{text}; every line after {header} header belongs to that table, up to the next [header]"
    for key, info in fields.items():
        if info.required and key not in value:
            table = f"[{_where(path, root)}]" if path else "the file"
            if path and isinstance(path[-1], int):
                table = f"[[{_where(path[:-1], root)}]] number {path[-1] + 1}"
            example = meta_of(info.type, "examples") or "..."
            what = meta_of(info.type, "description") or key
            return f"{table} is missing the key {key!r} ({what}); add a line such as {key} = {example}"
    for key, item in value.items():
        found = _explain(item, fields[key].type, (*path, key), root, meta_of(fields[key].type, "description") or "")
        if found:
            return found
    return None


def _wrong(value: Any, tp: Any, path: tuple[Step, ...], root: dict, about: str) -> str:
    """``banned = "torch.softmax" must be a list ... - what banned is; write banned = ["torch.softmax"]``."""
    where, shown, base = _where(path, root), _toml(value), unwrap(tp)[0]
    if get_origin(base) is Literal:
        choices = [str(c) for c in get_args(base)]
        near = difflib.get_close_matches(str(value), choices, n=1, cutoff=0.5)
        hint = f": did you mean {json.dumps(near[0])}?" if near else ""
        return f"{where} = {shown} is not one of {', '.join(json.dumps(c) for c in choices)}{hint} Write one of them"
    text = f"{where} = {shown} must be {meta_of(tp, 'must') or _must(tp, where)}"
    fix = _fix(value, tp, path, root)
    return text + (f" - {about}" if about else "") + (f"; {fix}" if fix else "")


def _must(tp: Any, where: str) -> str:
    """What a value of ``tp`` is, in words: ``a string in double quotes``, ``a table [feedback] with the keys ...``."""
    base = unwrap(tp)[0]
    origin, args = get_origin(base), get_args(base)
    if origin is Union:
        return " or ".join(_must(a, where) for a in args if a is not type(None))
    if origin is list:
        return f"a list, in [ ], of {type_text(args[0])} values"
    if is_table(base):
        keys = ", ".join(f.encode_name for f in msgspec.structs.fields(base))
        return f"a table [{where}] with the keys {keys}"
    text = type_text(tp).replace("integer", "whole number")
    words = {"string": "a string in double quotes", "boolean": "true or false", "date or date-time": DATE_OR_TIME}
    return words.get(text, text if text.startswith("table") else f"a {text}")


def _fix(value: Any, tp: Any, path: tuple[Step, ...], root: dict) -> str:
    """What to write instead: the value in a list, the key under its table, or the key's example."""
    key = next((_key_text(step) for step in reversed(path) if isinstance(step, str)), "")
    base, shown = unwrap(tp)[0], _toml(value)
    if get_origin(base) is list and isinstance(value, str):
        return f"write {key} = [{shown}]"
    if is_table(base) and not isinstance(value, dict):
        table = _where(path, root)
        for info in msgspec.structs.fields(base):
            if _accepts(value, info.type):
                return f"did you mean [{table}] {info.encode_name} = {shown}? Write [{table}] on a line of its own, then {info.encode_name} = {shown}"
        return f"write [{table}] on a line of its own, then its keys under it"
    example = meta_of(tp, "examples")
    return f"write e.g. {key} = {example}" if example and key else ""


def _key_text(key: str) -> str:
    return key if _BARE_KEY.match(key) else json.dumps(key)


def _where(path: tuple[Step, ...], root: dict) -> str:
    """The key's path in TOML's dotted form; an item of a [[table]] is named by its ``name`` when it has one."""
    text, node = "", root
    for step in path:
        if isinstance(step, int):
            item = node[step]
            name = item.get("name") if isinstance(item, dict) else None
            text += f"[name = {json.dumps(name)}]" if isinstance(name, str) else f"[{step}]"
        else:
            text += ("." if text else "") + _key_text(step)
        node = node[step]
    return text


def _toml(value: Any) -> str:
    """A value as the author wrote it (TOML), shortened."""
    if isinstance(value, bool):
        text = str(value).lower()
    elif isinstance(value, str):
        text = json.dumps(value)
    elif isinstance(value, list):
        text = "[" + ", ".join(_toml(v) for v in value) + "]"
    elif isinstance(value, dict):
        text = "{ " + ", ".join(f"{_key_text(str(k))} = {_toml(v)}" for k, v in value.items()) + " }"
    elif hasattr(value, "isoformat"):
        text = value.isoformat()
    else:
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
