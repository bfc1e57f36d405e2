"""Operations run the same way on both sides (e.g. gradients of a call).

Non-secret: used by the worker on student objects and by the grader on the
reference, so that both compute gradients with exactly the same recipe.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

# The global generator's state at the start of every test, in the worker and in each replay of the test on a
# catalogued mistake (diagnosis): code that draws from torch's global generator (instead of the generator it was
# given) draws the same numbers in both, whatever the worker ran before, so its values can be reproduced. It is
# none of the small seeds tests write out (seed=0): code that ignores the seed or generator it is given must not
# draw what that generator would. (The CPU generator keeps 32 bits of a seed, the per-test seeds' size: one of
# those equals it with probability 2**-32.)
TEST_SEED = 0x5EED5EED


def reseed(seed: int = TEST_SEED) -> None:
    """Seed torch's CPU generator alone: the state ``torch.manual_seed`` gives it, without that function's lazy
    seeding of CUDA, XPU and MTIA, each of which formats the whole call stack."""
    torch.default_generator.manual_seed(seed)


def gradients(
    fn: Any,
    args: Sequence[Any],
    kwargs: dict | None = None,
    wrt: Sequence[int] = (0,),
    grad_outputs: Any = None,
    params: bool = False,
) -> dict:
    """Call ``fn(*args, **kwargs)`` and back-propagate ``grad_outputs``.

    ``wrt`` lists the positional arguments (tensors) to differentiate with
    respect to. ``grad_outputs`` is one tensor per tensor output (``None`` to
    skip an output); by default a ones tensor for the first output. With
    ``params=True`` and an ``nn.Module`` ``fn``, gradients of its named
    parameters are returned too. Returns ``{"output", "inputs", "params"}``;
    a gradient that does not reach an input is returned as ``None``.
    """
    args = list(args)
    leaves = []
    for i in wrt:
        args[i] = args[i].detach().clone().requires_grad_(True)
        leaves.append(args[i])
    named = list(fn.named_parameters()) if params and isinstance(fn, torch.nn.Module) else []
    if params:
        for _, p in named:
            p.grad = None
    output = fn(*args, **(kwargs or {}))
    outs = list(output) if isinstance(output, (tuple, list)) else [output]
    if grad_outputs is None:
        grad_outputs = [torch.ones_like(outs[0])] + [None] * (len(outs) - 1)
    elif isinstance(grad_outputs, torch.Tensor):
        grad_outputs = [grad_outputs] + [None] * (len(outs) - 1)
    pairs = [(o, g) for o, g in zip(outs, grad_outputs) if g is not None]
    for o, _ in pairs:
        if not isinstance(o, torch.Tensor) or not o.requires_grad:
            raise RuntimeError(
                "the output does not depend on the inputs through autograd "
                "(was it detached, converted with .item()/.numpy(), or built with torch.tensor(...)?)"
            )
    targets = leaves + [p for _, p in named]
    grads = torch.autograd.grad([o for o, _ in pairs], targets, [g.to(o.dtype) for o, g in pairs], allow_unused=True)
    return {
        "output": output,
        "inputs": list(grads[: len(leaves)]),
        "params": {name: g for (name, _), g in zip(named, grads[len(leaves) :])},
    }
