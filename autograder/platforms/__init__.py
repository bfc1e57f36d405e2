"""The platforms that grade with the engine, one module per job; each renders the same grading record.

Gradescope: :mod:`.gradescope` is the entry point ``run_autograder`` calls. PrairieLearn: :mod:`.prairielearn`
is the entry point the grading package's ``run_grader.sh`` calls (and says the question's timeout);
:mod:`.prairielearn_results` renders the grading's record in PrairieLearn's schema. Both entry points find
their package's one assignment and arm their last resort through :mod:`.entry`. What builds, simulates and
proves each platform's release is the release's (``autograder/release/``: ``gradescope_sim``,
``prairielearn_question``, ``prairielearn_sim``, ``prairielearn_proofs``), which the zips do not ship.
"""
