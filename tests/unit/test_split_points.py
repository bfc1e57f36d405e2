"""Parametrized cases share a test's points in exact binary fractions, so every sum is exact."""

import itertools

from autograder.grading.scoring import split_points


def test_quarters_remainder_to_first_cases():
    assert split_points(7, 3) == [2.5, 2.25, 2.25]
    assert split_points(2, 3) == [0.75, 0.75, 0.5]
    assert split_points(4, 2) == [2.0, 2.0]


def test_any_order_of_summation_is_exact():
    # 0.34 + 0.33 + 0.33 in floating point is not 1; quarters always are
    for points, n in itertools.product(range(1, 13), range(1, 9)):
        if points * 4 < n:
            continue  # hundredths, tested below
        cases = split_points(points, n)
        assert len(cases) == n and min(cases) > 0
        assert sum(cases) == points and sum(reversed(cases)) == points, (points, n, cases)
        assert all(c * 4 == int(c * 4) for c in cases), (points, n, cases)


def test_more_cases_than_quarters_falls_back_to_hundredths():
    cases = split_points(1, 6)
    assert all(c > 0 for c in cases) and round(sum(cases), 9) == 1
