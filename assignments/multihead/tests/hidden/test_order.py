"""MultiHeadAttention is order-blind (the student's); sinusoidal_positions fix that (with torch's attention: "dog bites man")."""

import pytest
import torch
from support_multihead import expect_table, random_torch_mha, state_dict_of, student_mha, torch_forward

from autograder.checks import as_float64, expect_close, expect_true

D, H = 16, 2


@pytest.mark.grades("MultiHeadAttention")
def test_self_attention_is_permutation_equivariant(student, gen):
    """MultiHeadAttention: without positions, permuting the input rows permutes the output rows"""
    B, n = 2, 6
    mha = random_torch_mha(D, H, True, gen)
    m = student_mha(student, D, H, True, state_dict_of(mha))
    x = torch.randn(B, n, D, generator=gen, dtype=torch.float64)
    perm = torch.randperm(n, generator=gen)
    while bool((perm == torch.arange(n)).all()):
        perm = torch.randperm(n, generator=gen)
    where = f"MultiHeadAttention({D}, {H}) self-attention on x of shape {(B, n, D)} with its rows reordered by {perm.tolist()}"
    # the outputs are compared with each other, so each must first be numbers (True/False patterns of a
    # right answer are reordered as well as the answer is)
    out, w = (as_float64(v, f"{where}: {name}") for v, name in zip(m(x, x, x), ("output", "weights")))
    out_p, w_p = (as_float64(v, f"{where}: {name}") for v, name in zip(m(x[:, perm], x[:, perm], x[:, perm]), ("output", "weights")))
    # 1e-10: the same float64 sums in a different order
    expect_close(out_p, out[:, perm], f"{where}: output", atol=1e-10,
                 hint="Self-attention without positions treats its input as a set: reordering the tokens must "
                 "just reorder the outputs. If it does not, your code mixes positions, e.g. split_heads with a "
                 "view(B, h, T, d_h) instead of reshape + transpose.")
    expect_close(w_p, w[:, :, perm][:, :, :, perm], f"{where}: weights", atol=1e-10,
                 hint="Reordering the tokens must reorder both the query rows and the key columns of every head's weights.")
    # pays only when the same call's values are right too (zeros, or uniform weights, are equivariant too)
    for got, want, name in zip((out, w), torch_forward(mha, x, x, x), ("output", "weights")):
        expect_close(got, want, f"MultiHeadAttention({D}, {H}) self-attention on x of shape {(B, n, D)}: {name}", atol=1e-10,
                     hint="(This test checks a property, and pays only when the values of the same call are right too.)")


@pytest.mark.grades("sinusoidal_positions")
def test_positions_break_equivariance(student, gen):
    """sinusoidal_positions: adding them tells "dog bites man" from "man bites dog" """
    # torch's attention, not the student's: this test grades the table alone (a slip in MultiHeadAttention is
    # charged by that module's own tests, among them the equivariance above). Without positions, 'bites' sees
    # the same set of words in both sentences, and torch's float64 output for it is the same.
    mha = random_torch_mha(D, H, True, gen)

    def m(q, k, v):
        return torch_forward(mha, q, k, v)

    dog, bites, man = torch.randn(3, D, generator=gen, dtype=torch.float64)
    a = torch.stack([dog, bites, man])[None]      # (1, 3, D) "dog bites man"
    b = torch.stack([man, bites, dog])[None]      # (1, 3, D) "man bites dog"
    pe = as_float64(student.sinusoidal_positions(3, D), f"sinusoidal_positions(3, {D})")   # (3, D)
    expect_table(pe, 3, D)
    a_pos, b_pos = a + pe, b + pe
    out_a, _ = m(a_pos, a_pos, a_pos)
    out_b, _ = m(b_pos, b_pos, b_pos)
    diff = float((out_a[0, 1] - out_b[0, 1]).abs().max())
    scale = float(out_a[0, 1].abs().max())
    # with a correct table the two outputs differ by at least 3.8e-3 of their size (2000 random
    # draws; 7e-2 for the 5-token check below); 1e-6 only fails when position information is absent
    expect_true(
        diff > 1e-6 * max(1.0, scale),
        f"sinusoidal_positions(3, {D}) added to the tokens: the output for 'bites' is still the same in "
        f"'dog bites man' and 'man bites dog' (largest difference {diff:.2g}). Each position must get a different "
        "vector, otherwise attention still sees a set of words: does your angle use pos?",
    )
    x = torch.randn(1, 5, D, generator=gen, dtype=torch.float64)
    perm = torch.tensor([4, 2, 0, 3, 1])
    pe5 = as_float64(student.sinusoidal_positions(5, D), f"sinusoidal_positions(5, {D})")
    expect_table(pe5, 5, D)
    out, _ = m(x + pe5, x + pe5, x + pe5)
    xp = x[:, perm] + pe5
    out_p, _ = m(xp, xp, xp)
    gap = float((out_p - out[:, perm]).abs().max())
    expect_true(
        gap > 1e-6 * max(1.0, float(out.abs().max())),
        f"With sinusoidal_positions(5, {D}) added, reordering 5 tokens by {perm.tolist()} still just reorders the "
        f"outputs (largest difference {gap:.2g}): the positions carry no order information.",
    )
