"""Platforms other than Gradescope that grade with the same engine, one module per job.

PrairieLearn: :mod:`.prairielearn_question` builds ``dist/<a>/prairielearn/`` (the question folder,
the grading package for ``serverFilesCourse/`` and the grader image's Dockerfile);
:mod:`.prairielearn` is the entry point the package's ``run_grader.sh`` calls;
:mod:`.prairielearn_results` renders the engine's (Gradescope) results document in PrairieLearn's
schema; :mod:`.prairielearn_sim` runs the package in a simulated ``/grade`` tree; and
:mod:`.prairielearn_proofs` is the release self-check's proof of it.
"""
