"""Issue 49's "done when", as a matrix: each attack beside its honest baseline, through the Gradescope entry,
grade-all and PrairieLearn's entry, with namespaces and where they are refused (``KIT_NO_NAMESPACES=1``).

The attacks (tests/attack_uploads.py): a 5,000-digit ``execution_count``, a cell of 8,000 ``print(i)`` lines, a
1 MB notebook of one 500,000-zero list, a 30 KB zip inflating to a 19 MB notebook, a 1 MB ``.py`` literal, a cell
with a null byte (an innocent student); and, for two other assignments, multihead's ``split_heads`` that raises on
bad shapes and answers anything otherwise, and transformer's dead ``if False: torch.no_grad()`` evidence. For each:
it earns nothing over the same honest code uploaded plainly, costs at most 3x that upload's time, keeps the grader
at most 600 MB (the peak PSS of its own processes, as ``run_watched`` measures, and the largest resident high-water
mark of any one of them), and grade-all exits 0 with report.html and similarity.csv written and every other student
graded, the padded copy listed with its original. One grading per upload and setting on the entries; one grade-all
class per setting holds every attack, the baselines and the copies.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest
from attack_uploads import ATTACKS, BASELINES, TOO_LARGE, Upload, padded
from conftest import KIT, once_per_run, reference_source
from test_attacks import GRADER_MB, check_document, run_watched
from test_attacks_observed import ANSWERS_ANYTHING, MENTIONS_NO_GRAD, NO_GRAD, VALUE_ERROR
from test_attacks_prairielearn import question_tree  # noqa: F401 - the fixture, written once per run
from test_prairielearn import assert_prairielearn_schema
from test_similarity import ATTENTION, renamed_copy, student_file

from autograder.catalogue import read_catalogue
from autograder.cohort.export import find_submissions
from autograder.cohort.similarity import SOURCES, load_settings, measure
from autograder.config import load_assignment
from autograder.release import gradescope_sim, prairielearn_sim
from autograder.release.zips import autograder_files, make_zip
from autograder.sandbox import namespaces_available, running_as_root

pytestmark = [
    pytest.mark.skipif(not running_as_root(), reason="attacks are graded as root, as on Gradescope and CI"),
    pytest.mark.proof,
]

SETTINGS = {"namespaces": {}, "no-namespaces": {"KIT_NO_NAMESPACES": "1"}}
CLASSMATES = ("class-einsum", "class-loops", "class-padded")  # honest students beside the attacks in grade-all
TIMES = 3  # the issue's bound: an attack costs at most 3x its baseline's time
# Points only for what the grader observes: the honest code and the attack, the test key that must not pay the attack.
OBSERVED = {
    "multihead": (ANSWERS_ANYTHING, VALUE_ERROR),
    "transformer": (MENTIONS_NO_GRAD, NO_GRAD),
}


class Graded:
    """One grading: the engine's document, its wall seconds, the grader's peak PSS and its largest resident peak (MB)."""

    def __init__(self, document: dict, seconds: float, pss: float, rss: float, prairielearn: dict | None = None):
        self.document, self.seconds, self.pss, self.rss, self.prairielearn = document, seconds, pss, rss, prairielearn
        self.score, self.kind = document["score"], document["extra_data"]["kind"]

    def __repr__(self) -> str:
        return f"{self.kind} {self.score:g} in {self.seconds:.1f} s, {self.pss:.0f} MB PSS, {self.rss:.0f} MB RSS"


@contextmanager
def resident_peak():
    """The largest VmHWM (peak resident memory) of any root-owned process under this one, sampled until the block
    ends: the bound the issue counts (resident memory of the grader's own process), beside run_watched's PSS."""
    peak, done = [0.0], threading.Event()

    def sample() -> None:
        while not done.wait(0.1):
            for p in psutil.Process().children(recursive=True):
                try:
                    if p.uids().real == 0:
                        status = Path(f"/proc/{p.pid}/status").read_text()
                        peak[0] = max(peak[0], int(re.search(r"VmHWM:\s+(\d+)", status)[1]) / 1024)
                except (psutil.Error, OSError, TypeError):
                    continue

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    try:
        yield peak
    finally:
        done.set()
        watcher.join()


def watched(cmd: list[str], cwd: Path, env: dict) -> tuple[subprocess.CompletedProcess, float, float, float]:
    with resident_peak() as rss:
        result, seconds, pss = run_watched(cmd, cwd=cwd, env=env)
    return result, seconds, pss, rss[0]


def environment(env: dict, setting: str) -> dict:
    if setting == "namespaces" and not namespaces_available():
        pytest.skip("namespaces are not allowed here")
    env = {k: v for k, v in env.items() if k != "KIT_NO_NAMESPACES"}
    return {**env, **SETTINGS[setting]}


def through_gradescope(tree: Path, filename: str, raw: bytes, setting: str) -> Graded:
    """``raw`` uploaded as ``filename`` and graded by run_autograder in a copy of the installed /autograder tree."""
    parent = Path(tempfile.mkdtemp(prefix="kit-matrix-"))
    try:
        parent.chmod(0o755)
        root = parent / "autograder"
        shutil.copytree(tree, root, symlinks=True)
        (root / "submission" / filename).write_bytes(raw)
        env = environment(gradescope_sim.environment(root), setting)
        _, seconds, pss, rss = watched([str(root / "run_autograder")], root, env)
        return Graded(check_document(filename, (root / "results" / "results.json").read_bytes(), None), seconds, pss, rss)
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def through_prairielearn(tree: Path, filename: str, raw: bytes, setting: str) -> Graded:
    """``raw`` uploaded as ``filename`` and graded by PrairieLearn's entrypoint in a simulated /grade."""
    parent = Path(tempfile.mkdtemp(prefix="kit-matrix-pl-"))
    try:
        parent.chmod(0o755)
        root = parent / "grade"
        entrypoint = prairielearn_sim.lay_out(tree, "attention", {filename: raw}, root)
        entrypoint.chmod(0o755)
        env = environment(prairielearn_sim.environment(root), setting)
        result, seconds, pss, rss = watched([str(entrypoint)], root, env)
        assert result.returncode == 0, f"PrairieLearn reads results only after exit 0:\n{result.stdout[-3000:]}"
        prairielearn = json.loads((root / "results" / "results.json").read_bytes().decode("utf-8"))
        assert_prairielearn_schema(prairielearn)
        document = check_document(filename, (root / "results" / "gradescope.json").read_bytes(), None)
        return Graded(document, seconds, pss, rss, prairielearn)
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def assert_nothing_gained(name: str, upload: Upload, attack: Graded, baseline: Graded, seconds: tuple[float, float]) -> None:
    """The attack earns nothing over its baseline (refused with its reason, or graded as the same code), in at most
    3x the baseline's ``seconds`` (attack's, baseline's), the grader within 600 MB."""
    print(f"{name}: attack {attack!r}; baseline {baseline!r}")
    assert baseline.kind == "graded" and baseline.score == 100, f"{name}'s baseline: {baseline!r}"
    if upload.refused:
        assert attack.kind == "ungradable" and attack.score == 0, f"{name}: {attack!r}"
        assert upload.refused in attack.document["output"], attack.document["output"][:500]
    else:
        assert attack.kind == "graded" and attack.score == baseline.score, f"{name}: {attack!r} ({baseline!r})"
    assert "internal error" not in attack.document["output"], attack.document["output"][:500]
    assert seconds[0] <= TIMES * seconds[1], f"{name}: {seconds[0]:.1f} s against its baseline's {seconds[1]:.1f} s"
    assert attack.pss < GRADER_MB and attack.rss < GRADER_MB, f"{name}: the grader at {attack!r}"


def _installed(tmp_path_factory, worker_id, assignment: str) -> Path:
    """An /autograder tree of ``assignment`` after setup.sh, once per test run (conftest's installed_tree, for any)."""

    def install(folder: Path) -> None:
        path = folder / "autograder.zip"
        path.write_bytes(make_zip(autograder_files(load_assignment(assignment, KIT))))
        gradescope_sim.lay_out(path, {}, folder / "autograder")
        env = gradescope_sim.environment(folder / "autograder")
        source = folder / "autograder" / "source"
        setup = subprocess.run(["bash", str(source / "setup.sh")], cwd=source, env=env, capture_output=True)
        assert setup.returncode == 0, setup.stderr[-2000:]

    return once_per_run(tmp_path_factory, worker_id, f"installed-{assignment}", install) / "autograder"


# -- the Gradescope entry and PrairieLearn's: one test per attack and setting, its baseline graded beside it ---------


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("name", list(ATTACKS))
def test_issue_49_attack_through_gradescope(name, setting, installed_tree):
    upload = ATTACKS[name]
    honest = BASELINES[upload.baseline]
    baseline = through_gradescope(installed_tree, honest.filename, honest.build(), setting)
    attack = through_gradescope(installed_tree, upload.filename, upload.build(), setting)
    assert_nothing_gained(name, upload, attack, baseline, (attack.seconds, baseline.seconds))


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("name", list(ATTACKS))
def test_issue_49_attack_through_prairielearn(name, setting, question_tree):  # noqa: F811 - the imported fixture
    upload = ATTACKS[name]
    honest = BASELINES[upload.baseline]
    baseline = through_prairielearn(question_tree, honest.filename, honest.build(), setting)
    attack = through_prairielearn(question_tree, upload.filename, upload.build(), setting)
    assert_nothing_gained(name, upload, attack, baseline, (attack.seconds, baseline.seconds))
    said = attack.prairielearn
    if upload.refused:  # the upload's problem, told as such: no attempt counted, never the grader's blame
        assert said["gradable"] is False and upload.refused in said["message"], said
        assert said["message"].startswith("attention.") and "internal error" not in said["message"], said  # its file named
    else:
        assert said["gradable"] is True and said["score"] == baseline.prairielearn["score"] == 1.0, said["message"]


@pytest.mark.parametrize("assignment", list(OBSERVED))
def test_points_only_for_what_is_observed_through_gradescope(assignment, tmp_path_factory, worker_id):
    """Namespaces on only (here and in grade-all): these attacks are on what pays, which no setting of the sandbox
    changes; the whole matrix would cost 30 s more of make proofs."""
    setting = "namespaces"
    tree = _installed(tmp_path_factory, worker_id, assignment)
    filename, reference = f"{load_assignment(assignment, KIT).module}.py", reference_source(assignment)
    baseline = through_gradescope(tree, filename, reference.encode(), setting)
    attack = through_gradescope(tree, filename, (reference + OBSERVED[assignment][0]).encode(), setting)
    assert_observed(assignment, attack.document, baseline.document)
    assert attack.seconds <= TIMES * baseline.seconds, f"{assignment}: {attack!r} against {baseline!r}"
    assert attack.pss < GRADER_MB and attack.rss < GRADER_MB, f"{assignment}: the grader at {attack!r}"


def assert_observed(assignment: str, attack: dict, baseline: dict) -> None:
    """The attack earns nothing over the reference, and the test it aims at pays it nothing."""
    key = OBSERVED[assignment][1]
    paid = [sum(t["score"] for t in d["tests"] if t["extra_data"]["test"] == key) for d in (attack, baseline)]
    assert baseline["score"] == 100 and attack["score"] <= baseline["score"], (attack["score"], baseline["score"])
    assert paid[0] == 0 < paid[1], f"{assignment}: {key} paid the attack {paid[0]} (the reference {paid[1]})"


# -- grade-all: one class per setting, every attack beside its baselines and the copies -----------------------------


def _class(export: Path) -> None:
    """The baselines, the attacks, and three classmates: a variant (class-loops), its renamed copy padded with no-ops
    and parentheses (class-padded), and another variant (class-einsum). The classmates sort first: grade-all deals
    the jobs in order to its two grader processes, and the first grading of each also loads the suites (3-4 s more),
    so that no attack or baseline pays it."""
    for name, upload in {**BASELINES, **ATTACKS}.items():
        (export / name).mkdir(parents=True)
        (export / name / upload.filename).write_bytes(upload.build())
    variants = {e.name: student_file(ATTENTION, e.code) for e in read_catalogue(ATTENTION, "variant")}
    sources = (variants["einsum"], variants["loops"], padded(renamed_copy(variants["loops"], seed=7)))
    for sid, source in zip(CLASSMATES, sources):
        (export / sid).mkdir()
        (export / sid / "attention.py").write_text(source)


def _grade_all(assignment: str, export: Path, out: Path, setting: str) -> tuple[subprocess.CompletedProcess, float, float]:
    cmd = [sys.executable, "-m", "autograder", "grade-all", assignment, str(export), "--out", str(out), "--jobs", "2"]
    result, _, pss, rss = watched(cmd, KIT, environment(dict(os.environ), setting))
    assert result.returncode == 0, result.stdout[-3000:]
    assert (out / "report.html").is_file() and (out / "similarity.csv").is_file()
    assert pss < GRADER_MB and rss < GRADER_MB, f"a grader at {pss:.0f} MB PSS, {rss:.0f} MB resident"
    return result, pss, rss


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_issue_49_attacks_through_grade_all(setting, tmp_path):
    """An attack's cost in grade-all is its grading (execution_time) and its share of the class-wide step: the
    similarity measure of its file alone, timed here on the files grade-all kept (the issue's prints notebook took 92.6
    s there against its baseline's 0.9)."""
    export, out = tmp_path / "export", tmp_path / "graded"
    _class(export)
    result, pss, rss = _grade_all("attention", export, out, setting)
    graded = {p.stem: json.loads(p.read_text()) for p in (out / "results").glob("*.json")}
    assert set(graded) == {*BASELINES, *ATTACKS, *CLASSMATES}
    for sid in (*BASELINES, *CLASSMATES):  # every other student graded
        assert graded[sid]["extra_data"]["kind"] == "graded" and graded[sid]["score"] == 100, (sid, graded[sid]["output"][:300])
    kept = sorted(sid for sid, d in graded.items() if d["extra_data"]["kind"] == "graded")
    assert sorted(p.stem for p in (out / SOURCES).iterdir()) == kept  # what similarity reads: the files as graded
    settings = load_settings()  # the first share (a classmate's) also loads copydetect
    share = {s.sid: measure(ATTENTION, [s], settings, out / SOURCES).seconds for s in find_submissions(export)}
    for name, upload in ATTACKS.items():
        document, baseline = graded[name], graded[upload.baseline]
        seconds = tuple(graded[sid]["execution_time"] + share[sid] for sid in (name, upload.baseline))
        attack, honest = Graded(document, seconds[0], pss, rss), Graded(baseline, seconds[1], pss, rss)
        assert_nothing_gained(name, upload, attack, honest, seconds)
    pairs = (out / "similarity.csv").read_text(encoding="utf-8-sig").splitlines()
    assert len(pairs) == 2 and {"class-loops", "class-padded"} <= set(pairs[1].split(",")), pairs  # the padded copy listed
    report = (out / "report.html").read_text()  # the .py refused is read again, and said on its own row
    assert re.search(rf'<p class="unread" data-sid="literal_py">Not compared: [^<]*{TOO_LARGE}', report)
    assert "literal_py not compared" in result.stdout
    measured = re.search(r"similarity: .* submissions .*, ([\d.]+) s;", result.stdout)[1]
    print(f"grade-all ({setting}): {pss:.0f} MB PSS, {rss:.0f} MB resident; similarity {measured} s; shares {share}")


@pytest.mark.parametrize("assignment", list(OBSERVED))
def test_points_only_for_what_is_observed_through_grade_all(assignment, tmp_path):
    export, out, module = tmp_path / "export", tmp_path / "graded", load_assignment(assignment, KIT).module
    for sid, source in (
        ("honest", reference_source(assignment)),
        ("attack", reference_source(assignment) + OBSERVED[assignment][0]),
    ):
        (export / sid).mkdir(parents=True)
        (export / sid / f"{module}.py").write_text(source)
    _grade_all(assignment, export, out, "namespaces")
    attack, honest = (json.loads((out / "results" / f"{sid}.json").read_text()) for sid in ("attack", "honest"))
    assert_observed(assignment, attack, honest)
    assert attack["execution_time"] <= TIMES * honest["execution_time"], (attack["execution_time"], honest["execution_time"])
