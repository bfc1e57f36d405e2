"""Untrusted bytes are read behind a bound, and a class-wide step is per student (issue 49).

Each attack beside its honest twin. The grader's readers of a student's bytes (the notebook's conversion, the
banned-name scan and its reference map, the import policy, PrairieLearn's syntax check, the similarity's
canonical form) run in a child of their own (``autograder/grading/bounded.py``): whatever the bytes make them do
is the upload's problem (ungradable with the reason, or a notebook cell left out), never an internal error nor
the grader's memory. The red team's findings: a 5,000-digit ``execution_count`` (an internal error on Gradescope,
and grade-all never wrote report.html); a null byte in a cell (graded on Python 3.11, a ValueError on 3.10); 8,000
``print(i)`` lines (260 s of CPU: quadratic); a 1 MB list literal in a notebook or a .py (the grader at 836 MB of
a 768 MB container) and a 3 MB one on PrairieLearn (1.4-1.7 GB); a copy with a no-op after every statement and its
names in parentheses (no run shared with its original: never listed). The same attacks graded whole, beside
their honest baselines, through every entry point: tests/test_attack_matrix.py (make proofs).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from attack_uploads import BIG_LIST, notebook, padded
from conftest import KIT, reference_source
from test_similarity import ATTENTION, _write, renamed_copy, student_file

from autograder.catalogue import read_catalogue
from autograder.cohort import similarity
from autograder.cohort.similarity import SimilaritySettings, canonical, load_settings, measure
from autograder.grading.bounded import Unreadable, bounded
from autograder.grading.notebook_upload import notebook_module
from autograder.grading.submission import UnpackBudget, find_submission_file
from autograder.platforms.prairielearn import _has_syntax_error


def _in_a_process(code: str, python: str = sys.executable) -> dict:
    """``code`` run in a fresh interpreter (the kit on its path), which prints one JSON line last: that line,
    with the process's own peak RSS in MB (``maxrss_mb``)."""
    wrapped = (
        code
        + "\nimport resource as _r\n_out['maxrss_mb'] = _r.getrusage(_r.RUSAGE_SELF).ru_maxrss / 1024\nprint(json.dumps(_out))\n"
    )
    proc = subprocess.run(
        [python, "-c", "import json\n_out = {}\n" + wrapped],
        cwd=KIT,
        env={**os.environ, "PYTHONPATH": str(KIT)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the bound itself --------------------------------------------------------------------------------------------


def _allocate() -> int:
    return len(bytearray(600 * 2**20))


def _spin() -> None:
    while True:
        pass


def _raise() -> None:
    raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")


def test_bounded_returns_a_value_and_says_why_it_has_none():
    assert bounded(lambda a, b: {"sum": a + b}, 2, 3) == {"sum": 5}
    with pytest.raises(Unreadable, match="too much memory") as memory:
        bounded(_allocate)
    with pytest.raises(Unreadable, match="4300 digits") as raised:
        bounded(_raise)
    started = time.monotonic()
    with pytest.raises(Unreadable, match="too long") as spun:
        bounded(_spin, cpu=1, wall=20)
    assert time.monotonic() - started < 20
    assert raised.value.raised == "ValueError" and "is too large" in memory.value.said() and "too long" in spun.value.said()
    assert bounded(lambda: os.getpid()) != os.getpid(), "run in a child of its own"


def _write_every_page(buffer: bytearray) -> int:
    for at in range(0, len(buffer), 4096):
        buffer[at] = 1
    time.sleep(0.3)  # held while the grader looks
    return len(buffer)


def test_bounded_counts_the_pages_a_child_holds_alone_not_only_its_address_space():
    """Writing to memory it inherited grows no address space: each page it writes becomes its own (copy on write)."""
    inherited = bytearray(64 * 2**20)
    inherited[::4096] = b"\1" * len(inherited[::4096])  # resident in the grader, shared with the child at the fork
    assert bounded(_write_every_page, inherited[: 8 * 2**20], memory=32 * 2**20) == 8 * 2**20
    with pytest.raises(Unreadable, match="too much memory"):
        bounded(_write_every_page, inherited, memory=32 * 2**20)


# -- 1. a number no reader expected ------------------------------------------------------------------------------


def test_a_5000_digit_execution_count_converts_as_its_honest_twin(tmp_path):
    """json.loads raised a plain ValueError (no JSONDecodeError) for it: Gradescope said "internal error" (0 for a
    correct notebook), PrairieLearn blamed the grader, and grade-all stopped before report.html, at every re-run."""
    honest, attack = notebook(reference_source("attention")), notebook(reference_source("attention"), execution_count="7" * 5000)
    assert notebook_module(attack, "attention.ipynb", "attention") == notebook_module(honest, "attention.ipynb", "attention")
    for name, raw in (("honest", honest), ("attack", attack)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "attention.ipynb").write_bytes(raw)
        found, note = find_submission_file(tmp_path / name, "attention.py", tmp_path / name, UnpackBudget())
        assert found.read_text().count("def softmax") == 1 and "graded the code cells" in note


@pytest.mark.parametrize("cell", ["X = " + "1" * 5000, "import attention\nprint(attention.softmax)\n" + "\0"])
def test_a_cell_no_reader_can_read_is_left_out_and_the_others_graded(cell):
    extracted = notebook_module(notebook(reference_source("attention"), cell), "attention.ipynb", "attention")
    assert "def softmax" in extracted.source and any(d.startswith("cell 2 (not Python") for d in extracted.dropped)


# -- 2. the same on Python 3.10 as on 3.11 -----------------------------------------------------------------------

_CONVERT = """
import sys
from autograder.grading.notebook_upload import notebook_module
extracted = notebook_module(bytes.fromhex({raw!r}), "attention.ipynb", "attention")
_out.update(source=extracted.source, dropped=extracted.dropped, version=sys.version_info[:2])
"""


def _python_310() -> str | None:
    for python in (os.path.expanduser("~/.pyenv/versions/3.10.13/bin/python"), shutil.which("python3.10")):
        try:
            if python and subprocess.run([python, "-c", "import sys; assert sys.version_info[:2] == (3, 10)"]).returncode == 0:
                return python
        except OSError:
            continue
    return None


def test_a_null_byte_in_a_cell_converts_the_same_on_python_3_10_and_3_11():
    """Python 3.11's parser calls a null byte a SyntaxError, 3.10's a ValueError: the notebook graded on one and was
    an internal error on the other. Now the cell is left out on both, and said; the honest twin (no null) is kept."""
    python_310 = _python_310()
    if python_310 is None:
        pytest.skip("no Python 3.10 interpreter here (pyenv install 3.10.13)")
    raw = notebook(reference_source("attention"), "EPS = 1e-9\nNAME = 'a\0b'")
    honest = notebook(reference_source("attention"), "EPS = 1e-9\nNAME = 'ab'")
    seen = [_in_a_process(_CONVERT.format(raw=r.hex()), python) for python in (sys.executable, python_310) for r in (raw, honest)]
    assert [tuple(s["version"]) for s in seen] == [tuple(sys.version_info[:2])] * 2 + [(3, 10)] * 2
    ours, honest_ours, theirs, honest_theirs = seen
    assert (ours["source"], ours["dropped"]) == (theirs["source"], theirs["dropped"])
    assert ours["dropped"] == ["cell 2 (not Python: source code cannot contain null bytes)"] and "EPS" not in ours["source"]
    assert honest_ours["source"] == honest_theirs["source"] and "EPS = 1e-9" in honest_ours["source"]


# -- 3. linear conversion ----------------------------------------------------------------------------------------


def _convert_seconds(lines: int) -> float:
    raw = notebook(reference_source("attention"), "\n".join(f"print({i})" for i in range(lines)))
    started = time.process_time()  # CPU time: the machine's other load does not count
    extracted = notebook_module(raw, "attention.ipynb", "attention")
    assert len(extracted.dropped) == lines and "def softmax" in extracted.source
    return time.process_time() - started


def test_a_cell_of_30000_statements_converts_in_linear_time():
    """ast.get_source_segment split the whole cell again for every statement left out, and a set of names was
    rebuilt for every name read: 8,000 `print(i)` lines took 260 s (30,000: an hour). Now 1.6 s and 6.5 s."""
    small = min(_convert_seconds(3_000) for _ in range(2))
    large = _convert_seconds(30_000)
    assert large < 25 * small + 1.0, f"3,000 lines {small:.2f} s, 30,000 lines {large:.2f} s: not linear"
    assert large < 60, f"30,000 lines took {large:.0f} s of CPU"


# -- 4. memory: a huge literal -----------------------------------------------------------------------------------

_READERS = """
from pathlib import Path
import tempfile
from autograder.grading.bounded import Unreadable, read_source
from autograder.grading.seam import RemoteStudent
from autograder.grading.submission import SubmissionProblem, UnpackBudget, find_submission_file
import resource
_out["base_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # torch imported (the seam's)
folder = Path({folder!r})
try:
    found, _ = find_submission_file(folder / "attention.ipynb", "attention.py", Path(tempfile.mkdtemp()), UnpackBudget())
    _out["notebook"] = found.read_text().count("def ")
except SubmissionProblem as exc:
    _out["notebook"] = str(exc)
source = (folder / "attention.py").read_text()
try:
    _out["scan"] = sorted(read_source(source, "attention.py", ["torch.exp"])[2])
except Unreadable as exc:
    _out["scan"] = exc.said()
student = RemoteStudent("attention", folder / "attention.py")
student._used = {{"scaled_dot_product_attention"}}
_out["names_used"] = sorted(student.names_used())
_out["source_uses"] = student.source_uses("softmax", ("torch.exp",))
"""


def _honest_megabyte() -> str:
    """1 MB of honest code: the reference, then its functions 250 times over, each copy named apart."""
    reference = reference_source("attention")
    body = reference.replace("from __future__ import annotations\n", "")
    names = r"\b(softmax|scaled_dot_product_attention|causal_mask|padding_mask)\b"
    return reference + "".join(re.sub(names, rf"\1_{i}", body) for i in range(250))


def test_a_megabyte_literal_is_refused_and_the_grader_stays_small(tmp_path):
    """A 1 MB list literal, in a notebook and in a .py: the grader parsed its 470 MB AST itself (conversion,
    banned-name scan, reference map). Now each reader runs in a child limited to 150 MB more than the grader: the
    upload is refused with the reason, the grader's own peak stays where its honest twin's is."""
    seen = {}
    for name, source in (("honest", _honest_megabyte()), ("attack", reference_source("attention") + BIG_LIST)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "attention.py").write_text(source)
        (folder / "attention.ipynb").write_bytes(notebook(source))
        seen[name] = _in_a_process(_READERS.format(folder=str(folder)))
    honest, attack = seen["honest"], seen["attack"]
    assert honest["notebook"] > 1000 and "softmax_3" in honest["scan"] and honest["source_uses"] is True
    assert honest["names_used"] == ["scaled_dot_product_attention", "softmax"]
    assert "attention.ipynb is too large for the grader to read (it needs too much memory" in attack["notebook"]
    assert attack["scan"].startswith("is too large for the grader to read")
    assert attack["names_used"] == ["scaled_dot_product_attention"] and attack["source_uses"] is False
    grew = {name: round(s["maxrss_mb"] - s["base_mb"]) for name, s in seen.items()}
    assert grew["attack"] < 60 and grew["honest"] < 60, f"the reading process grew by {grew} MB (the attack's: 470 MB before)"


def test_prairielearn_reads_no_file_grading_refused_as_too_large(tmp_path):
    """PrairieLearn's syntax check read the whole upload (3 MB, refused by grading as over 1 MB) and parsed it in the
    grader: 1.4-1.7 GB. Now a file over the limit is never read, and one under it is parsed in a bounded child."""
    files = {
        "huge": reference_source("attention") + "BIG = [" + ",".join(["0"] * 1_500_000) + "]\n",
        "literal": reference_source("attention") + BIG_LIST,
        "broken": reference_source("attention") + "\ndef broken(:\n",
        "honest": reference_source("attention"),
    }
    for name, source in files.items():
        (tmp_path / f"{name}.py").write_text(source)
    code = "from pathlib import Path\nfrom autograder.platforms.prairielearn import _has_syntax_error\n"
    code += "import resource as _r0\n_out['base_mb'] = _r0.getrusage(_r0.RUSAGE_SELF).ru_maxrss / 1024\n"
    code += "".join(f"_out[{n!r}] = _has_syntax_error(Path({str(tmp_path / f'{n}.py')!r}))\n" for n in files)
    seen = _in_a_process(code)
    assert {n: seen[n] for n in files} == {"huge": False, "literal": False, "broken": True, "honest": False}
    grew = seen["maxrss_mb"] - seen["base_mb"]  # the entry point's own imports (torch among them) are its baseline
    assert grew < 60, f"the PrairieLearn entry point's check grew its process by {grew:.0f} MB"
    assert _has_syntax_error(tmp_path / "broken.py") and not _has_syntax_error(tmp_path / "nothing.py")


# -- 5. similarity: a canonical form, each student read on their own ---------------------------------------------


def _cohort() -> dict[str, str]:
    entries = read_catalogue(ATTENTION, "variant") + read_catalogue(ATTENTION, "corpus")
    files = {e.name: student_file(ATTENTION, e.code) for e in entries}
    files["copied"] = renamed_copy(files["loops"], seed=7)
    files["padded"] = padded(files["copied"])
    return files


def test_canonical_form_drops_what_does_nothing_and_keeps_what_runs():
    assert canonical("x = (a)\n(x)\npass\nx = x\n'doc'\n...\nf((x))\ny = (yield)\n") == "x = a\nf(x)\ny = (yield)\n"
    assert canonical("def f():\n    '''doc'''\n    pass\n") == "def f():\n    pass\n"
    assert canonical("def broken(:\n") is None


def test_a_padded_copy_is_listed_with_its_original_as_the_plain_copy_is(tmp_path):
    """Before: the renamed copy of `loops` scored 0.90 with it; the same copy padded (a no-op after every statement,
    every read name in parentheses) shared no run with it and was never listed. Now both score the same (0.86)."""
    files = _cohort()
    compile(files["padded"], "padded.py", "exec")
    threshold = load_settings().threshold
    result = measure(ATTENTION, _write(tmp_path, files), SimilaritySettings(threshold=threshold, top=10))
    scores = {frozenset((p.a, p.b)): p.score for p in result.pairs}
    plain, disguised = scores.get(frozenset(("loops", "copied"))), scores.get(frozenset(("loops", "padded")))
    assert plain is not None and disguised is not None and abs(plain - disguised) < 0.02, (plain, disguised)
    honest = [p.score for p in result.pairs if not {p.a, p.b} & {"copied", "padded"}]
    assert not honest, f"distinct students listed: {honest}"
    assert not result.skipped and not result.unread


def _raises_for(sid: str):
    original = similarity.graded_source

    def graded_source(assignment, upload):
        if Path(upload).stem == sid:
            raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")
        return original(assignment, upload)

    return graded_source


def test_one_unreadable_upload_is_said_on_its_own_row_and_the_others_compared(tmp_path, monkeypatch):
    """graded_source let a plain ValueError escape (the 5,000-digit notebook): the whole measure stopped, and with it
    grade-all before report.html. Now each file is read on its own; the one that cannot be is said, with why."""
    files = {**_cohort(), "literal": reference_source("attention") + BIG_LIST, "numbers": reference_source("attention")}
    monkeypatch.setattr(similarity, "graded_source", _raises_for("numbers"))
    result = measure(ATTENTION, _write(tmp_path, files), SimilaritySettings(threshold=load_settings().threshold, top=10))
    assert set(result.unread) == {"literal", "numbers"} and set(result.skipped) == {"literal", "numbers"}
    assert "too large for the grader to read" in result.unread["literal"] and "ValueError" in result.unread["numbers"]
    assert {frozenset((p.a, p.b)) for p in result.pairs} >= {frozenset(("loops", "padded")), frozenset(("loops", "copied"))}
