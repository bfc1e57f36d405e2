"""Grader-side helpers for the transformer hidden tests (never shipped to students).

Two kinds of reference:

* for ``TransformerBlock`` it is PyTorch's own ``nn.TransformerEncoderLayer``
  (``norm_first=True``, no dropout) in float64, with random weights, biases and
  LayerNorm gains (torch's defaults of 0 and 1 would hide a missing bias or norm);
* for ``lm_loss``, ``train`` and ``generate`` it is the reference solution run on
  a grader-side copy of the probe model from ``worker_helpers.py``: the worker
  builds the same probe from the same arguments, so both sides start from
  bit-identical float64 weights.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import torch
import torch.nn as nn

from autograder.checks import Feedback, expect_true

_HELPERS_FILE = Path(__file__).resolve().parents[1] / "worker_helpers.py"
_helpers = None

# The first optimiser a process builds imports torch._dynamo (seconds of CPU). Pay that once here,
# when pytest imports this module, not inside a test whose time limit also covers the student's calls.
torch.optim.AdamW([nn.Parameter(torch.zeros(1))])


def helpers():
    """The probe module, imported on the grader side from the same file the worker uses."""
    global _helpers
    if _helpers is None:
        spec = importlib.util.spec_from_file_location("_transformer_probe_helpers", _HELPERS_FILE)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _helpers = module
    return _helpers


def probe_pair(student, *args, **kwargs):
    """The same ProbeLM twice: a handle built in the student's worker, and a grader-side copy."""
    return student.helper("ProbeLM", *args, **kwargs), helpers().ProbeLM(*args, **kwargs)


# What the student reads where their train fails on the grader's probe model: a model they did not write, in words.
PROBE = (
    "(This test trains ProbeLM, the grader's own stand-in model, not your TinyCausalLM: the contract's train works "
    "on any nn.Module mapping tokens (B, T) to logits (B, T, V). It may rely on model(tokens), model.parameters(), "
    "model.train() / model.eval() and state_dict(), nothing else (no blocks, embeddings or max_len of its own).)"
)


def train_alone(student, *args, **kwargs):
    """``student.train(*args, **kwargs)`` with the contract's lm_loss in place of the student's own
    (worker_helpers.use_contract_lm_loss): train's tests charge the loop's own mistakes only, a wrong lm_loss
    being charged by lm_loss's test. The loop's history, weights and steps are then compared with the
    reference loop's, which computes the same loss. A loop that computes its loss inline is judged on it."""
    student.helper("use_contract_lm_loss", True)
    try:
        return student.train(*args, **kwargs)
    except Feedback as exc:
        if "ProbeLM" in str(exc.args[0] if exc.args else ""):  # it failed on a model the student did not write
            exc.args = (f"{exc.args[0]}\n{PROBE}", *exc.args[1:])
            exc.hint = f"{exc.hint}\n{PROBE}".strip()
        raise
    finally:
        try:
            student.helper("use_contract_lm_loss", False)
        except Feedback:  # the worker was stopped (a restart imports the file afresh): nothing to give back
            pass


def randomise_(module: nn.Module, gen: torch.Generator, scale: float = 1.0) -> nn.Module:
    """Overwrite every parameter of ``module`` with random values drawn from ``gen`` (in place).

    Matrices ~ N(0, scale²/fan_in) so activations keep unit scale; LayerNorm gains
    ~ 1 + N(0, 0.2²); every other vector ~ N(0, 0.3²·scale²). Values are rounded to
    float32 first, so the same numbers load into a float32 or a float64 model.
    """
    with torch.no_grad():
        for name, p in module.named_parameters():
            noise = torch.randn(p.shape, generator=gen, dtype=torch.float64)
            if p.dim() == 2 and "embedding" not in name:
                value = noise * scale / math.sqrt(p.shape[1])
            elif p.dim() == 2:
                value = noise * scale
            elif "norm" in name and name.endswith("weight"):
                value = 1.0 + 0.2 * noise
            else:
                value = 0.3 * scale * noise
            p.copy_(value.float().to(p.dtype))
    return module


def torch_block(d: int, h: int, ff: int, gen: torch.Generator) -> nn.TransformerEncoderLayer:
    """A float64 pre-norm ``nn.TransformerEncoderLayer`` (no dropout, batch_first) with random weights."""
    layer = nn.TransformerEncoderLayer(d, h, ff, dropout=0.0, batch_first=True, norm_first=True).double()
    return randomise_(layer, gen)


def state_dict_of(module: nn.Module, dtype: torch.dtype = torch.float64) -> dict:
    """Plain {name: tensor} copy of a module's state, to send to the student."""
    return {k: v.detach().clone().to(dtype) for k, v in module.state_dict().items()}


def with_own_buffers(model, sd: dict) -> dict:
    """``sd`` completed with the entries of ``model``'s own state_dict that ``sd`` lacks.

    The contract lets a TinyCausalLM keep its positional table as a persistent buffer (the course's
    lab does): it then sits in ``state_dict()`` but not in the reference's parameters. Loading the
    reference's parameters keeps the student's own table, while ``strict=True`` still reports any
    parameter that is missing or misnamed.
    """
    own = model.state_dict()
    return {**{k: v for k, v in own.items() if k not in sd}, **sd}


TABLE_LAYOUTS = ("(max_len, d_model)", "(1, max_len, d_model)", "(max_len, 1, d_model)")


def positional_table_keys(state: dict, max_len: int, d_model: int) -> list[str]:
    """Keys of ``state`` whose tensor has the shape of a positional table in one of the usual layouts:
    (max_len, d), (1, max_len, d) (batch first) or (max_len, 1, d) (PyTorch's own tutorial)."""
    shapes = {(max_len, d_model), (1, max_len, d_model), (max_len, 1, d_model)}
    return [k for k, v in state.items() if tuple(v.shape) in shapes]


def causal(T: int) -> torch.Tensor:
    """Bool (T, T), True strictly above the diagonal (the future is blocked)."""
    return torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)


def random_mask(T: int, gen: torch.Generator, p: float = 0.4) -> torch.Tensor:
    """A random bool (T, T) mask, True = blocked, that never blocks the diagonal (no query is left with no key)."""
    mask = torch.rand(T, T, generator=gen) < p
    return mask & ~torch.eye(T, dtype=torch.bool)


def tokens(n: int, length: int, vocab: int, gen: torch.Generator, first: tuple[int, int] | None = None) -> torch.Tensor:
    """Random long (n, length) tokens; ``first=(lo, hi)`` restricts the first column to [lo, hi)."""
    out = torch.randint(vocab, (n, length), generator=gen)
    if first is not None:
        out[:, 0] = torch.randint(first[0], first[1], (n,), generator=gen)
    return out


def counting(n: int, gen: torch.Generator, vocab: int = 8, length: int = 12) -> torch.Tensor:
    """The course's modular counting rows: long (n, length + 1)."""
    starts = torch.randint(vocab, (n, 1), generator=gen)
    return (starts + torch.arange(length + 1)) % vocab


def fmt(values) -> str:
    """A short list of floats for a message."""
    return "[" + ", ".join(f"{float(v):.6g}" for v in values) + "]"


def expect_grad_off_in_source(student, name: str, what: str) -> None:
    """The no_grad tests' evidence: the grader's own reading of the submitted file (the function or the
    module functions it calls use torch.no_grad, inference_mode or set_grad_enabled). The probe model's
    log, written inside the student's process, may only fail a test, never pass one."""
    found = bool(student.grad_off(name))  # a live with-block or decorator around a call (grading/grad_scope.py)
    expect_true(
        found,
        f"{what}: {name} (or a function of your file it calls) never uses torch.no_grad() (read from your "
        "source): wrap the model calls in `with torch.no_grad():`.",
        got=found,  # what the diagnosis compares: a catalogued mistake's source read the same way
    )


def got_state(probe) -> dict:
    """The weights of a probe (or model) in the student's worker, read back as plain tensors."""
    return {k: torch.as_tensor(v) for k, v in probe.state_dict().items()}


# One full-batch epoch of a loop that trains moves the weights downhill: Adam's first step is about -lr * sign(g),
# whose cosine with -g (g the gradient of the training loss at the initial weights) was 0.52 to 0.74 over 36 probes
# and learning rates, for the reference and for every catalogued slip of the loop (an ignored lr, Adam for AdamW,
# no clipping, no zero_grad, eval mode while training); weights that only moved (+0.01 each) gave -0.15 to 0.22.
DOWNHILL_COS = 0.35


def expect_a_loop_that_trains(student, reference, probe_args, seed, train_tokens, val_tokens, lr) -> None:
    """A test of a property of the loop (reproducibility, eval mode, no_grad, shuffling, the checkpoint) pays only
    for a loop that trains. The grader runs the student's loop for one full-batch epoch on
    ``ProbeLM(*probe_args, seed=seed)`` and checks, on the weights read back, that the step went downhill
    (DOWNHILL_COS). A made-up history beside weights that only moved earns nothing, whatever it reports."""
    probe, local = probe_pair(student, *probe_args, seed=seed)
    train_alone(student, probe, train_tokens, val_tokens, epochs=1, lr=lr, batch_size=len(train_tokens), seed=seed)
    after = got_state(probe)
    local.train()
    reference.lm_loss(local, train_tokens).backward()  # the grader's own gradient at the initial weights
    params = list(local.named_parameters())
    step = torch.cat([(torch.as_tensor(after.get(k, p), dtype=torch.float64) - p.detach()).flatten() for k, p in params])
    grad = torch.cat([p.grad.flatten() for _, p in params])
    cos = float(-(step @ grad) / (step.norm() * grad.norm() + 1e-300))
    expect_true(
        cos > DOWNHILL_COS,
        f"train(probe model, epochs=1, lr={lr}, batch_size={len(train_tokens)}): the one step the loop took does not go "
        f"downhill (cosine {cos:.2f} between the change of the weights and minus the gradient of the training loss; "
        f"a training step gives more than {DOWNHILL_COS}). (This test checks a property of the loop, and pays only "
        "for a loop that trains: zero_grad, lm_loss, backward, clip, optimizer.step().)",
    )
