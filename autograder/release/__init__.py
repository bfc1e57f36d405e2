"""Building and proving a release, and the instructor's tools around it (not in autograder.zip: no grading
imports them; tests/unit/test_layout.py holds that).

``build.py`` is the ``release`` command start to end; ``student_folder.py``, ``zips.py`` and
``markers.py`` make what students and Gradescope receive; ``selfcheck.py`` runs the registered proofs
(``proofs.py``, ``catalogue_proofs.py``, ``zip_proofs.py``) on gradings ``catalogue_grading.py`` makes and
caches; ``caught_by.py``, ``mutants.py``, ``snapshot.py``, ``determinism.py`` and ``bench.py`` measure the
tests; ``scaffold.py`` and ``rename.py`` help an author; ``functions.py`` says which functions an
assignment grades; ``notebooks.py`` builds the lab notebooks and Otter checks; ``prairielearn_question.py``
builds the PrairieLearn question and ``prairielearn_proofs.py`` proves it; ``gradescope_sim.py`` and
``prairielearn_sim.py`` run a built release in a simulated ``/autograder`` or ``/grade`` tree; ``checkout.py``
chooses which kit checkout a staff's command works on.
"""
