"""generate: greedy decoding on a probe model, against the reference."""

import copy

import pytest
import torch
from support_transformer import expect_grad_off_in_source, probe_pair, tokens

from autograder.checks import expect_close, expect_true

pytestmark = pytest.mark.grades("generate")  # the function these tests grade (summary, dashboard, pytest -m)

VOCAB = 7
# (prompt length, n_new, max_len): the second case starts longer than the context window
CASES = {"short prompt": (3, 5, 16), "prompt longer than max_len": (7, 6, 5)}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_generate_matches_reference(student, reference, gen, seed, case):
    """generate: greedy tokens from the last position, context cropped to max_len"""
    T0, n_new, max_len = CASES[case]
    probe, local = probe_pair(student, VOCAB, 8, max_len, seed=seed)
    prompt = tokens(2, T0, VOCAB, gen)
    want = reference.generate(local, prompt, n_new)
    got = student.generate(probe, prompt, n_new)
    what = (f"generate(probe model with max_len={max_len}, prompt of shape {tuple(prompt.shape)}, n_new={n_new}), "
            "the prompt followed by the new tokens")
    expect_close(
        got, want, what,
        atol=0,  # tokens are integers
        hint="Greedy decoding: feed the last max_len tokens (tokens[:, -model.max_len:]), take the argmax of the "
        "logits at the LAST position (logits[:, -1]), append it, repeat; the prompt stays at the front. "
        "Generate in eval mode (model.eval()), where dropout-like layers are off.",
    )


def _greedy_in_train_mode(model, prompt, n_new):
    """Greedy decoding with the model left in train mode (what a generate without model.eval() computes)."""
    model = copy.deepcopy(model).train()
    out = prompt
    with torch.no_grad():
        for _ in range(n_new):
            logits = model(out[:, -model.max_len:])
            out = torch.cat([out, logits[:, -1].argmax(dim=-1, keepdim=True)], dim=1)
    return out


def test_generate_eval_mode(student, reference, gen, seed):
    """generate: runs the model in eval mode (a model handed over in train mode)"""
    # The probe's train mode scales its features (a fixed "dropout"), so its greedy tokens differ between the
    # modes. The grader picks a prompt on which they do, and compares the tokens generate returns with the
    # reference's on a grader-side copy of the same model: nothing the student's process says about its own
    # mode is evidence, only the tokens it returned.
    n_new = 4
    probe, local = probe_pair(student, VOCAB, 8, 16, seed=seed)
    local.train()
    for _ in range(8):                                  # about half the random prompts tell the modes apart
        prompt = tokens(3, 3, VOCAB, gen)
        want = reference.generate(copy.deepcopy(local), prompt, n_new)
        in_train_mode = _greedy_in_train_mode(local, prompt, n_new)
        if not torch.equal(want, in_train_mode):
            break
    probe.train()
    got = student.generate(probe, prompt, n_new)
    expect_close(
        got, want,
        f"generate(probe model left in train mode, prompt of shape {tuple(prompt.shape)}, n_new={n_new}), the prompt "
        "followed by the new tokens",
        atol=0,  # tokens are integers
        hint=_mode_hint(got, in_train_mode),
    )


def _mode_hint(got, in_train_mode):
    """The cause the tokens show: greedy decoding in train mode (model.eval() missing), or not greedy decoding
    at all (sampling, a temperature: a generate that does call eval() must not be told to call it)."""
    if isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(in_train_mode.shape):
        if got.tolist() == in_train_mode.tolist():
            return ("Your tokens are what greedy decoding gives with the model left in train mode. Generation is "
                    "inference: call model.eval() first (dropout-like layers off), whatever mode the model was "
                    "handed over in, then decode greedily inside torch.no_grad().")
    return ("Your tokens are neither those of greedy decoding in eval mode nor those of greedy decoding in train "
            "mode: each new token must be the argmax of the logits at the last position (no sampling, no "
            "temperature), appended before the next step, with the model in eval mode.")


def _calls_with_grad(log):
    return sum(bool(c.get("grad_enabled")) for c in log if isinstance(c, dict))


def test_generate_no_grad(student, gen, seed):
    """generate: runs the model inside torch.no_grad()"""
    # torch.no_grad() changes none of the tokens generate returns. What pays is the grader's own reading of
    # the source (expect_grad_off_in_source); the probe model's log of torch.is_grad_enabled(), written inside
    # the student's process, can only fail the test. Eval mode, which does change the tokens, is
    # test_generate_eval_mode.
    prompt = tokens(2, 3, VOCAB, gen)
    probe, _ = probe_pair(student, VOCAB, 8, 16, seed=seed)
    student.generate(probe, prompt, 4)
    log = probe.call_log()

    expect_true(len(log) > 0, "generate(probe model, prompt (2, 3), n_new=4) never called the model.")
    expect_grad_off_in_source(student, "generate", "generate(probe model, prompt (2, 3), n_new=4)")
    with_grad = _calls_with_grad(log)
    expect_true(
        with_grad == 0,
        f"generate(...): {with_grad} of {len(log)} model calls ran with gradients enabled. Wrap the loop in "
        "`with torch.no_grad():` (nothing is trained here, so no graph should be built).",
        got=with_grad,
    )
