"""The student side of the trust boundary.

Everything in this package is copied next to the student's file and runs in
the worker process, as an unprivileged user when the grader runs as root. It
must therefore hold nothing secret: no reference code, no expected values.
The grader side talks to it only through :mod:`.wire` messages.
"""
