"""TransformerBlock: the pre-norm block against PyTorch's nn.TransformerEncoderLayer."""

import pytest
import torch
from support_transformer import causal, random_mask, state_dict_of, torch_block

from autograder.checks import expect_close, expect_true

pytestmark = pytest.mark.grades("TransformerBlock")  # the function these tests grade (summary, dashboard, pytest -m)

CASES = {
    "no mask": (16, 4, 32, 7, None),
    "causal mask": (16, 2, 24, 9, "causal"),
    "random mask": (12, 3, 20, 6, "random"),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_block_matches_torch(student, gen, case):
    """TransformerBlock: equals nn.TransformerEncoderLayer(norm_first=True) with the same weights (float64)"""
    d, h, ff, T, kind = CASES[case]
    layer = torch_block(d, h, ff, gen)
    mask = {"causal": causal(T), "random": random_mask(T, gen), None: None}[kind]
    x = torch.randn(3, T, d, generator=gen, dtype=torch.float64)
    want = layer(x, src_mask=mask).detach()                                   # torch: bool src_mask, True = blocked
    sd = state_dict_of(layer)

    block = student.TransformerBlock(d, h, ff)
    keys = sorted(block.state_dict().keys())
    expect_true(
        keys == sorted(sd),
        f"TransformerBlock({d}, {h}, {ff}).state_dict() keys: expected {sorted(sd)}, got {keys}. Name the "
        "sub-modules exactly as nn.TransformerEncoderLayer does: self_attn (the provided MultiHeadAttention), "
        "linear1, linear2, norm1, norm2 (and no other parameters: no dropout layers with weights, no extra norm).",
    )
    block.double()
    block.load_state_dict(sd)
    got = block(x, mask=mask)
    expect_close(
        got, want,
        f"TransformerBlock({d}, {h}, {ff}) on x of shape {tuple(x.shape)} (float64), mask={kind}",
        atol=1e-10,  # float64 round-off of a few matrix products and two LayerNorms stays below 1e-12
        hint="The block is pre-norm: x = x + attn(norm1(x)), then x = x + linear2(relu(linear1(norm2(x)))). "
        "Normalising after the residual sum (post-norm, the original 2017 ordering), forgetting the ReLU, "
        "or passing the mask the wrong way round (True means blocked) each give different numbers.",
        # no call=: the block's recipe (built, double(), load_state_dict(sd)) is recorded by the seam
    )
