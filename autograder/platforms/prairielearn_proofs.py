"""The release self-check's proof of the PrairieLearn question (registered with :func:`.proofs.proof`).

One job: when the release builds PrairieLearn (course.toml's ``platforms``), grade the reference
and the untouched stub with the built ``prairielearn/`` folder in a simulated ``/grade`` tree
(:mod:`.prairielearn_sim`): 1.0 and 0.0, both gradable. It runs with the other ``zips`` proofs,
beside the catalogue's gradings, and is remembered once passed for the same sources
(``evidence.proven``), so an unchanged assignment re-checks in no time. Imported by
:mod:`autograder.release.build`, which registers it wherever the proofs are listed.
"""

from __future__ import annotations

from ..release.proofs import Evidence, Report, proof

PROVEN_KEY = "prairielearn"


@proof(
    "the PrairieLearn question (when course.toml builds it) grades the reference to 1.0 and the untouched stub "
    "to 0.0, both gradable, in a simulated /grade tree",
    stage="zips",
)
def prairielearn_question(evidence: Evidence, report: Report) -> None:
    assignment, proven = evidence.assignment, evidence.proven
    tree = evidence.staged / "prairielearn" if evidence.staged is not None else None
    if tree is None or not tree.is_dir():
        return  # the release does not build PrairieLearn
    from ..release.zip_proofs import artefact_hash

    what = f"{PROVEN_KEY}-{artefact_hash(tree)}-{artefact_hash(assignment.solution)}"  # for this question and reference
    if proven is not None and what in proven:
        report.check(True, "the PrairieLearn question grades the reference to 1.0 and the stub to 0.0 (cached)")
        return
    from ..release.markers import make_stub
    from .prairielearn_sim import simulate

    reference = assignment.solution.read_text()
    passed = True
    for label, source, expected in (("reference", reference, 1.0), ("untouched stub", make_stub(reference), 0.0)):
        try:
            document = simulate(tree, assignment.name, {assignment.submit_file: source.encode()})
            got = f"gradable {document.get('gradable')}, score {document.get('score')}"
            ok = document.get("gradable") is True and document.get("score") == expected
        except Exception as exc:  # noqa: BLE001 - report, don't crash the release
            got, ok = f"did not run: {exc}", False
        report.check(ok, f"the PrairieLearn question grades the {label} to {expected} in a simulated /grade tree ({got})")
        passed = passed and ok
    if passed and proven is not None:
        proven.add(what)
