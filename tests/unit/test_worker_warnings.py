"""A warning at a line of the student's file names the file as the student knows it, never the staging folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parents[2]


def test_a_warning_names_the_students_file_not_its_staging_folder(tmp_path):
    """The staging folder's name is random: in the feedback's "Your code printed" it made the same
    submission's words differ at every grading (and told the student of a folder they never made)."""
    staged = tmp_path / "kit-stage-x1y2z3" / "embeddings.py"
    staged.parent.mkdir()
    staged.write_text("import warnings\n\n\ndef f():\n    warnings.warn('invalid value', RuntimeWarning)\n\n\nf()\n")
    code = (
        f"import sys; sys.path.insert(0, {str(KIT)!r}); from autograder.worker import server; "
        f"server.Server('embeddings', {str(staged)!r}, None).load(); "
        "import warnings; warnings.warn_explicit('elsewhere', UserWarning, '/srv/other.py', 3)"
    )
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == (
        "embeddings.py:5: RuntimeWarning: invalid value\n"
        "  warnings.warn('invalid value', RuntimeWarning)\n"
        "/srv/other.py:3: UserWarning: elsewhere\n"
    ), proc.stderr
