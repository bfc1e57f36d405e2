"""The assignment is to write softmax and attention by hand: PyTorch's versions are banned.

The worker records every call to a banned function (assignment.toml's `banned`)
while the student's code runs, and the call then fails with a message naming it.
So every test of softmax or attention fails for a submission that calls them;
these tests make the rule visible as a line of its own per function in the results
(one test per function, so each function's summary and gradebook column carries its own point).
"""

import pytest
from support_attention import randn, random_mask

from autograder.checks import expect_close


@pytest.mark.grades("softmax")
def test_softmax_by_hand(student, reference, gen):
    """softmax: the reference's values on random inputs, computed by hand (no PyTorch softmax)"""
    x = randn(gen, (3, 5))
    # the reference's rounding only (1e-12 in float64); the point is which functions ran
    expect_close(student.softmax(x), reference.softmax(x), "softmax(x) for x of shape (3, 5), float64", atol=1e-12)


@pytest.mark.grades("scaled_dot_product_attention")
def test_sdpa_by_hand(student, reference, gen):
    """scaled_dot_product_attention: the reference's output on random masked inputs, computed by hand (no PyTorch attention or softmax)"""
    q, k, v = randn(gen, (2, 4, 6)), randn(gen, (2, 5, 6)), randn(gen, (2, 5, 3))
    mask = random_mask(gen, (2, 4, 5))
    got = student.scaled_dot_product_attention(q, k, v, mask=mask)
    want = reference.scaled_dot_product_attention(q, k, v, mask)
    expect_close(got[0], want[0], "the attention output for q (2, 4, 6), k (2, 5, 6), v (2, 5, 3), mask (2, 4, 5)",
                 atol=1e-10)
