"""What a call printed is read by the time its answer is: the same "Your code printed" under any load."""

from __future__ import annotations

import os

from autograder.sandbox.capture import OutputCapture


def test_what_was_written_before_since_is_always_there():
    read_end, write_end = os.pipe()
    capture = OutputCapture(os.fdopen(read_end, "rb"), limit=1 << 20)
    try:
        for i in range(500):  # the pump thread alone would miss some of these
            mark = capture.mark()
            os.write(write_end, f"line {i}\n".encode())
            assert capture.since(mark, 1000) == f"line {i}\n"
    finally:
        os.close(write_end)


def test_beyond_the_limit_is_counted_not_kept():
    read_end, write_end = os.pipe()
    capture = OutputCapture(os.fdopen(read_end, "rb"), limit=10)
    os.write(write_end, b"0123456789abcdef")
    assert capture.since(0, 1000) == "0123456789\n[... 6 more bytes of output not shown]"
    os.close(write_end)
