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


def test_points_have_one_form_a_functions_table_is_an_unknown_key(tmp_path):
    """Points are stated one way, a value per test in [points]; the former [functions.<f>] weights are refused."""
    import shutil

    from autograder.config import ConfigError, load_assignment

    kit = tmp_path / "kit"
    shutil.copytree(KIT_ROOT / "assignments" / "attention", kit / "assignments" / "attention")
    toml = kit / "assignments" / "attention" / "assignment.toml"
    toml.write_text(
        toml.read_text() + '\n[functions.softmax]\npoints = 3\nweights = { "hidden/test_softmax.py::test_other_dims" = 1 }\n'
    )
    with pytest.raises(ConfigError, match="functions"):
        load_assignment("attention", kit)


@pytest.mark.parametrize(
    "added, named",
    [
        ('\n[visiblity]\n"hidden/test_softmax.py::test_large_inputs" = "visible"\n', "'visibility'"),
        ('\n[feedback]\nhidden_sumary = "points"\n', "'hidden_summary'"),
        ("test_timout = 30\n", "'test_timeout'"),
        ('\n[mutants.equivalents]\n"compare:softmax:0" = "why"\n', "'equivalent'"),
    ],
    ids=["visiblity", "hidden_sumary", "test_timout", "mutants.equivalents"],
)
def test_a_misspelt_key_is_an_error_that_names_the_nearest_valid_one(tmp_path, added, named):
    root, toml = _copy(tmp_path)
    toml.write_text(toml.read_text() + added if added.startswith("\n") else added + toml.read_text())  # a key: at the top
    with pytest.raises(ConfigError) as refused:
        load_assignment("attention", root)
    assert "unknown key" in str(refused.value) and f"did you mean {named}" in str(refused.value), str(refused.value)


def test_only_assignments_whose_reference_uses_torch_optim_warm_up_an_optimiser(tmp_path):
    """The worker template builds its warm-up optimiser (about a second of CPU) only where the reference trains."""
    trains = {name: load_assignment(name).trains for name in ("attention", "decoding", "embeddings", "multihead")}
    assert trains == dict.fromkeys(trains, False)
    assert load_assignment("seq2seq").trains and load_assignment("transformer").trains
    root, _ = _copy(tmp_path)
    solution = root / "solutions" / "attention" / "attention.py"
    solution.write_text("# the optimal scaling is 1/sqrt(d_k)\n")  # a word that merely starts with optim
    assert not load_assignment("attention", root).trains
    solution.write_text("from torch import optim\n")
    assert load_assignment("attention", root).trains


@pytest.mark.parametrize(
    "old, new, message",
    [
        (
            '"hidden/test_softmax.py::test_large_inputs" = ',
            '"hidden/test_softmax.py::test_large_input" = ',
            r"\[points\] names hidden/test_softmax.py::test_large_input, but hidden/test_softmax.py defines no "
            r"test_large_input: did you mean 'test_large_inputs'\?",
        ),
        (
            '"hidden/test_softmax.py::test_large_inputs" = ',
            '"hidden/test_softmx.py::test_large_inputs" = ',
            "there is no test file",
        ),
        ('module = "attention"', 'module = "attention.py"', r"must be the name students import.*without .py: 'attention'"),
    ],
    ids=["misspelt-test", "missing-file", "module-with-py"],
)
def test_an_authors_slip_is_refused_at_once_with_the_fix(tmp_path, old, new, message):
    """The red team's authoring slips (2026-12-05): a misspelt [points] test passed `points` and `release
    --no-check` and made the checked release print 27 failures blaming the right names; `module = "x.py"` ended in
    a traceback."""
    root, toml = _copy(tmp_path)
    text = toml.read_text()
    assert old in text
    toml.write_text(text.replace(old, new, 1))
    with pytest.raises(ConfigError, match=message):
        load_assignment("attention", root)


@pytest.mark.parametrize("value", ["true", '"4"'])
def test_points_must_be_numbers(tmp_path, value):
    root, toml = _copy(tmp_path)
    text = toml.read_text()
    line = next(x for x in text.splitlines() if x.startswith('"hidden/test_softmax.py::test_large_inputs" = '))
    toml.write_text(text.replace(line, f'"hidden/test_softmax.py::test_large_inputs" = {value}'))
    with pytest.raises(ConfigError, match="must be a number"):
        load_assignment("attention", root)


@pytest.mark.parametrize(
    "lines, message",
    [
        ("run_timeout = 3000", "run_timeout = 3000 s is over 480 s"),
        ("test_timeout = 60\nrun_timeout = 5", "test_timeout = 60 s is longer than run_timeout = 5 s"),
        ('run_timeout = "fast"', "must be a number of seconds above 0"),
    ],
)
def test_timeouts_the_platforms_cannot_honour_are_refused(tmp_path, lines, message):
    """run_timeout = 3000 released without a word: PrairieLearn's last resort then fired at 570 s ("This is
    unusual"), Gradescope's after its own 10 minutes, with no results written (the red team's)."""
    root, toml = _copy(tmp_path)
    text = "\n".join(x for x in toml.read_text().splitlines() if not x.startswith(("run_timeout", "test_timeout")))
    toml.write_text(lines + "\n" + text + "\n")
    with pytest.raises(ConfigError, match=message):
        load_assignment("attention", root)
