"""The release is generated, in sync and reproducible."""

import os
import subprocess
import sys
import zipfile

from conftest import KIT, load_assignment, run_cli

from autograder.release import autograder_files, build_zips, student_files


def test_student_template_is_in_sync_with_the_sources(assignment_name):
    """student_template/ is committed; regenerating it must change nothing (run `make release`)."""
    assignment = load_assignment(assignment_name, KIT)
    folder = KIT / "student_template" / assignment_name
    expected = student_files(assignment)
    on_disk = {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in folder.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    stale = sorted(set(expected) ^ set(on_disk)) + sorted(k for k in expected if k in on_disk and expected[k] != on_disk[k])
    assert not stale, f"student_template/{assignment_name} is stale ({stale}); run `make release`"


_BUILD = """
import hashlib, sys
sys.path.insert(0, {kit!r})
from autograder.config import load_assignment
from autograder.release import build_zips
for name, data in sorted(build_zips(load_assignment({name!r})).items()):
    print(name, hashlib.sha256(data).hexdigest())
"""


def test_zips_are_byte_identical_across_builds(assignment_name):
    """Two builds in two fresh processes (different hash seeds, times, temporary names) agree."""
    digests = set()
    for hash_seed in ("1", "2"):
        proc = subprocess.run(
            [sys.executable, "-c", _BUILD.format(kit=str(KIT), name=assignment_name)],
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        digests.add(proc.stdout)
    assert len(digests) == 1, f"two builds of {assignment_name} differ:\n" + "\n".join(digests)


def test_autograder_zip_has_the_contract_files_at_its_root(assignment_name):
    files = autograder_files(load_assignment(assignment_name, KIT))
    for name in ("setup.sh", "run_autograder", "requirements.txt"):
        assert name in files
    requirements = files["requirements.txt"].decode()
    for line in requirements.splitlines():
        if line and not line.startswith("#"):
            assert "==" in line, f"unpinned requirement {line!r}"
    setup = files["setup.sh"].decode()
    assert "TORCH_INDEX_URL=" in setup and "torch==$TORCH_VERSION" in setup


def test_student_zip_has_no_hidden_tests_or_solutions(assignment_name, tmp_path):
    assignment = load_assignment(assignment_name, KIT)
    with zipfile.ZipFile(__import__("io").BytesIO(build_zips(assignment)["student.zip"])) as zf:
        names = zf.namelist()
    assert not [n for n in names if "hidden" in n or "mistakes" in n or "solutions" in n]
    assert f"{assignment_name}/{assignment.submit_file}" in names
    assert f"{assignment_name}/README.md" in names


def test_release_cli_writes_dist_and_leaves_the_readme_table_alone(tmp_path):
    """`python -m autograder release <a> --out D`: the zips in D/<a>/ and the course page; a partial
    release does not rewrite the README's mutation table (that needs every assignment).

    `--no-check` here: the self-check itself (every assignment's catalogue graded for real, the
    notebook, another seed, the simulated Gradescope run) is what `make release` runs, and CI runs
    it on a fresh clone before `make test`; its refusals are tested on crafted gradings in
    test_selfcheck.py."""
    readme = (KIT / "README.md").read_text()
    proc = run_cli("release", "embeddings", "--no-check", "--out", str(tmp_path / "dist"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "[embeddings] wrote" in proc.stdout
    assert "cross-assignment check: no student.zip of embeddings answers another assignment" in proc.stdout
    assert "`embeddings`" in (tmp_path / "dist" / "course.md").read_text()
    written = sorted(p.name for p in (tmp_path / "dist" / "embeddings").iterdir())
    assert {"student.zip", "autograder.zip"} <= set(written)
    assert (KIT / "README.md").read_text() == readme

    bad = run_cli("release", "no_such_assignment", "--out", str(tmp_path / "dist"))
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "no_such_assignment" in bad.stderr


def test_the_transformer_zips_attention_class_is_not_the_multihead_answer(tmp_path):
    """course.toml's not_answers claim, proved: the provided class as a multihead submission
    loses every MultiHeadAttention point (it is torch's nn.MultiheadAttention, banned there)."""
    import ast

    from autograder.grade import grade_submission

    def class_lines(source: str) -> tuple[int, int, list[str]]:
        node = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef) and n.name == "MultiHeadAttention")
        return node.lineno, node.end_lineno, source.splitlines()[node.lineno - 1 : node.end_lineno]

    multihead = load_assignment("multihead", KIT)
    provided = student_files(load_assignment("transformer", KIT))["transformer.py"].decode()
    lines = multihead.solution.read_text().splitlines()
    start, end, _ = class_lines("\n".join(lines))
    lines[start - 1 : end] = class_lines(provided)[2]
    (tmp_path / "multihead.py").write_text("\n".join(lines) + "\n")
    only = [k for k in multihead.points if "test_mha_" in k or "test_matches_torch_small" in k]
    grade = grade_submission(multihead, tmp_path / "multihead.py", only=only)
    tests = grade.document["tests"]
    assert tests and all(t["name"].startswith("MultiHeadAttention") for t in tests)
    assert [t["name"] for t in tests if t["score"] > 0] == []
