"""The platforms that grade with the engine, one module per job; each renders the same grading record.

Gradescope: :mod:`.gradescope` is the entry point ``run_autograder`` calls; :mod:`.gradescope_sim` runs
``autograder.zip`` in a simulated ``/autograder`` tree (the self-check and the kit's tests).
PrairieLearn: :mod:`.prairielearn_question` builds ``dist/<a>/prairielearn/`` (the question folder,
the grading package for ``serverFilesCourse/`` and the grader image's Dockerfile);
:mod:`.prairielearn` is the entry point the package's ``run_grader.sh`` calls;
:mod:`.prairielearn_results` renders the grading's record in PrairieLearn's schema;
:mod:`.prairielearn_sim` runs the package in a simulated ``/grade`` tree; and
:mod:`.prairielearn_proofs` is the release self-check's proof of it. Both entry points find their package's one
assignment and arm their last resort through :mod:`.entry`.
"""
