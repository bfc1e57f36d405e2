"""Similar pairs in a cohort (autograder/cohort/similarity.py): copydetect on files made from the catalogue, no grading.

A student file here is the reference with the functions a variant or corpus entry writes replaced by
the entry's (as a student writes some functions their own way); a copy renames its local variables
and reorders its functions. tests/test_batch.py runs the same through grade-all.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import keyword
import os
import random
import subprocess
import sys
import time
import tokenize
from pathlib import Path

import pytest
from conftest import KIT

from autograder.catalogue import apply_patch, read_catalogue
from autograder.cohort.export import Submission
from autograder.cohort.similarity import EVIDENCE, SimilaritySettings, load_settings, measure
from autograder.cohort.similarity_pages import write_similarity
from autograder.config import ConfigError, load_assignment
from autograder.release.markers import make_stub

ATTENTION = load_assignment("attention", KIT)


def _blocks(source: str) -> tuple[list[str], dict[str, str]]:
    """(the top-level statements that are not definitions, the module docstring left out;
    {name: its definition's text}) of ``source``."""
    lines = source.splitlines()
    head: list[str] = []
    defs: dict[str, str] = {}
    for i, node in enumerate(ast.parse(source).body):
        start = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])
        text = "\n".join(lines[start - 1 : node.end_lineno])
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defs[node.name] = text
        elif not (i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            head.append(text)
    return head, defs


def student_file(assignment, code: str) -> str:
    """The reference with every function ``code`` defines replaced by ``code``'s, its imports added."""
    head, defs = _blocks(assignment.solution.read_text())
    extra_head, extra = _blocks(code)
    imports = [line for line in extra_head if line.startswith(("import ", "from ")) and line not in head]
    future = [line for line in head if line.startswith("from __future__")]
    rest = [line for line in head if line not in future]
    return "\n".join(future + imports + rest) + "\n\n\n" + "\n\n\n".join({**defs, **extra}.values()) + "\n"


WORDS = ["alpha", "beta", "tmp", "val", "res", "acc", "buf", "cur", "part", "piece", "item", "node"]


def renamed_copy(source: str, seed: int = 0, reorder: bool = True) -> str:
    """``source`` with its local variables renamed (parameters, functions and keywords kept: the
    contract still holds) and, with ``reorder``, its top-level definitions in another order."""
    rng = random.Random(seed)
    tree = ast.parse(source)
    kept = set(dir(builtins)) | set(keyword.kwlist)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            kept.add(node.name)
            if not isinstance(node, ast.ClassDef):
                args = node.args
                kept.update(a.arg for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg] if a)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            kept.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.keyword) and node.arg:
            kept.add(node.arg)
    stored = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} - kept)
    names = {name: f"{rng.choice(WORDS)}_{i}" for i, name in enumerate(stored)}
    tokens, previous = [], None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.string in names and not (previous and previous.string == "."):
            tok = tok._replace(string=names[tok.string])
        tokens.append(tok)
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok
    head, defs = _blocks(tokenize.untokenize(tokens))
    order = list(defs.values())
    if reorder:
        rng.shuffle(order)
    return "\n".join(head) + "\n\n\n" + "\n\n\n".join(order) + "\n"


def implementations(assignment) -> dict[str, list[str]]:
    """{function: every distinct definition of it in the reference, its variants, corpus and patched mistakes}."""
    reference = assignment.solution.read_text()
    sources = [reference]
    for kind in ("variant", "corpus", "mistake"):
        for entry in read_catalogue(assignment, kind):
            base = apply_patch(reference, entry.patch) if entry.patch else ""
            sources.append(base + "\n" + (entry.code or ""))
    found: dict[str, list[str]] = {name: [] for name in _blocks(reference)[1]}
    for source in sources:
        try:
            defs = _blocks(source)[1]
        except SyntaxError:
            continue
        for name, text in defs.items():
            if name in found and text not in found[name]:
                found[name].append(text)
    return found


def cohort(assignment, n: int, seed: int = 0) -> list[str]:
    """``n`` student-like files: each function's implementation drawn from :func:`implementations`,
    then, for most files, locals renamed and functions reordered."""
    rng = random.Random(seed)
    pool = implementations(assignment)
    files = []
    for i in range(n):
        text = student_file(assignment, "\n\n\n".join(rng.choice(texts) for texts in pool.values()))
        files.append(renamed_copy(text, seed * 1000 + i) if rng.random() < 0.7 else text)
    return files


def _write(folder: Path, files: dict[str, str]) -> list[Submission]:
    folder.mkdir(parents=True, exist_ok=True)
    subs = []
    for sid, text in files.items():
        (folder / f"{sid}.py").write_text(text)
        subs.append(
            Submission(sid, folder / f"{sid}.py", name=sid.title(), submitters=[{"name": sid.title(), "sid": sid, "email": ""}])
        )
    return subs


def distinct_and_copied(assignment) -> dict[str, str]:
    """Every variant and corpus entry as a student file, and a renamed, reordered copy of the first."""
    entries = read_catalogue(assignment, "variant") + read_catalogue(assignment, "corpus")
    files = {e.name: student_file(assignment, e.code) for e in entries}
    files["copied"] = renamed_copy(files[entries[0].name], seed=7)
    return files


def test_a_renamed_reordered_copy_ranks_first(tmp_path):
    files = distinct_and_copied(ATTENTION)
    original = next(iter(files))
    assert files["copied"] != files[original]
    result = measure(ATTENTION, _write(tmp_path, files), SimilaritySettings(threshold=0.0, top=5))
    first, second = result.pairs[0], result.pairs[1]
    assert {first.a, first.b} == {original, "copied"}, [(p.a, p.b, round(p.score, 2)) for p in result.pairs[:4]]
    assert first.score >= load_settings().threshold and first.score > second.score + 0.05, (first.score, second.score)
    assert first.spans_a and first.spans_b, "the shared passages are located in both files"
    assert result.compared == len(files) * (len(files) - 1) // 2 and not result.skipped


@pytest.mark.proof  # a whole grade-all run (four gradings): `make proofs`
def test_grade_all_on_a_folder_with_two_copied_submissions_ranks_that_pair_first(tmp_path):
    """The issue's words: grade-all on a plain folder of submissions, two of them copies of each other
    (one renamed and reordered) among distinct ones, lists that pair first in similarity.csv and in the
    dashboard's similar pairs, with its side-by-side page."""
    import csv

    entries = {e.name: e for e in read_catalogue(ATTENTION, "variant") + read_catalogue(ATTENTION, "corpus")}
    original = student_file(ATTENTION, entries["einops"].code)
    sources = {
        "ada": original,
        "alan": student_file(ATTENTION, entries["loops"].code),
        "barbara": renamed_copy(original, seed=11),
        "grace": student_file(ATTENTION, entries["annotated_transformer"].code),
    }
    folder = tmp_path / "folder"
    for student, source in sources.items():
        (folder / student).mkdir(parents=True)
        (folder / student / "attention.py").write_text(source)
    out = tmp_path / "graded"
    proc = subprocess.run(
        [sys.executable, "-m", "autograder", "grade-all", "attention", str(folder), "--out", str(out), "--jobs", "2"],
        cwd=KIT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with (out / "similarity.csv").open(encoding="utf-8-sig", newline="") as f:
        pairs = list(csv.DictReader(f))
    assert pairs and {pairs[0]["submission_a"], pairs[0]["submission_b"]} == {"ada", "barbara"}, pairs
    assert float(pairs[0]["score"]) >= load_settings().threshold
    assert all({p["submission_a"], p["submission_b"]} != {"ada", "barbara"} for p in pairs[1:])
    assert "<mark>" in (out / pairs[0]["page"]).read_text(), "the side-by-side page highlights the shared passages"
    report = (out / "report.html").read_text()
    section = report[report.index('<section id="similarity">') :].split("</section>")[0]
    assert pairs[0]["page"] in section, "the dashboard's first similar pair links to its page"
    assert section.index(pairs[0]["page"]) < min(
        (section.find(p["page"]) for p in pairs[1:] if p["page"] in section), default=len(section)
    )


def test_the_stub_and_the_reference_never_count(tmp_path):
    reference = ATTENTION.solution.read_text()
    files = {
        "ref_a": reference,
        "ref_b": renamed_copy(reference, seed=1, reorder=False),
        "ref_c": renamed_copy(reference, seed=2),
        "stub_a": make_stub(reference),
        "stub_b": renamed_copy(make_stub(reference), seed=3),
    }
    result = measure(ATTENTION, _write(tmp_path, files), SimilaritySettings(threshold=0.0))
    scores = {(p.a, p.b): round(p.score, 2) for p in result.pairs}
    assert not {pair for pair in scores if "ref_c" not in pair and "stub_b" not in pair}, f"same order, nothing shared: {scores}"
    assert max(scores.values(), default=0.0) < load_settings().threshold, f"reordered, only the seams between functions: {scores}"


def test_one_students_or_one_groups_submissions_are_no_pair(tmp_path):
    text = student_file(ATTENTION, read_catalogue(ATTENTION, "variant")[0].code)
    subs = _write(tmp_path, {"alone": text, "group": text, "other": text, "earlier": text})
    subs[1].submitters = [{"name": "Alone", "sid": "alone", "email": ""}, {"name": "Mate", "sid": "mate", "email": ""}]
    subs[3].superseded_by = "other"  # the student's later upload counts: the earlier one is not compared
    result = measure(ATTENTION, subs, SimilaritySettings(threshold=0.5))
    assert sorted((p.a, p.b) for p in result.pairs) == [("alone", "other"), ("group", "other")], "alone and group share a student"


def test_the_csv_and_the_side_by_side_pages(tmp_path):
    files = distinct_and_copied(ATTENTION)
    subs = _write(tmp_path / "files", files)
    subs[-1].name = '<script>alert("x")</script>'
    result = measure(ATTENTION, subs, SimilaritySettings(threshold=0.5, top=1))
    out = tmp_path / "out"
    out.mkdir()
    (out / "similarity").mkdir()
    (out / "similarity" / "stale__pair.html").write_text("from an earlier run")
    write_similarity(out, ATTENTION, subs, result)
    rows = (out / "similarity.csv").read_text(encoding="utf-8-sig").splitlines()
    assert rows[0] == "rank,score,submission_a,students_a,share_a,lines_a,submission_b,students_b,share_b,lines_b,page"
    assert rows[1].startswith("1,") and "similarity/" in rows[1]
    (page,) = sorted((out / "similarity").glob("*.html"))
    text = page.read_text()
    assert EVIDENCE in text and "<mark>" in text and "<script>alert" not in text and "&lt;script&gt;" in text


def test_the_similarity_settings_are_checked(tmp_path):
    course = tmp_path / "course.toml"
    course.write_text("[similarity]\nthreshhold = 0.4\n")
    with pytest.raises(ConfigError, match="did you mean 'threshold'"):
        load_settings(path=course)
    course.write_text("[similarity]\nthreshold = 40\n")
    with pytest.raises(ConfigError, match="from 0 to 1"):
        load_settings(path=course)
    course.write_text("[similarity]\nthreshold = 0.7\ntop = 5\n")
    assert load_settings(path=course) == SimilaritySettings(0.7, 5)


def test_scores_are_the_same_under_any_hash_seed(tmp_path):
    subs = _write(tmp_path / "files", distinct_and_copied(ATTENTION))
    script = (
        "import json, sys; from pathlib import Path; sys.path.insert(0, sys.argv[1])\n"
        "from autograder.config import load_assignment; from autograder.cohort.export import Submission\n"
        "from autograder.cohort.similarity import SimilaritySettings, measure\n"
        "subs = [Submission(p.stem, p) for p in sorted(Path(sys.argv[2]).glob('*.py'))]\n"
        "r = measure(load_assignment('attention'), subs, SimilaritySettings(0.0))\n"
        "print(json.dumps([(p.a, p.b, round(p.score, 6), p.spans_a) for p in r.pairs]))\n"
    )
    runs = []
    for seed in ("1", "2"):
        proc = subprocess.run(
            [sys.executable, "-c", script, str(KIT), str(subs[0].path.parent)],
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONHASHSEED=seed),
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        runs.append(json.loads(proc.stdout))
    assert runs[0] == runs[1] and runs[0], "copydetect's own hashes follow the hash seed; the kit's do not"


@pytest.mark.proof
@pytest.mark.parametrize("name", ["attention", "transformer"])
def test_200_submissions_are_measured_in_seconds(tmp_path, name):
    """The README's measured time: 200 student-like files (catalogue implementations mixed, most
    renamed and reordered), the whole measurement (reading each upload as grading does, copydetect's
    fingerprints, every pair) under 60 s on the 2-core machine."""
    assignment = load_assignment(name, KIT)
    files = {f"s{i:03d}": text for i, text in enumerate(cohort(assignment, 200, seed=3))}
    subs = _write(tmp_path, files)
    started = time.perf_counter()
    result = measure(assignment, subs, load_settings())
    elapsed = time.perf_counter() - started
    print(f"{name}: 200 submissions, {result.compared} pairs, {len(result.pairs)} at or above the threshold, {elapsed:.1f} s")
    assert result.compared == 200 * 199 // 2 and not result.skipped
    assert elapsed < 60, f"similarity took {elapsed:.1f} s for 200 submissions"
