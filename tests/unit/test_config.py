"""assignment.toml is the one place for points and visibility: instructors can change both."""

from __future__ import annotations

import shutil

import pytest

from autograder.config import KIT_ROOT, ConfigError, load_assignment


def _copy(tmp_path, name="attention"):
    root = tmp_path / "kit"
    shutil.copytree(KIT_ROOT / "assignments" / name, root / "assignments" / name)
    (root / "solutions" / name).mkdir(parents=True)
    return root, root / "assignments" / name / "assignment.toml"


def test_visibility_defaults_and_a_per_test_override(tmp_path):
    root, toml = _copy(tmp_path)
    default = load_assignment("attention", root)
    key = "hidden/test_softmax.py::test_large_inputs"
    assert default.visibility_of(key) == "after_published"
    assert default.visibility_of("public/test_attention_public.py::test_shapes") == "visible"
    toml.write_text(toml.read_text() + f'\n[visibility]\n"{key}" = "visible"\n')
    assert load_assignment("attention", root).visibility_of(key) == "visible"


def test_a_visibility_gradescope_does_not_know_is_refused(tmp_path):
    root, toml = _copy(tmp_path)
    toml.write_text(toml.read_text() + '\n[visibility]\n"hidden/test_softmax.py::test_large_inputs" = "soon"\n')
    with pytest.raises(ConfigError, match="not one of"):
        load_assignment("attention", root)


def test_uncaught_must_name_a_test_in_points(tmp_path):
    """[uncaught] is read with the rest of assignment.toml; a key that is no test is refused, with the key."""
    kit = tmp_path / "kit"
    shutil.copytree(KIT_ROOT / "assignments" / "embeddings", kit / "assignments" / "embeddings")
    toml = kit / "assignments" / "embeddings" / "assignment.toml"
    toml.write_text(toml.read_text() + '\n[uncaught]\n"hidden/test_nope.py::test_nope" = "why"\n')
    with pytest.raises(ConfigError, match=r"\[uncaught\] names hidden/test_nope.py::test_nope"):
        load_assignment("embeddings", kit)
