"""The entry points' shared pieces (platforms/entry.py): the one assignment of a package, and the last resort
that stops a grading which outlives every deadline with a results file that says so."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from conftest import KIT

from autograder.platforms import entry

SCRIPT = """
import sys, time
from autograder.platforms.entry import last_resort
last_resort(lambda message: open(sys.argv[1], "w").write(message), 0.5)
time.sleep(60)  # a grading that never ends
"""


def test_the_last_resort_writes_its_message_and_stops_the_grading(tmp_path):
    results = tmp_path / "results.txt"
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-c", SCRIPT, str(results)], cwd=KIT, capture_output=True, text=True, timeout=60)
    assert run.returncode == 3, run.stderr[-2000:]
    assert time.monotonic() - started < 30
    assert results.read_text().startswith("Grading ran out of time: it was stopped after 0 s.")
    assert "please tell course staff" in results.read_text()


def test_a_package_with_other_than_one_assignment_is_refused_by_name(monkeypatch):
    monkeypatch.setattr(entry, "list_assignments", lambda root: ["attention", "decoding"])
    with pytest.raises(RuntimeError, match=r"autograder.zip must hold exactly one assignment, found \['attention', 'decoding'\]"):
        entry.the_assignment("autograder.zip")
