"""What the worker prints: kept up to a limit, counted beyond it, never blocking the worker."""

from __future__ import annotations

import threading


class OutputCapture:
    """Reads what the worker prints; keeps the first ``limit`` bytes and counts the rest."""

    def __init__(self, stream, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0
        self.total = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream) -> None:
        while True:
            try:
                chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            with self._lock:
                room = self.limit - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
                self.dropped += max(0, len(chunk) - max(room, 0))
                self.total += len(chunk)

    def mark(self) -> int:
        with self._lock:
            return self.total

    def since(self, mark: int, max_chars: int) -> str:
        """What was printed after ``mark`` (as far as it was kept), cut to ``max_chars``."""
        with self._lock:
            text = bytes(self.kept[mark:]).decode("utf-8", "replace") if mark < len(self.kept) else ""
            extra = self.total - mark - len(text.encode("utf-8", "replace"))
        if len(text) > max_chars:
            extra += len(text) - max_chars
            text = text[:max_chars]
        if extra > 0:
            text += f"\n[... {extra} more bytes of output not shown]"
        return text
