"""Grading one submission: unpack it, run the suites against it behind the seam, keep each test's record.

``grade.py`` owns a grading start to end (``Grading``); ``submission.py`` unpacks the upload
(``notebook_upload.py`` a notebook's code cells, ``notebook_statements.py`` what they define; ``bounded.py`` runs
every reader of a student's bytes in a child of its own, within limits); ``seam.py`` is the only door from a test to student
code (``local.py`` the in-process student the diagnoser replays with; ``student.py`` the interface both
implement); ``scoring.py`` turns pytest's reports into records (``record.py``); ``results.py`` and
``feedback_text.py`` render them; ``recipes.py`` records the calls probe models make; ``numerics.py``
pins the CPU kernels; ``text_limits.py`` cuts text where a reader can stop. Many submissions side by side (grade-all, the
release's self-check) are the instructor's ``pool/parallel.py``.
"""
