"""Helpers the grader runs in the student's worker (``student.helper(...)``).

Non-secret: this file runs beside the student's code and holds no expected value.

* ``warnings_of``: the warnings one call of a function of the student's module raises (the
  contract's "no warning" for ``ppmi``: a ``RuntimeWarning`` from a division by zero is a defect).
  A warning can only cost the test it appears in; its absence earns nothing on its own (the
  test's values are compared with the reference first).

Each helper has a ``run_*`` twin taking the module, which the grader runs on the reference and on
each catalogued mistake (for diagnosis).
"""

from __future__ import annotations

import sys
import warnings

MODULE = "embeddings"


def warnings_of(name: str, *args, **kwargs) -> list:
    """``run_warnings_of`` on the student's module."""
    return run_warnings_of(sys.modules[MODULE], name, *args, **kwargs)


def run_warnings_of(module, name: str, *args, **kwargs) -> list:
    """The first five warnings ``module.<name>(*args, **kwargs)`` raises, as "Category: message" (every
    warning shown, whatever filters the module set)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        getattr(module, name)(*args, **kwargs)
    return [f"{w.category.__name__}: {str(w.message)[:200]}" for w in caught[:5]]
