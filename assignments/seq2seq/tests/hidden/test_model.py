"""Hidden tests for AttnSeq2Seq: step, forward (teacher forcing) and generate (free running).

The reference model gets weights from the test's seed; the same state_dict is
loaded into the student's model with strict=True, and both run in float64.
"""

import pytest
import torch
from support_seq2seq import (
    VOCAB,
    random_tokens,
    seeded_model,
    shifted,
    state_dict_of,
    student_model,
)

from autograder.checks import derived, expect_close, expect_dtype, expect_shape, expect_true

SIZES = [{"hidden": 32, "emb": 32}, {"hidden": 16, "emb": 8}]  # the default, and a non-default size
SIZE_IDS = ["h32-e32", "h16-e8"]
# Scale 3 on PyTorch's default init gives attention scores of order 1, so the weights are far
# from uniform and every term of step() (both contexts, the new state) moves the logits.
SCALE = 3.0


def _models(student, reference, seed, size):
    ref = seeded_model(reference.AttnSeq2Seq, seed, scale=SCALE, vocab=VOCAB, **size)
    sd = state_dict_of(ref)
    return ref, sd, student_model(student, "AttnSeq2Seq", sd, vocab=VOCAB, **size)


@pytest.mark.grades("AttnSeq2Seq.step")
@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_step_matches_reference(student, reference, gen, seed, size):
    """AttnSeq2Seq.step: logits and new state equal the reference's (same weights, float64)"""
    ref, _sd, model = _models(student, reference, seed, size)
    B, T, h = 5, 6, size["hidden"]
    tok = random_tokens(gen, B, 1, high=VOCAB - 1)[:, 0]  # (B,) digits and BOS
    state = torch.randn(B, h, generator=gen, dtype=torch.float64)
    enc = torch.randn(B, T, h, generator=gen, dtype=torch.float64)
    got = model.step(tok, state, enc)
    where = f"AttnSeq2Seq({size}).step(tok {tuple(tok.shape)}, state {tuple(state.shape)}, enc {tuple(enc.shape)})"
    expect_true(
        isinstance(got, (tuple, list)) and len(got) == 2,
        f"{where} must return a pair (logits, new_state); got {type(got).__name__}.",
    )
    with torch.no_grad():
        want_logits, want_state = ref.step(tok, state, enc)
    # 1e-10: float64 throughout; a correct implementation differs from the reference by ~1e-14.
    expect_close(
        got[1], want_state, f"{where}: new state", atol=1e-10,
        hint="The new state is cell(cat[emb(tok), context], state) where context = attend(state, enc)[0] is "
        "computed from the OLD state: the decoder looks at the input before it reads tok.",
    )
    expect_close(
        got[0], want_logits, f"{where}: logits", atol=1e-10,
        hint="The logits are out(cat[new_state, attend(new_state, enc)[0]]): attend a second time, with the "
        "NEW state, and concatenate the state first, then the context.",
    )


@pytest.mark.grades("AttnSeq2Seq.forward")
@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_forward_matches_reference(student, reference, gen, seed, size):
    """AttnSeq2Seq.forward: teacher-forced logits equal the reference's (same weights, float64)"""
    ref, _sd, model = _models(student, reference, seed, size)
    B, T = 4, 7
    src = random_tokens(gen, B, T)
    tgt_in = shifted(src)
    got = model(src, tgt_in)
    with torch.no_grad():
        want = ref(src, tgt_in)
    where = f"AttnSeq2Seq({size})(src {tuple(src.shape)}, tgt_in {tuple(tgt_in.shape)})"
    expect_shape(got, (B, T, VOCAB), where)
    # 1e-10: float64; seven recurrent steps of a correct implementation stay within ~1e-13.
    expect_close(
        got, want, f"{where}: teacher-forced logits", atol=1e-10,
        hint="Run the encoder over emb(src), start the decoder from the encoder's LAST hidden state "
        "(not zeros), and at step t feed tgt_in[:, t] (BOS, then the true previous digit), never src[:, t].",
    )


@pytest.mark.grades("AttnSeq2Seq.generate")
@pytest.mark.parametrize("size", SIZES, ids=SIZE_IDS)
def test_generate_matches_reference(student, reference, gen, seed, size):
    """AttnSeq2Seq.generate: greedy free-running tokens equal the reference's (same weights, float64)"""
    ref, _sd, model = _models(student, reference, seed, size)
    B, T = 16, 9
    src = random_tokens(gen, B, T)
    got = model.generate(src, T)
    want = ref.generate(src, T)
    where = f"AttnSeq2Seq({size}).generate(src {tuple(src.shape)}, length={T})"
    expect_shape(got, (B, T), where)
    expect_dtype(got, torch.long, where)
    # Exact: float64 logits of random weights have no near-ties, so the argmax is unambiguous.
    got = derived(got, torch.as_tensor(got))  # keeps the record of model.generate: the diagnosis replays it
    bad = got != want
    if bad.any():
        b, t = (int(i) for i in bad.nonzero()[0])
        expect_true(
            False,
            f"{where}: {int(bad.sum())} of {bad.numel()} generated tokens differ from the reference's, the first "
            f"at sequence {b}, position {t} (expected {want[b].tolist()}, got {got[b].tolist()}). "
            "Free running starts from BOS (token 10) and the encoder's last hidden state, and at each step "
            "feeds back the model's OWN previous prediction (the argmax of the logits), not the true digit.",
            got=got,
        )
