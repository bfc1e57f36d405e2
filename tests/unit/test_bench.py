"""`make bench`'s timer: memory is read only when asked (its page-map reads cost the timed command CPU)."""

import sys

from autograder.config import KIT_ROOT
from autograder.release.bench import measure


def test_measure_times_a_command_and_reads_its_memory_only_when_asked():
    cmd = [sys.executable, "-c", "import time; x = bytearray(50 * 2**20); time.sleep(0.5)"]
    seconds, peak = measure(cmd, KIT_ROOT, {}, memory=True)
    assert 0.4 < seconds < 10 and peak > 40, (seconds, peak)
    seconds, peak = measure(cmd, KIT_ROOT, {}, memory=False)
    assert 0.4 < seconds < 10 and peak == 0, (seconds, peak)
