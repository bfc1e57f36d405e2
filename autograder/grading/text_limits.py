"""Cutting text to a limit where a reader can stop: the one cutter of feedback and of captured output.

One job: :func:`cut` keeps whole paragraphs, else whole sentences, else whole words (never a word or a
number split), and says how much was left out.
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
