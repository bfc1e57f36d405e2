"""Points only for what the grader observes (issue 49): a validation test pays only when the valid call beside the
invalid ones returns the right values; the raise alone earns nothing. Attack and honest baseline side by side."""

from __future__ import annotations

import pytest
from conftest import KIT, reference_source, write_submission

from autograder.config import load_assignment
from autograder.grading.grade import grade_submission

VALUE_ERROR = "hidden/test_heads.py::test_split_heads_value_error"

# raises where it must, and answers the valid call with anything at all: an all-True bool tensor of the right shape
ANSWERS_ANYTHING = """

def split_heads(x, n_heads):
    B, T, d = x.shape
    if d % n_heads:
        raise ValueError("d must be divisible by n_heads")
    return torch.ones(B, n_heads, T, d // n_heads, dtype=torch.bool)
"""


def _score(source: str, folder) -> float:
    config = load_assignment("multihead", KIT)
    document = grade_submission(config, write_submission(folder, "multihead", source), only=[VALUE_ERROR]).document
    return sum(t["score"] for t in document["tests"])


def test_a_validation_test_pays_only_with_the_valid_calls_values(tmp_path):
    honest = _score(reference_source("multihead"), tmp_path / "honest")
    attack = _score(reference_source("multihead") + ANSWERS_ANYTHING, tmp_path / "attack")
    assert honest > 0 and attack == 0, (honest, attack)


NO_GRAD = "hidden/test_generate.py::test_generate_no_grad"

# gradients stay on; the source only mentions no_grad (dead) and the process's own log is forged
MENTIONS_NO_GRAD = """

torch.is_grad_enabled = lambda: False  # what the probe model's log reads


def generate(model, prompt, n_new):
    if False:
        torch.no_grad()
    torch.set_grad_enabled(True)
    model.eval()
    tokens = prompt
    for _ in range(n_new):
        logits = model(tokens[:, -model.max_len:])
        tokens = torch.cat([tokens, logits[:, -1].argmax(dim=-1, keepdim=True).to(tokens.dtype)], dim=1)
    return tokens
"""

# the same loop, gradients off by a decorator (another course's style): the evidence the grader reads
DECORATED = """

@torch.inference_mode()
def generate(model, prompt, n_new):
    model.eval()
    tokens = prompt
    for _ in range(n_new):
        logits = model(tokens[:, -model.max_len:])
        tokens = torch.cat([tokens, logits[:, -1].argmax(dim=-1, keepdim=True).to(tokens.dtype)], dim=1)
    return tokens
"""


def _transformer(source: str, folder) -> float:
    config = load_assignment("transformer", KIT)
    document = grade_submission(config, write_submission(folder, "transformer", source), only=[NO_GRAD]).document
    return sum(t["score"] for t in document["tests"])


@pytest.mark.proof  # whole gradings: `make proofs` (make test stays under 4 minutes)
def test_no_grad_pays_only_on_a_live_scope_the_grader_reads(tmp_path):
    honest = _transformer(reference_source("transformer"), tmp_path / "honest")
    decorated = _transformer(reference_source("transformer") + DECORATED, tmp_path / "decorated")
    attack = _transformer(reference_source("transformer") + MENTIONS_NO_GRAD, tmp_path / "attack")
    assert honest > 0 and decorated == honest and attack == 0, (honest, decorated, attack)


def test_the_no_grad_evidence_reads_other_courses_styles():
    """Correct code in any reasonable style keeps the point: a nested @torch.no_grad() function called in the loop
    (nanoGPT's estimate_loss), set_grad_enabled(False) as a statement, an alias; a mention alone does not."""
    from autograder.grading.grad_scope import grad_off_functions

    styles = {
        "nested": "import torch\ndef train(m):\n    @torch.no_grad()\n    def ev():\n        return m(1)\n    return ev()\n",
        "statement": "import torch\ndef generate(m, x):\n    torch.set_grad_enabled(False)\n    y = m(x)\n    torch.set_grad_enabled(True)\n    return y\n",
        "alias": "import torch as T\nfrom torch import inference_mode as im\ndef generate(m, x):\n    with im():\n        return m(x)\n",
    }
    for name, source in styles.items():
        assert grad_off_functions(source), name
    mentions = {
        "uncalled nested": "import torch\ndef train(m):\n    @torch.no_grad()\n    def ev():\n        return m(1)\n    return 3\n",
        "bare call": "import torch\ndef generate(m, x):\n    torch.no_grad()\n    return m(x)\n",
        "dead block": "import torch\ndef generate(m, x):\n    if False:\n        with torch.no_grad():\n            m(x)\n    return m(x)\n",
        "after return": "import torch\ndef generate(m, x):\n    return m(x)\n    with torch.no_grad():\n        m(x)\n",
        "empty block": "import torch\ndef generate(m, x):\n    with torch.no_grad():\n        pass\n    return m(x)\n",
    }
    for name, source in mentions.items():
        assert not grad_off_functions(source), name


# The grader hands train a stand-in lm_loss and forward a cache of its own (each function pays for its own mistakes,
# issue 50): both live in the student's worker, so a student's lm_loss or KVCache that finds them (through gc) must
# get an error, never the points of lm_loss's or KVCache's own tests.
LM_LOSS_FROM_GC = """
def lm_loss(model, tokens):
    import gc
    for found in gc.get_objects():
        if callable(found) and getattr(found, "__name__", "") == "contract_lm_loss":
            return found(model, tokens)
    return model(tokens[:, :-1]).sum() * 0.0
"""

KVCACHE_FROM_GC = """
class KVCache:
    def __init__(self, n_layers, max_len):
        import gc
        made = next(c for c in gc.get_objects() if isinstance(c, type) and c.__name__ == "ContractCache")
        self._inner, self.max_len = made(n_layers, max_len), max_len
        self.keys, self.values = self._inner.keys, self._inner.values

    def __len__(self):
        return len(self._inner)

    def update(self, layer, k, v):
        if layer == 0 and len(self._inner) + k.shape[1] > self.max_len:
            raise ValueError(f"max_len={self.max_len}")
        out = self._inner.update(layer, k, v)
        self.keys, self.values = self._inner.keys, self._inner.values
        return out
"""


@pytest.mark.proof  # four whole-suite gradings
@pytest.mark.parametrize(
    "assignment, function, attack",
    [("transformer", "lm_loss", LM_LOSS_FROM_GC), ("decoding", "KVCache", KVCACHE_FROM_GC)],
    ids=["lm_loss", "KVCache"],
)
def test_the_graders_stand_ins_never_pay_the_function_they_stand_in_for(tmp_path, assignment, function, attack):
    config = load_assignment(assignment, KIT)

    def earned(source: str, folder) -> float:
        document = grade_submission(config, write_submission(folder, assignment, source)).document
        return sum(t["score"] for t in document["tests"] if t["extra_data"]["function"] == function)

    honest = earned(reference_source(assignment), tmp_path / "honest")
    stolen = earned(reference_source(assignment) + attack, tmp_path / "attack")  # the later definition wins
    assert honest > 0 and stolen == 0, (honest, stolen)
