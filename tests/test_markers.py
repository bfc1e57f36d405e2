"""Stubs are generated from the reference by solution markers."""

import pytest

from autograder.release.markers import MarkerError, make_stub

SOURCE = '''
def f(x):
    """Contract."""
    # BEGIN SOLUTION
    return x + 1
    # END SOLUTION


class M:
    def forward(self, x):
        # BEGIN SOLUTION
        return x
        # END SOLUTION

# BEGIN HIDDEN
def helper():
    return 1
# END HIDDEN
'''


def test_stub_replaces_bodies_and_keeps_contracts():
    stub = make_stub(SOURCE)
    assert '"""Contract."""' in stub
    assert 'raise NotImplementedError("f is not implemented yet")' in stub
    assert 'raise NotImplementedError("M.forward is not implemented yet")' in stub
    assert "return x + 1" not in stub and "def helper" not in stub


@pytest.mark.parametrize(
    "broken, message",
    [
        ("def f():\n    # BEGIN SOLUTION\n    return 1\n", "never closed"),
        ("def f():\n    return 1\n    # END SOLUTION\n", "without a matching BEGIN"),
        ("def f():\n    # BEGIN SOLUTION\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n", "inside the block"),
        ("# BEGIN SOLUTION\nx = 1\n# END SOLUTION\n", "inside a function"),
    ],
)
def test_malformed_markers_are_refused_with_the_line(broken, message):
    with pytest.raises(MarkerError, match=message):
        make_stub(broken)
