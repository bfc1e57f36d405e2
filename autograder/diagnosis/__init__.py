"""Naming the classic mistake behind a failed test (a layer: with it off, grading still works).

``diagnoser.py`` compares a failure with each catalogued mistake (replaying the call that produced the
value, or the whole test through ``replay.py``) within a budget of its own, and keeps only the mistakes
that explain everything the submission did.
"""
