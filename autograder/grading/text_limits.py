"""Cutting text to a limit where a reader can stop: the one cutter of feedback and of captured output.

One job: :func:`cut` keeps whole paragraphs, else whole sentences, else whole words (never a word or a
number split), and says how much was left out; :func:`bound_line` and :func:`first_line` keep one line whole
to a word, with "…".
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")


def cut(text: str, limit: int, note: str = "\n… ({n} more characters cut)") -> str:
    """``text`` if it fits in ``limit`` characters, else its longest start that ends a paragraph, a sentence
    or (at worst) a word, within ``limit`` less the note, followed by ``note`` (``{n}``: characters left out)."""
    if len(text) <= limit:
        return text
    room = max(0, limit - len(note.format(n=len(text))))
    head = text[:room]
    for boundary in (head.rfind("\n\n"), _last_sentence_end(head)):
        if boundary >= room // 2:  # a boundary that keeps at least half of what fits
            head = head[:boundary]
            break
    else:
        space = head.rfind(" ") if len(text) > room and not text[room].isspace() else room
        head = head[: space if space > 0 else room]
    head = head.rstrip()
    return head + note.format(n=len(text) - len(head))


def _last_sentence_end(head: str) -> int:
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    return ends[-1] if ends else -1


def bound_line(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters at a word boundary (never mid-word), with "…"."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(" ,;:") + "…"


def first_line(text: str, limit: int = 240) -> str:
    """The first non-blank line of ``text``, bounded (``bound_line``); "failed" when there is none."""
    line = next((x.strip() for x in text.splitlines() if x.strip()), "failed")
    return bound_line(line, limit)
