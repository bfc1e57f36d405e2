"""generate: greedy decoding on a probe model, against the reference."""

import copy

import pytest
from support_transformer import probe_pair, tokens

from autograder.checks import expect_close, expect_true, replay

VOCAB = 7
# (prompt length, n_new, max_len): the second case starts longer than the context window
CASES = {"short prompt": (3, 5, 16), "prompt longer than max_len": (7, 6, 5)}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_generate_matches_reference(student, reference, gen, seed, case):
    """generate: greedy tokens from the last position, context cropped to max_len"""
    T0, n_new, max_len = CASES[case]
    probe, local = probe_pair(student, VOCAB, 8, max_len, seed=seed)
    prompt = tokens(2, T0, VOCAB, gen)
    # the diagnoser replays generate on a copy of the twin as it was before the reference ran
    call = {"fn": "generate", "args": (copy.deepcopy(local), prompt, n_new), "kwargs": {}}
    want = reference.generate(local, prompt, n_new)
    with replay(call):
        got = student.generate(probe, prompt, n_new)
    what = (f"generate(probe model with max_len={max_len}, prompt of shape {tuple(prompt.shape)}, n_new={n_new}), "
            "the prompt followed by the new tokens")
    expect_close(
        got, want, what,
        atol=0,  # tokens are integers
        call=call,
        hint="Greedy decoding: feed the last max_len tokens (tokens[:, -model.max_len:]), take the argmax of the "
        "logits at the LAST position (logits[:, -1]), append it, repeat; the prompt stays at the front. "
        "Generate in eval mode (model.eval()), where dropout-like layers are off.",
    )


def test_generate_eval_mode_no_grad(student, gen, seed):
    """generate: runs the model in eval mode without gradients"""
    probe, _ = probe_pair(student, VOCAB, 8, 16, seed=seed)
    probe.train()
    student.generate(probe, tokens(2, 3, VOCAB, gen), 4)
    calls = probe.call_log()
    expect_true(len(calls) > 0, "generate(probe model, prompt (2, 3), n_new=4) never called the model.")
    in_train_mode = sum(c["training"] for c in calls)
    expect_true(
        in_train_mode == 0,
        f"generate(...): {in_train_mode} of {len(calls)} model calls ran in train mode. Call model.eval() first: "
        "generation is inference.",
    )
    with_grad = sum(c["grad_enabled"] for c in calls)
    expect_true(
        with_grad == 0,
        f"generate(...): {with_grad} of {len(calls)} model calls ran with gradients enabled. Wrap the loop in "
        "`with torch.no_grad():` (nothing is trained here, so no graph should be built).",
    )
