"""Build the PrairieLearn grader image's steps for real, in a fresh Debian root (no Docker engine here).

    sudo .venv/bin/python tests/prairielearn_image.py [assignment ...]  # or: make gradescope-image (all)

What it proves that the simulated /grade tree cannot: the Dockerfile of dist/<a>/prairielearn/,
its ENV and RUN lines run in order as `docker build` runs them (/bin/sh -c, as root), installs on
a bare Debian bookworm (the Dockerfile's FROM is debian:bookworm-slim) python3-venv, the venv with
torch and every pin, and the unprivileged worker user; then the question's grading package grades
the reference to 1.0 and the stub to 0.0 through info.json's entrypoint, with /grade laid out as
PrairieLearn does, as root, with no network and its own process and mount namespaces (as
PrairieLearn's grading containers). Differences from
PrairieLearn: the root is the one tests/gradescope_image.py caches (debootstrap's minbase with
python3 already there, so the RUN line installing it only adds python3-venv), and torch comes from
this machine's wheel folder because the CPU wheel index cannot be reached from here (the ARG
TORCH_INDEX_URL is set to PyPI, as `docker build --build-arg` would, and pip's find-links to the
local CPU wheel). Needs root, debootstrap and the Debian mirror.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from gradescope_image import KIT, base_root, mounted, own_uid, sh  # noqa: E402 - tests/ is this script's folder

from autograder.config import load_assignment  # noqa: E402
from autograder.release import prairielearn_sim  # noqa: E402
from autograder.release.markers import make_stub  # noqa: E402
from autograder.release.prairielearn_question import prairielearn_files, write_tree  # noqa: E402

BASE_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root"}
# What this machine changes, as `docker build --build-arg` and a pip configuration would:
LOCAL = {
    "TORCH_INDEX_URL": "https://pypi.org/simple",
    "PIP_FIND_LINKS": "/opt/wheels",
    "PIP_CERT": "/etc/ssl/certs/ca-certificates.crt",
}


def dockerfile_steps(text: str) -> list[tuple[str, str]]:
    """The Dockerfile's instructions in order, as (ARG|ENV|RUN|FROM, rest); one line each."""
    steps = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            steps.append((word.upper(), rest.strip()))
    return steps


def build(run_root: Path, dockerfile: str) -> dict[str, str]:
    """Run the Dockerfile's RUN lines in ``run_root`` with its ARG and ENV values; the final ENV."""
    env = dict(BASE_ENV)
    for word, rest in dockerfile_steps(dockerfile):
        if word in ("ARG", "ENV"):
            key, _, value = rest.partition("=")
            env[key] = LOCAL.get(key, value) if word == "ARG" else value
        elif word == "RUN":
            env.update({k: v for k, v in LOCAL.items() if k not in env})
            sh("chroot", str(run_root), "env", "-i", *(f"{k}={v}" for k, v in env.items()), "/bin/sh", "-c", rest)
    return {k: v for k, v in env.items() if k not in LOCAL}


def grade(run_root: Path, tree: Path, name: str, source: str, env: dict[str, str]) -> dict:
    """One PrairieLearn job in the built root: /grade laid out, the entrypoint run as root, no network.

    As in a container, the job has its own process and mount namespaces (a fresh /proc, a private
    /dev/shm): the chroot shares this machine's user ids, and without them the worker's cleanup,
    which kills every process of its user, and its memory count, which adds up that user's
    processes, would reach other gradings running here as the same uid."""
    grade_root = run_root / "grade"
    shutil.rmtree(grade_root, ignore_errors=True)
    upload = {f"{load_assignment(name).module}.py": source.encode()}
    entrypoint = prairielearn_sim.lay_out(tree, name, upload, grade_root)
    entrypoint.chmod(0o755)
    inside = "/" + entrypoint.relative_to(run_root).as_posix()
    job = ["chroot", str(run_root), "env", "-i", *(f"{k}={v}" for k, v in env.items()), inside]
    shm = shlex.quote(str(run_root / "dev" / "shm"))
    command = [
        *("unshare", "--net", "--pid", "--fork", "--mount", f"--mount-proc={run_root / 'proc'}"),
        *("sh", "-c", f"mount -t tmpfs -o mode=1777 tmpfs {shm} && exec {shlex.join(job)}"),
    ]
    print("+", shlex.join(command), flush=True)
    proc = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"the entrypoint exited {proc.returncode}: PrairieLearn would read no results\n{proc.stderr[-2000:]}")
    return json.loads((grade_root / "results" / "results.json").read_text())


def explain(results: Path) -> str:
    """What a grading that missed its score lost, test by test, from the engine's document kept beside
    PrairieLearn's (hidden tests' feedback included: this is the course's own log)."""
    try:
        document = json.loads((results / "gradescope.json").read_text())
    except (OSError, ValueError) as exc:
        return f"  (no engine document: {exc})"
    lines = [f"  {document.get('output', '')[:1500]}"]
    for test in document.get("tests", []):
        if test.get("score") != test.get("max_score") and test.get("max_score"):
            lines.append(f"  lost {test['max_score'] - test['score']:g}: {test['name']}\n    {test.get('output', '')[:1500]}")
    return "\n".join(lines)


def check(name: str) -> int:
    assignment = load_assignment(name)
    run_root = KIT / ".cache" / f"prairielearn-image-{name}"
    shutil.rmtree(run_root, ignore_errors=True)
    sh("cp", "-a", str(base_root()), str(run_root))
    files = prairielearn_files(assignment, make_stub(assignment.solution.read_text()))
    failures = 0
    with tempfile.TemporaryDirectory(prefix="kit-pl-image-") as tmp, mounted(run_root):
        tree = write_tree(files, Path(tmp) / "prairielearn")
        env = build(run_root, files["Dockerfile"].decode())
        own_uid(run_root)  # the image's worker user, as in a container: no grader of this machine shares its uid
        for label, source, expected in (
            ("reference", assignment.solution.read_text(), 1.0),
            ("stub", make_stub(assignment.solution.read_text()), 0.0),
        ):
            results = grade(run_root, tree, name, source, env)
            print(f"{name} {label}: gradable {results['gradable']}, score {results['score']} (expected {expected})")
            failed = results["gradable"] is not True or results["score"] != expected
            if failed:
                print(explain(run_root / "grade" / "results"), flush=True)
            failures += failed
    return failures


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("run as root: debootstrap, chroot and mount need it")
    from autograder.config import list_assignments

    names = sys.argv[1:] or list_assignments()
    sys.exit(1 if sum(check(n) for n in names) else 0)
