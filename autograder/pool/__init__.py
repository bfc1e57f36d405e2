"""Many submissions graded side by side, for a course's staff: ``grade-all`` and the release's catalogue.

``parallel.py`` splits the jobs over ``grade-many`` processes (each its own worker user) and follows them.
Not in autograder.zip (config.INSTRUCTOR_ONLY): a platform grades one submission per container.
"""
