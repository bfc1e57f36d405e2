"""The same numbers on every machine: the CPU code paths grading runs on, pinned.

The same float64 softmax computed with AVX-512 and with AVX2 kernels can differ in its last bit,
and a student's code that compares a running sum with a threshold (``cumsum <= top_p``) then keeps
a token on one machine and drops it on another: the same submission would score differently on
two machines. Grading therefore runs every process that computes a graded value (the grader, its
reference and diagnosis, the student's worker) on one set of kernels, whatever the CPU offers:

* ``ATEN_CPU_CAPABILITY=avx2``: PyTorch's vectorised kernels (elementwise, reductions, sort, cumsum);
* ``MKL_CBWR=AVX2``: Intel MKL's conditional numerical reproducibility (matmul, BLAS, LAPACK);
* ``ONEDNN_MAX_CPU_ISA=AVX2``: oneDNN's kernels;
* one thread each (``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` and ``torch.set_num_threads(1)``), so no
  reduction is split differently by the thread count.

Every x86-64 server of the last decade (Gradescope's included) has AVX2; on one without it PyTorch
falls back to its scalar kernels (said in the grader's log). These variables are read when torch is
first imported, so :func:`pin` runs when ``autograder`` is imported, before anything imports torch,
and the worker's environment (``sandbox.worker``) carries the same values.
"""

from __future__ import annotations

import os
import sys

PINNED_ENV = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "AVX2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def pin() -> bool:
    """Pin this process's numerics (before torch is imported); False when torch was imported first."""
    if os.environ.get("KIT_UNPINNED_NUMERICS") == "1":  # the kit's own test that pinning is what makes grades equal
        return True
    os.environ.update(PINNED_ENV)
    return "torch" not in sys.modules


def torch_threads() -> int:
    """1, except in the kit's own unpinned determinism check (``KIT_TORCH_THREADS``)."""
    if os.environ.get("KIT_UNPINNED_NUMERICS") == "1":
        return int(os.environ.get("KIT_TORCH_THREADS", "1"))
    return 1


def describe() -> str:
    """One line for the grader's log: the kernels in use."""
    import torch

    return (
        f"numerics: torch CPU kernels {torch.backends.cpu.get_cpu_capability()}, MKL_CBWR={os.environ.get('MKL_CBWR')}, "
        f"{torch.get_num_threads()} thread(s)"
    )
