"""Hostile submissions (the README's threat model): each earns nothing it did not earn honestly,
leaves a valid results file and shows no grader file to the student.

They run through the real Gradescope entry point in a simulated AUTOGRADER_ROOT. The checks
that rely on the unprivileged user run only when the tests run as root (as on Gradescope and CI).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil
import pytest
from conftest import KIT, install_copy, once_per_run, reference_source, stub_source, validate_results

from autograder.release import gradescope_sim
from autograder.sandbox import running_as_root

needs_root = pytest.mark.skipif(not running_as_root(), reason="the user switch needs root (as on Gradescope)")
REFERENCE_MARKER = "# BEGIN SOLUTION"


_TREES: list[Path] = []


@pytest.fixture(scope="module", autouse=True)
def _remove_trees():
    yield
    for parent in _TREES:
        shutil.rmtree(parent, ignore_errors=True)


def tree_root(tmp_path) -> Path:
    """Where the simulated /autograder goes: like Gradescope's, reachable by any user (0755 parents),
    so that only the grader's own 0700 folders stand between student code and the secrets.
    (Outside pytest's 0700 tmp tree; removed when the module's tests end.)"""
    parent = Path(tempfile.mkdtemp(prefix="kit-tree-"))
    _TREES.append(parent)
    parent.chmod(0o755)
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "tree").symlink_to(parent)
    return parent / "autograder"


def run_in_tree(installed_tree, source: str, tmp_path, name="attention.py") -> tuple[dict, str]:
    """Grade ``source`` through run_autograder in a copy of the installed tree (setup.sh ran once for
    the session); ``@ROOT@`` in it becomes the tree's root (the attacker knows Gradescope's layout;
    the worker gets no AUTOGRADER_ROOT variable)."""
    root = tree_root(tmp_path)
    source = source.replace("@ROOT@", str(root))
    install_copy(installed_tree, root, {name: source.encode()})
    proc = gradescope_sim.run_autograder(root)
    document = json.loads((root / "results" / "results.json").read_text())
    validate_results(document)
    return document, proc.stdout + proc.stderr


ATTACKS: dict[str, str] = {}  # name -> source, graded together by the `graded` fixture


def attack(name: str, source: str) -> str:
    ATTACKS[name] = source
    return name


@pytest.fixture(scope="session")
def graded(tmp_path_factory, worker_id) -> dict[str, dict]:
    """Grade every registered attack in one `grade-many` run (real isolated workers, one process),
    once per test run (`once_per_run`: `xdist_group` does not group tests with pytest 9, whose node
    ids xdist 3.8 can no longer tag)."""
    return _read_attacks(once_per_run(tmp_path_factory, worker_id, "attacks", _grade_attacks))


def _grade_attacks(tmp: Path) -> None:
    jobs = []
    for name, source in ATTACKS.items():
        (tmp / name).mkdir()
        (tmp / name / "attention.py").write_text(source)
        jobs.append([str(tmp / name), str(tmp / f"{name}.json")])
    (tmp / "jobs.json").write_text(json.dumps(jobs))
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "grade-many", "attention", str(tmp / "jobs.json")],
        cwd=KIT,
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]


def _read_attacks(tmp: Path) -> dict[str, dict]:
    out = {}
    for name in ATTACKS:
        document = json.loads((tmp / f"{name}.json").read_text())
        validate_results(document)
        out[name] = document
    return out


def feedback_text(document: dict) -> str:
    return document["output"] + "\n".join(t["output"] for t in document["tests"])


STUB = stub_source("attention")
HONEST_STUB_SCORE = 0


def test_reference_and_stub_in_the_gradescope_tree(installed_tree, tmp_path):
    document, _ = run_in_tree(installed_tree, reference_source("attention"), tmp_path / "ref")
    assert document["score"] == 100
    document, _ = run_in_tree(installed_tree, STUB, tmp_path / "stub")
    assert document["score"] == 0


def test_exit_at_import(installed_tree, tmp_path):
    document, _ = run_in_tree(installed_tree, reference_source("attention") + "\nimport os\nos._exit(0)\n", tmp_path)
    assert document["score"] == 0 and "could not be imported" in document["output"]


# Attacks on the grading tree, ``@ROOT@`` its root (also graded through PrairieLearn's entry point:
# tests/test_attacks_prairielearn.py).
FORGED_RESULTS = """
import json, os, signal
root = "@ROOT@"
for path in [root + "/results/results.json", "/autograder/results/results.json"]:
    try:
        with open(path, "w") as f:
            json.dump({"score": 100, "tests": []}, f)
    except OSError:
        pass
for sig_target in (os.getppid(),):
    try:
        os.killpg(os.getpgid(sig_target), signal.SIGKILL)
    except OSError:
        pass
    try:
        os.kill(sig_target, signal.SIGKILL)
    except OSError:
        pass
"""

GRADER_FILES = """
import os, sys, inspect
found = [name for name in sys.modules if "reference" in name or "autograder" in name]
found += [frame.filename for frame in inspect.stack()]
leaks = []
root = "@ROOT@"
for base in (root, "/autograder"):
    for dirpath, dirnames, filenames in os.walk(base):
        if "submission" in dirpath:
            continue
        for f in filenames:
            path = os.path.join(dirpath, f)
            try:
                text = open(path).read()
            except Exception:
                continue
            if "BEGIN SOLUTION" in text or "def test_" in text:
                leaks.append("LEAK " + path + "\\n" + text[:1500])
                if "/solutions/" in path and "def softmax" in text:
                    exec(text)

def causal_mask(n):
    print("FOUND", found)
    print("\\n".join(leaks))
    try:
        print(open(os.path.join(root, "source", "assignments", "attention", "assignment.toml")).read())
    except OSError as exc:
        print("no access:", exc)
    return torch.ones(n, n, dtype=torch.bool).triu(1)
"""


@needs_root
def test_forged_results_and_killing_the_grader(installed_tree, tmp_path):
    document, _ = run_in_tree(installed_tree, STUB + FORGED_RESULTS, tmp_path)
    assert document["score"] == HONEST_STUB_SCORE
    assert len(document["tests"]) > 0, "the grader must survive and write real results"


@needs_root
def test_looking_for_the_reference_and_printing_grader_files(installed_tree, tmp_path):
    document, _ = run_in_tree(installed_tree, STUB + GRADER_FILES, tmp_path)
    text = feedback_text(document)
    assert REFERENCE_MARKER not in text and "LEAK" not in text and "[points]" not in text
    causal_points = sum(t["max_score"] for t in document["tests"] if t["name"].startswith("causal_mask"))
    assert document["score"] <= causal_points + 1e-6, "only the honestly written causal_mask may earn points"


@needs_root
def test_rewriting_test_files(installed_tree, tmp_path):
    attack = """
import os, glob
root = "@ROOT@"
for path in glob.glob(root + "/source/assignments/*/tests/*/*.py"):
    try:
        open(path, "w").write("def test_pass():\\n    pass\\n")
    except OSError:
        pass
"""
    document, _ = run_in_tree(installed_tree, STUB + attack, tmp_path)
    assert document["score"] == 0
    hidden = (tmp_path / "tree").resolve() / "autograder" / "source" / "assignments" / "attention" / "tests" / "hidden"
    assert all("def test_pass" not in p.read_text() for p in hidden.glob("*.py"))


def test_extra_files_in_the_upload_have_no_effect(installed_tree, tmp_path):
    root = tree_root(tmp_path)
    evil = {
        "attention.py": STUB.encode(),
        "conftest.py": b"import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    out = yield\n    out.get_result().outcome = 'passed'\n",
        "sitecustomize.py": b"import os\nos._exit(0)\n",
        "torch.py": b"raise SystemExit('shadowed torch')\n",
        "numpy.py": b"raise SystemExit('shadowed numpy')\n",
        "pytest.py": b"raise SystemExit('shadowed pytest')\n",
    }
    install_copy(installed_tree, root, evil)
    gradescope_sim.run_autograder(root)
    document = json.loads((root / "results" / "results.json").read_text())
    validate_results(document)
    assert document["score"] == 0 and len(document["tests"]) > 0


@needs_root
def test_worker_runs_as_the_unprivileged_user(installed_tree, tmp_path):
    attack = (
        "\nimport os\ndef causal_mask(n):\n    print('UID', os.getuid())\n    return torch.ones(n, n, dtype=torch.bool).triu(1)\n"
    )
    document, _ = run_in_tree(installed_tree, reference_source("attention") + attack, tmp_path)
    assert "UID 0" not in feedback_text(document)
    assert "UID" in feedback_text(document)


# ---- attacks graded together through grade-many (the same isolated worker, one grader process) ----

MONKEYPATCH = attack(
    "monkeypatch",
    STUB
    + """
import numpy, numpy.testing, torch, torch.testing, math
torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
numpy.testing.assert_allclose = lambda *a, **k: None
numpy.allclose = lambda *a, **k: True
math.isclose = lambda *a, **k: True
""",
)
LIAR = attack(
    "liar",
    STUB
    + """
class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return True
    def __eq__(self, other):
        return True

def softmax(x, dim=-1):
    return torch.zeros_like(x).as_subclass(Liar)

def scaled_dot_product_attention(q, k, v, mask=None):
    return (torch.zeros(q.shape[:-1] + v.shape[-1:]).as_subclass(Liar), torch.zeros(q.shape[:-1] + k.shape[-2:-1]).as_subclass(Liar))
""",
)
FLOOD = attack("flood", reference_source("attention") + "\nimport sys\nfor _ in range(100000):\n    print('x' * 100)\n")
HANG = attack("hang", reference_source("attention") + "\ndef causal_mask(n):\n    while True:\n        pass\n")
MEMORY = attack(
    "memory",
    reference_source("attention")
    + "\ndef causal_mask(n):\n    hog = [bytearray(50 * 1024 * 1024) for _ in range(100)]\n    return hog\n",
)
SKIP = attack(
    "skip",
    STUB
    + """
import pytest
def softmax(x, dim=-1):
    pytest.skip("nothing to see")
def scaled_dot_product_attention(q, k, v, mask=None):
    pytest.exit("done", returncode=0)
""",
)
FORK = attack(
    "fork",
    reference_source("attention")
    + """
import os, time, ctypes
def causal_mask(n):
    started = 0
    for _ in range(60):
        try:
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    ctypes.CDLL(None).prctl(15, b"kitforkbomb", 0, 0, 0)  # PR_SET_NAME, for the test to look for
                    time.sleep(600)
                os._exit(0)
            started += 1
        except OSError:
            break
    print("STARTED", started)
    time.sleep(5)
    return torch.ones(n, n, dtype=torch.bool).triu(1)
""",
)


def lost_functions(document: dict) -> set[str]:
    return {t["name"].split(":")[0] for t in document["tests"] if t["score"] < t["max_score"]}


@pytest.mark.proof  # the attacks graded together (about 30 s): `make proofs`, keeping `make test` in its 4 minutes
def test_monkeypatching_comparisons_in_the_worker(graded):
    assert graded[MONKEYPATCH]["score"] == 0


@pytest.mark.proof  # the attacks graded together (about 30 s): `make proofs`, keeping `make test` in its 4 minutes
def test_tensor_subclass_that_makes_comparisons_pass(graded):
    assert graded[LIAR]["score"] == 0


@pytest.mark.proof  # the attacks graded together (about 30 s): `make proofs`, keeping `make test` in its 4 minutes
def test_flooding_stdout(graded):
    document = graded[FLOOD]
    assert document["score"] == 100
    assert len(json.dumps(document)) < 100_000, "results must stay under Gradescope's output limit"


@pytest.mark.proof  # the attacks graded together (about 30 s): `make proofs`, keeping `make test` in its 4 minutes
def test_infinite_loop_costs_only_that_function(graded):
    document = graded[HANG]
    assert "causal_mask" in lost_functions(document) and "softmax" not in lost_functions(document)
    assert any("time limit" in t["output"] for t in document["tests"])


@pytest.mark.proof  # the attacks graded together (about 30 s): `make proofs`, keeping `make test` in its 4 minutes
def test_memory_bomb_costs_only_that_function(graded):
    lost = lost_functions(graded[MEMORY])
    assert "causal_mask" in lost and "softmax" not in lost


@pytest.mark.proof  # the attacks graded together (about 30 s): `make proofs`, keeping `make test` in its 4 minutes
def test_skip_and_exit_from_student_code_do_not_pass_tests(graded):
    assert graded[SKIP]["score"] == 0


@pytest.mark.proof  # the attacks graded together (about 30 s): `make proofs`, keeping `make test` in its 4 minutes
def test_bounded_fork_bomb_and_leftover_processes(graded):
    lost = lost_functions(graded[FORK])
    assert "causal_mask" in lost and "softmax" not in lost
    text = "".join(t["output"] for t in graded[FORK]["tests"])
    assert "STARTED" in text or "processes" in text or "MB of memory" in text, "the attack should have started processes"
    alive = [
        p.pid
        for p in psutil.process_iter(["name", "status"])
        if p.info["name"] == "kitforkbomb" and p.info["status"] != psutil.STATUS_ZOMBIE
    ]
    assert not alive, "every process the student started must be gone"


@needs_root
def test_graders_with_different_temp_folders_take_different_slots(tmp_path):
    """Two graders started with different TMPDIRs used to lock slots in different folders, take the same
    student user, and kill (or be charged with) each other's workers; a slot whose user runs processes is
    skipped too."""
    from autograder.sandbox.users import student_user, student_user_name

    take = [
        sys.executable,
        "-c",
        "import sys; from autograder.sandbox.users import reserve_slot; print(reserve_slot(), flush=True); sys.stdin.read()",
    ]
    held = []

    def reserve(temp: Path) -> int:
        temp.mkdir(exist_ok=True)
        env = {**os.environ, "TMPDIR": str(temp), "PYTHONPATH": str(KIT)}
        proc = subprocess.Popen(take, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        held.append(proc)
        return int(proc.stdout.readline())

    try:
        first, second = reserve(tmp_path / "a"), reserve(tmp_path / "b")
        assert first != second
        busy = max(first, second) + 1
        squatter = subprocess.Popen(["sleep", "60"], user=student_user(student_user_name(busy)).pw_uid)
        try:
            assert reserve(tmp_path / "c") not in (first, second, busy), "a slot whose user runs processes was taken"
        finally:
            squatter.kill()
            squatter.wait()
    finally:
        for proc in held:
            proc.stdin.close()
            proc.wait()
