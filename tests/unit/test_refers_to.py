"""Which of the file's functions a call runs, read from the source by the grader (``banned.refers_to``)."""

from autograder.banned import refers_to

SOURCE = """
import torch
from torch import nn

def softmax(x, dim=-1):
    return torch.exp(x) / torch.exp(x).sum(dim, keepdim=True)

def _helper(q, k):
    return softmax(q @ k.T)

def attention(q, k, v):
    return _helper(q, k) @ v

class Block(nn.Module):
    def forward(self, x):
        return attention(x, x, x)

def causal_mask(n):
    return torch.ones(n, n).triu(1).bool()

alias = attention
"""


def test_refers_to_follows_helpers_classes_and_aliases():
    reach = refers_to(SOURCE)
    assert reach["attention"] == {"_helper", "softmax"}
    assert reach["Block"] == {"attention", "_helper", "softmax"}
    assert reach["alias"] == {"attention", "_helper", "softmax"}
    assert reach["causal_mask"] == set()
    assert "torch" not in reach["softmax"]  # imports are names of the file too, but refer to none of its functions


def test_a_file_that_does_not_parse_refers_to_nothing():
    assert refers_to("def broken(:\n") == {}


def test_recursion_ends():
    assert refers_to("def f(n):\n    return g(n)\n\ndef g(n):\n    return f(n - 1) if n else 0\n")["f"] == {"g"}


def test_an_expression_nested_past_the_recursion_limit_is_read():
    """The red team's file (2026-12-05): a correct solution with ``_y = 1 + 1 + ...`` (600 terms), which Python
    imports, crashed the grader's scan (a recursive walk): 0 points and "internal error (RecursionError)"."""
    from autograder.banned import scan_source

    deep = SOURCE + "\n_y = " + " + ".join(["1"] * 900) + "\n\ndef sneaky(x):\n    return x.softmax(-1)\n"
    assert scan_source(deep, ["torch.softmax"]) == {"sneaky": {"torch.softmax": (26, "x.softmax")}}
    assert refers_to(deep)["alias"] >= {"attention"}
