"""Recipes (``autograder/grading/recipes.py``): what a student's object returned is replayable without a
hand-written ``call=``, and nothing that cannot be replayed is recorded.

Through a real worker: a model built by the student's class, configured (``double()``,
``load_state_dict``), then called, records its result with a recipe the diagnosis replays to the
same value; once the model is handed to another call (a training step), its later results carry
no recipe (what that call did cannot be replayed); a grader helper's object gets none.
"""

from __future__ import annotations

import textwrap
import types

import pytest
import torch

from autograder.context import call_that_produced, per_test
from autograder.grading.seam import Deadlines, RemoteStudent

MODULE = textwrap.dedent(
    """
    import torch
    from torch import nn

    class Scaler(nn.Module):
        def __init__(self, d, bias=True):
            super().__init__()
            self.lin = nn.Linear(d, d, bias=bias)

        def forward(self, x, twice=False):
            y = self.lin(x)
            return (2 * y if twice else y), y.sum()

        def norm(self, x):
            return self.lin(x).norm()

    def nudge(model):
        with torch.no_grad():
            for p in model.parameters():
                p.add_(1.0)
    """
)


@pytest.fixture(scope="module")
def student(tmp_path_factory):
    folder = tmp_path_factory.mktemp("recipes")
    (folder / "toy.py").write_text(MODULE)
    s = RemoteStudent("toy", folder / "toy.py", None, [], deadlines=Deadlines(request=60))
    assert s.load() is None
    yield s
    s.close()


def _replay(call: dict):
    """What the diagnosis does with a recorded call, on the grader's own copy of the module."""
    from autograder.diagnosis.diagnoser import Diagnoser

    module = types.ModuleType("toy")
    exec(compile(MODULE, "toy.py", "exec"), module.__dict__)
    return Diagnoser._run(None, module, call)


def test_a_configured_models_results_carry_a_recipe_that_replays_to_the_same_value(student):
    torch.manual_seed(0)
    sd = {f"lin.{k}": v.double() for k, v in torch.nn.Linear(4, 4).state_dict().items()}
    x = torch.randn(3, 4, dtype=torch.float64)
    with per_test():
        m = student.Scaler(4, bias=True)
        m.double()
        m.load_state_dict(sd, strict=True)
        out, total = m(x, twice=True)
        norm = m.norm(x)
        call = call_that_produced(out)
        assert call is not None and call["cls"] == "Scaler" and call["method"] == "__call__" and call["output"] == 0
        assert [step[0] for step in call["steps"]] == ["double", "load_state_dict"]
        assert torch.equal(_replay(call), out)
        assert torch.equal(_replay(call_that_produced(total)), total)
        assert torch.equal(_replay(call_that_produced(norm)), norm)
        again, _ = m(x)  # norm() may have changed the object (only calling it and reading weights may not)
        assert call_that_produced(again) is None


def test_a_model_handed_to_another_call_records_nothing_after(student):
    x = torch.randn(2, 4)
    with per_test():
        m = student.Scaler(4)
        before, _ = m(x)
        student.nudge(m)  # changes the weights in the worker: no replay of m can know
        after, _ = m(x)
        assert call_that_produced(before) is not None
        assert call_that_produced(after) is None
        handle = student.Scaler(4).double()  # the handle double() returns shares the recipe
        assert call_that_produced(handle(x.double())[0])["steps"][0][0] == "double"


def test_a_model_loaded_with_values_from_the_worker_records_nothing(student):
    """Loading what the worker returned (the student's own buffers, as the transformer's tests do for a
    positional table) would carry the student's values into every mistake's replay: no recipe then."""
    x = torch.randn(2, 4)
    with per_test():
        m = student.Scaler(4)
        m.load_state_dict({**m.state_dict()})
        out, _ = m(x)
        assert call_that_produced(out) is None
