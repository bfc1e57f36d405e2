"""The trust boundary: where student code runs, as whom, with what, and how it ends.

What it guarantees (the README's threat model has the long form), on every
grading path (Gradescope, ``grade``, ``grade-all``, the release self-check),
because every path starts student code through :class:`Worker`:

* Student code runs only in a worker process, never in the grader that holds
  the reference, the expected values and the results.
* As root, the worker runs as an unprivileged user of its own (one per
  concurrent grader); where the platform allows namespaces it has no network,
  read-only disks, a small private tmpfs on every world-writable folder, a
  /proc that shows no other process and an IPC namespace of its own. The
  reference, hidden tests, catalogue, zips and caches are made unreadable to
  it (:func:`protect_secrets`), and its staged files are readable by that one
  user only. Without root the grader logs that isolation is reduced.
* The channel to the worker is bounded and validated, with a deadline on every
  write and read (``channel.py``); a malformed answer is the student's failure.
* Limits: address space and file size, processes, memory (the RSS of all its
  processes plus the shared memory it holds outside them: memfds, System V
  segments, files in memory-backed folders), disk, lower CPU priority; the
  per-request deadline comes from the caller.
* Every process of the student is killed, until none is left, before results
  are written, and its IPC objects and files in world-writable folders are
  removed (``proctree.py``).

Parts: ``users`` (accounts, secrets), ``staging`` (the worker's files),
``proctree`` (finding and killing processes, leftover files), ``channel`` (the
pipes), ``capture`` (printed output), ``limits`` (the limits and how a worker is
stopped), ``isolation`` (what the platform allows, probed once), ``zygote`` (the
template every worker is forked from), ``watchdog`` (processes, memory and disk,
counted while a worker answers), ``worker`` (one student's process).
"""

from .isolation import isolation_summary, namespaces_available
from .limits import Limits, WorkerDied, WorkerMemory, WorkerProtocol, WorkerTimeout
from .users import running_as_root
from .worker import Worker
from .zygote import Zygote

__all__ = [
    "Limits",
    "Worker",
    "WorkerDied",
    "WorkerMemory",
    "WorkerProtocol",
    "WorkerTimeout",
    "Zygote",
    "isolation_summary",
    "namespaces_available",
    "running_as_root",
]
