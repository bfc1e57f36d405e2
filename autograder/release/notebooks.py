"""The notebook track: a lab notebook and Otter checks, generated from the kit's sources.

* ``assignments/<a>/notebook.py`` (jupytext "percent" cells) becomes
  ``<a>_lab.ipynb`` through ``nbformat``; a cell holding only
  ``# CHECK: softmax`` becomes ``grader.check("softmax")``.
* Otter test files (``tests/<function>.py``, Otter's exception format) are
  generated from the public pytest tests, grouped by the function each test
  grades (the first word of its docstring), with the points that
  ``assignment.toml`` gives those tests: one source for both tracks.
  Each Otter case just calls the public test function, with the student's
  module as ``student``; checks raise ``Feedback`` (an ``Exception``), which
  Otter's runner reports.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Callable

import nbformat

from ..config import Assignment

CELL = re.compile(r"^# %%(.*)$", re.MULTILINE)
CHECK = re.compile(r"^# CHECK: *([A-Za-z_][\w.]*)\s*$")
PUBLIC_DIR = "public_tests"
OTTER_DIR = "tests"


def public_tests_by_function(assignment: Assignment) -> dict[str, list[tuple[str, str, float]]]:
    """{function: [(file name, test function, points)]} for the public tests."""
    from .functions import declared_functions

    groups: dict[str, list[tuple[str, str, float]]] = {}
    for path in sorted((assignment.tests_dir / "public").glob("test_*.py")):
        for test, function in declared_functions(path.read_text()).items():
            points = assignment.points.get(f"public/{path.name}::{test}", 0.0)
            groups.setdefault(function, []).append((path.name, test, points))
    return groups


def otter_test_file(assignment: Assignment, function: str, cases: list[tuple[str, str, float]]) -> str:
    lines = [
        f'"""Otter checks for {function}, generated from the public tests (do not edit)."""',
        "",
        "import hashlib",
        "import importlib",
        "import importlib.util",
        "import inspect",
        "import sys",
        "",
        "import torch",
        "from otter.test_files import test_case",
        "",
        "OK_FORMAT = False",
        f"name = {function!r}",
        f"points = {sum(p for _, _, p in cases) or None!r}",
        "",
        "",
        "def _run(env, file_name, test_name):",
        "    sys.path.insert(0, '.')",
        f"    student = env.get({assignment.module!r}) or importlib.import_module({assignment.module!r})",
        f"    spec = importlib.util.spec_from_file_location('_public_' + file_name[:-3], '{PUBLIC_DIR}/' + file_name)",
        "    module = importlib.util.module_from_spec(spec)",
        "    spec.loader.exec_module(module)",
        "    test = getattr(module, test_name)",
        "    digest = hashlib.sha256(f'0:public/{file_name}::{test_name}'.encode()).digest()",
        "    seed = int.from_bytes(digest[:4], 'little')  # the seed grading gives this test (autograder/grading/scoring.py)",
        "    fixtures = {'student': student, 'seed': seed, 'gen': torch.Generator().manual_seed(seed)}",
        "    test(**{p: fixtures[p] for p in inspect.signature(test).parameters})",
    ]
    for i, (file_name, test_name, pts) in enumerate(cases, start=1):
        lines += [
            "",
            "",
            f"@test_case(name={test_name!r}, points={pts or None!r}, hidden=False)",
            f"def case_{i}(env):",
            f"    _run(env, {file_name!r}, {test_name!r})",
        ]
    return "\n".join(lines) + "\n"


def notebook_cells(source: str, functions: set[str]) -> list:
    cells = []
    parts = CELL.split(source)
    # parts: [preamble, header1, body1, header2, body2, ...]
    for header, body in zip(parts[1::2], parts[2::2]):
        body = body.strip("\n")
        if "[markdown]" in header:
            text = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.splitlines())
            cells.append(nbformat.v4.new_markdown_cell(text))
            continue
        lines = []
        for line in body.splitlines():
            match = CHECK.match(line.strip())
            if match and match.group(1) in functions:
                lines.append(f"grader.check({match.group(1)!r})")
            elif match:
                lines.append(f"# (no public check for {match.group(1)})")
            else:
                lines.append(line)
        cells.append(nbformat.v4.new_code_cell("\n".join(lines)))
    return cells


def build_notebook(assignment: Assignment, refresh_numbers: bool = False) -> str:
    """The lab notebook; ``{{name}}`` in its text is a number measured on the reference (see handout_numbers)."""
    from .handout_numbers import fill_numbers

    groups = public_tests_by_function(assignment)
    setup = (
        "# Run this cell first. The checks below run the public tests on your code.\n"
        "import otter\n"
        f'grader = otter.Notebook(tests_dir="{OTTER_DIR}")\n'
        f"import {assignment.module}"
    )
    nb = nbformat.v4.new_notebook()
    cells = notebook_cells(fill_numbers(assignment, (assignment.root / "notebook.py").read_text(), refresh_numbers), set(groups))
    work_in = f"Work in `{assignment.submit_file}`; this notebook imports it."
    if cells and cells[0].cell_type == "markdown" and cells[0].source.startswith("# "):
        title, cells = [cells[0], nbformat.v4.new_markdown_cell(work_in)], cells[1:]  # the notebook's own title
    else:
        title = [nbformat.v4.new_markdown_cell(f"# Lab: {assignment.title}\n\n{work_in}")]
    nb.cells = [*title, nbformat.v4.new_code_cell(setup), *cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"  # stable ids keep the release reproducible
    return nbformat.writes(nb)


def otter_test_files(assignment: Assignment) -> dict[str, bytes]:
    files = {}
    for function, cases in public_tests_by_function(assignment).items():
        files[f"{OTTER_DIR}/{function}.py"] = otter_test_file(assignment, function, cases).encode()
    return files


def run_notebook(folder: Path, name: str, timeout: int = 300) -> nbformat.NotebookNode:
    """Execute ``<name>_lab.ipynb`` in ``folder`` headless, as a student runs it (raises if a cell errors)."""
    (result,) = run_notebooks(folder, name, [lambda: None], timeout)
    if isinstance(result, Exception):
        raise result
    return result


# Run in the kernel between two runs of the notebook: the next run meets a namespace as a fresh kernel's (the
# notebook's own imports bind their names again) and imports the student's file again, as it now is.
FORGET = """%reset -f
import sys as _kit_sys
for _kit_name in [m for m in _kit_sys.modules if m == {module!r} or m.startswith({module!r} + ".")]:
    del _kit_sys.modules[_kit_name]
if "matplotlib.pyplot" in _kit_sys.modules:
    _kit_sys.modules["matplotlib.pyplot"].close("all")
del _kit_sys
"""


def run_notebooks(
    folder: Path, name: str, befores: list[Callable[[], None]], timeout: int = 300, module: str | None = None
) -> list[nbformat.NotebookNode | Exception]:
    """Execute ``<name>_lab.ipynb`` in ``folder`` headless once per item of ``befores``, calling it first (it
    writes the student's file the run is for), in one kernel: a kernel's start-up and the notebook's imports are
    most of a short notebook's time. Before each run after the first, the kernel forgets the namespace and the
    student's ``module`` (:data:`FORGET`). Each run's executed notebook, or the exception its failing cell raised."""
    import logging
    import subprocess

    from jupyter_client import AsyncKernelManager
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient

    quiet = logging.getLogger("autograder.notebook")
    quiet.setLevel(logging.WARNING)  # not nbclient's "Executing notebook with kernel" per run
    path = folder / f"{name}_lab.ipynb"
    forget = nbformat.v4.new_code_cell(FORGET.format(module=module or name))
    results: list[nbformat.NotebookNode | Exception] = []
    # The kernel talks over Unix sockets in a folder of its own, not TCP ports: jupyter_client picks
    # free ports, releases them and the kernel binds them later, so kernels started at the same time
    # (the release proves two assignments' notebooks at once) can take each other's ports, and one
    # dies ("Kernel died before replying to kernel_info", jupyter/jupyter_client#487).
    # The client creates (and so shuts down, with its channels) a kernel manager of this class.
    with tempfile.TemporaryDirectory(prefix="kit-kernel-") as sockets:

        class OwnSockets(AsyncKernelManager):
            def __init__(self, **kwargs):
                super().__init__(transport="ipc", ip=str(Path(sockets) / "kernel"), **kwargs)

        client = NotebookClient(
            nbformat.read(path, as_version=4),
            timeout=timeout,
            kernel_name="python3",
            kernel_manager_class=OwnSockets,
            resources={"metadata": {"path": str(folder)}},
            log=quiet,
        )

        async def run_all() -> None:
            # the kernel's own start-up warnings are not the release's findings
            async with client.async_setup_kernel(stderr=subprocess.DEVNULL):
                for i, before in enumerate(befores):
                    before()
                    nb = nbformat.read(path, as_version=4)
                    client.nb = nb
                    client.reset_execution_trackers()
                    try:
                        if i:
                            nb.cells.insert(0, nbformat.from_dict(forget))
                            await client.async_execute_cell(nb.cells[0], 0, execution_count=0)
                            nb.cells.pop(0)
                        for index, cell in enumerate(nb.cells):
                            await client.async_execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
                        results.append(nb)
                    except Exception as exc:  # noqa: BLE001 - a cell that errors is this run's finding
                        results.append(exc)

        run_sync(run_all)()
    return results


def _check_outputs(nb: nbformat.NotebookNode) -> str:
    text = []
    for cell in nb.cells:
        if cell.cell_type == "code" and "grader.check(" in cell.source:
            for out in cell.get("outputs", []):
                text.append(out.get("text", "") + str(out.get("data", {}).get("text/plain", "")))
    return "\n".join(text)


def notebook_problem(nb: nbformat.NotebookNode, solution: bool) -> str:
    """What is wrong with an executed notebook ("" if nothing): with the reference every Otter
    check passes and a plot is drawn; with the untouched stub the checks say what is unfinished."""
    checks = _check_outputs(nb)
    if not solution:
        ok = "not implemented" in checks.lower() or "NotImplementedError" in checks
        return "" if ok else "its checks do not say what is unfinished: " + checks[-500:]
    n_checks = sum("grader.check(" in c.source for c in nb.cells if c.cell_type == "code")
    if n_checks < 1:
        return "it runs no Otter check"
    if checks.count("passed") < n_checks or "failed" in checks.lower():
        return "an Otter check fails: " + checks[-500:]
    outputs = [out for c in nb.cells if c.cell_type == "code" for out in c.get("outputs", [])]
    if not any("image/png" in out.get("data", {}) for out in outputs):
        return "it draws no plot"
    return ""
