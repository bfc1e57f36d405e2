"""A class's submissions: grade-all, the dashboard, the gradebooks, the term's rules, similar pairs.

``batch.py`` is ``grade-all`` start to end (``export.py`` reads the export, ``pool/parallel.py`` runs
the graders); ``cohort.py`` reads the results back into tests and rows (``flags.py``, ``class_stats.py``);
``report.py`` and ``student_pages.py`` write the dashboard and the per-student pages; ``gradebook.py``
the CSV files; ``late_policy.py`` and ``late_days.py`` the term's rules; ``similarity.py`` the similar pairs.
"""
