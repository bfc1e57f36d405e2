"""What the worker prints: kept up to a limit, counted beyond it, never blocking the worker.

A thread empties the pipe while the worker runs (so a flood never blocks it), and every ``mark`` and
``since`` first empties it again in the caller's thread: the worker flushes what it printed before it
answers a request, so everything a call printed is read by the time its answer is, and a test's
"Your code printed" is the same on every machine and under any load.
"""

from __future__ import annotations

import os
import select
import threading


class OutputCapture:
    """Reads what the worker prints; keeps the first ``limit`` bytes and counts the rest."""

    def __init__(self, stream, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0
        self.total = 0
        self._stream = stream  # kept open as long as the capture lives
        self._fd = stream.fileno()
        os.set_blocking(self._fd, False)
        self._closed = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        while not self._closed:
            try:
                ready, _, _ = select.select([self._fd], [], [], 0.5)
            except (OSError, ValueError):
                return
            if ready:
                self._drain()

    def _drain(self) -> None:
        """Read everything the pipe holds now (never waits for more)."""
        with self._lock:
            while not self._closed:
                try:
                    chunk = os.read(self._fd, 65536)
                except BlockingIOError:
                    return
                except OSError:
                    self._closed = True
                    return
                if not chunk:
                    self._closed = True
                    return
                room = self.limit - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
                self.dropped += max(0, len(chunk) - max(room, 0))
                self.total += len(chunk)

    def mark(self) -> int:
        self._drain()
        with self._lock:
            return self.total

    def since(self, mark: int, max_chars: int) -> str:
        """What was printed after ``mark`` (as far as it was kept), cut to ``max_chars``."""
        self._drain()
        with self._lock:
            text = bytes(self.kept[mark:]).decode("utf-8", "replace") if mark < len(self.kept) else ""
            extra = self.total - mark - len(text.encode("utf-8", "replace"))
        if len(text) > max_chars:
            extra += len(text) - max_chars
            text = text[:max_chars]
        if extra > 0:
            text += f"\n[... {extra} more bytes of output not shown]"
        return text
