"""`pytest -m <function>` in the student's folder, as the handouts say, selects that function's public tests.

Every public test carries the marker of the function it grades: the function it declares
(``@pytest.mark.grades("softmax")``, which also groups it in the grader's per-function summary and in
the Otter checks), added by the student's conftest.py at collection and registered in the student's
pytest.ini. Collected for real: each student folder as release writes it, in a temporary directory, with
its conftest.py and pytest.ini, `--strict-markers`, and the handout's own `-m` example. One Python process
collects the six folders one after the other (one torch import: a few seconds).
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.config import KIT_ROOT, list_assignments, load_assignment
from autograder.release.notebooks import public_tests_by_function
from autograder.release.student_folder import handout_text, student_files

NAMES = list_assignments(KIT_ROOT)
EXAMPLE = re.compile(r"`pytest (-[mk]) ([A-Za-z_][A-Za-z0-9_]*)`")

COLLECT = '''
import json, os, sys
import pytest


class Probe:
    """Every collected test with its markers (before -m deselects), then what -m kept."""

    def __init__(self):
        self.items, self.selected = {}, []

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items):
        self.items = {item.nodeid: sorted({m.name for m in item.iter_markers()}) for item in items}

    def pytest_collection_finish(self, session):
        self.selected = [item.nodeid for item in session.items]


out = {}
for run in json.loads(sys.argv[1]):
    os.chdir(run["folder"])
    probe = Probe()
    code = pytest.main(["--collect-only", "-q", "--strict-markers", "-p", "no:cacheprovider", *run["args"]], plugins=[probe])
    out.setdefault(run["folder"], []).append({"args": run["args"], "code": int(code), "items": probe.items,
                                              "selected": probe.selected})
with open(sys.argv[2], "w") as f:
    json.dump(out, f)
'''


def registered_markers(name: str) -> dict[str, str]:
    """{marker: description} from the pytest.ini of assignment ``name``'s student folder (generated per assignment)."""
    from autograder.release.student_folder import student_pytest_ini

    text = student_pytest_ini(load_assignment(name, KIT_ROOT))
    block = re.search(r"^markers =\n((?:[ \t]+.*\n?)+)", text, re.MULTILINE)
    assert block, "the student's pytest.ini registers no markers"
    markers = {name.strip(): about.strip() for name, about in (line.split(":", 1) for line in block.group(1).splitlines())}
    assert "grades(function)" in markers, "the marker each test declares its function with is registered"
    assert "callers_apart" in markers, "the marker of a test whose callers are graded around it is registered"
    return {name: about for name, about in markers.items() if "(" not in name and name != "callers_apart"}


def examples(name: str) -> list[tuple[str, str]]:
    """The `pytest -m <function>` (or -k) examples the student's README gives."""
    return EXAMPLE.findall(handout_text(load_assignment(name, KIT_ROOT)))


@pytest.fixture(scope="module")
def collected(tmp_path_factory) -> dict[str, list[dict]]:
    """{assignment: [one collection per handout example]}, each in the student's folder."""
    root = tmp_path_factory.mktemp("student")
    runs = []
    for name in NAMES:
        folder = root / name
        for rel, data in student_files(load_assignment(name, KIT_ROOT)).items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(data)
        runs += [{"folder": str(folder), "args": [flag, function]} for flag, function in examples(name)]
    (root / "collect.py").write_text(COLLECT)
    out = root / "collected.json"
    proc = subprocess.run([sys.executable, str(root / "collect.py"), json.dumps(runs), str(out)], cwd=root,
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0 and out.is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return {Path(folder).name: found for folder, found in json.loads(out.read_text()).items()}


@pytest.mark.parametrize("name", NAMES)
def test_the_handout_gives_a_pytest_m_example(name):
    found = examples(name)
    assert ("-m", next(iter(public_tests_by_function(load_assignment(name, KIT_ROOT))))) in found, found


@pytest.mark.parametrize("name", NAMES)
def test_the_handouts_example_selects_that_functions_public_tests(name, collected):
    groups = public_tests_by_function(load_assignment(name, KIT_ROOT))
    for run in collected[name]:
        flag, function = run["args"]
        assert run["code"] == 0, f"{name}: `pytest {flag} {function}` ended with exit code {run['code']}"
        selected = {nodeid.rsplit("::", 1)[1] for nodeid in run["selected"]}
        assert selected, f"{name}: the handout's `pytest {flag} {function}` selects no public test"
        assert selected == {test for _, test, _ in groups[function]}, (name, flag, function, selected)


@pytest.mark.parametrize("name", NAMES)
def test_every_public_test_carries_the_marker_of_the_function_it_grades(name, collected):
    registered = registered_markers(name)
    graded = {test: function for function, tests in public_tests_by_function(load_assignment(name, KIT_ROOT)).items()
              for _, test, _ in tests}  # fmt: skip
    items = collected[name][0]["items"]
    assert {nodeid.rsplit("::", 1)[1] for nodeid in items} == set(graded), f"{name}: the folder collects other tests"
    for nodeid, marks in items.items():
        functions = [m for m in marks if m in registered]
        test = nodeid.rsplit("::", 1)[1]
        assert functions == [graded[test]], (
            f"{name}: {test} grades {graded[test]} (its grades marker), so it carries exactly that function's marker "
            f"(it has {functions or 'none'}; the student's conftest.py adds it from the grades marker)"
        )


@pytest.mark.parametrize("name", NAMES)
def test_the_student_pytest_ini_registers_each_graded_function_once_and_says_where(name):
    """Each assignment's pytest.ini registers exactly its own functions: every function of the stub and every
    function a public test names, nothing of another assignment (so adding one never changes another's zip)."""
    from autograder.release.functions import stub_functions

    assignment = load_assignment(name, KIT_ROOT)
    registered = registered_markers(name)
    wanted = set(stub_functions(assignment.solution.read_text())) | set(public_tests_by_function(assignment))
    assert set(registered) == wanted, f"add {sorted(wanted - set(registered))}, remove {sorted(set(registered) - wanted)}"
    for function in registered:
        assert registered[function] == f"the public tests of {function}", registered[function]
