"""Diagnosis as a layer: a check on a value the seam recorded needs no hand-written call=."""

import gc

import torch

from autograder.checks import Feedback, as_float64, derived
from autograder.context import call_that_produced, per_test, record_call


def test_a_recorded_value_carries_its_call_into_feedback():
    value, weights = object(), object()
    with per_test():
        record_call((value, weights), {"fn": "scaled_dot_product_attention", "args": (1, 2, 3), "kwargs": {}})
        assert Feedback("differs", got=weights).call == {
            "fn": "scaled_dot_product_attention",
            "args": (1, 2, 3),
            "kwargs": {},
            "output": 1,
        }
        assert Feedback("differs", call={"fn": "other"}, got=value).call == {"fn": "other"}, "a hand-written call wins"


def test_unrecorded_and_small_values_have_no_call():
    with per_test():
        record_call(3, {"fn": "f", "args": (), "kwargs": {}})
        assert call_that_produced(3) is None and Feedback("x", got=object()).call is None


def test_the_record_lives_for_one_test_and_forgets_nothing_inside_it():
    """Per test (the scoring plugin's block), unbounded inside it, and gone after it; outside a test
    (a student's own machine) nothing is recorded."""
    first = object()
    with per_test():
        record_call(first, {"fn": "f", "args": (), "kwargs": {}})
        keep = [object() for _ in range(1000)]
        for value in keep:
            record_call(value, {"fn": "g", "args": (), "kwargs": {}})
        assert call_that_produced(first)["fn"] == "f" and call_that_produced(keep[-1])["fn"] == "g"
    assert call_that_produced(first) is None
    record_call(first, {"fn": "f", "args": (), "kwargs": {}})
    assert call_that_produced(first) is None


def test_a_value_is_never_taken_for_another_with_a_reused_id():
    with per_test():
        record_call(torch.zeros(3), {"fn": "f", "args": (), "kwargs": {}})  # held by the record: its id stays taken
        gc.collect()
        fresh = [torch.ones(3) for _ in range(200)]
        assert all(call_that_produced(t) is None for t in fresh)


def test_a_list_where_a_tuple_was_due_and_a_whole_tuple_are_recorded():
    """A student returning [out, weights] (not a tuple), or a tuple of words checked whole."""
    out, weights = object(), object()
    with per_test():
        record_call([out, weights], {"fn": "scaled_dot_product_attention", "args": (), "kwargs": {}})
        assert call_that_produced(weights)["output"] == 1 and call_that_produced(out)["output"] == 0
        words = ("bank", "river")
        record_call(words, {"fn": "nearest", "args": ("E",), "kwargs": {"n": 2}})
        assert call_that_produced(words) == {"fn": "nearest", "args": ("E",), "kwargs": {"n": 2}}


def test_a_converted_value_keeps_the_call_and_an_unrecorded_one_gets_none():
    got = torch.ones(2, 3, dtype=torch.float32)
    with per_test():
        record_call(got, {"fn": "softmax", "args": (), "kwargs": {}})
        converted = as_float64(got)
        assert converted.dtype == torch.float64 and call_that_produced(converted)["fn"] == "softmax"
        assert call_that_produced(as_float64(torch.zeros(2))) is None


def test_a_derived_layout_change_is_replayed_the_same_way():
    """``then`` says how the checked value comes from the call's: the diagnoser applies it to each replay."""
    got = torch.arange(6.0).reshape(2, 3)
    with per_test():
        record_call((got, None), {"fn": "f", "args": (), "kwargs": {}})
        row = derived(got, got[1].t(), then=lambda out: out[1])
        col = derived(row, row[0], then=lambda out: out[0])
        call = call_that_produced(col)
    assert call["output"] == 0 and float(call["then"](torch.arange(6.0).reshape(2, 3) * 10)) == 30.0
