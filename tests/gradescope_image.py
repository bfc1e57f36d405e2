"""Run an autograder.zip's setup.sh for real, in a fresh Debian root (no Docker engine here).

    sudo .venv/bin/python tests/gradescope_image.py [assignment ...]  # or: make gradescope-image (all)

What it proves that the simulated tree cannot: on a machine with nothing but python3,
setup.sh installs python3-venv, creates the venv, installs every pinned requirement,
creates the unprivileged user, and the installed grader grades the reference to 100 and
the stub to 0. Differences from Gradescope: Debian bookworm (Python 3.11) instead of
Ubuntu 22.04 (3.10), and torch comes from this machine's wheel folder because the CPU
wheel index cannot be reached from here (TORCH_INDEX_URL is pointed at PyPI and pip's
find-links at the local CPU wheel). Needs root, debootstrap and the Debian mirror; the
fresh root is cached in .cache/debian-root and copied for every run.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from autograder.config import STUDENT_USER, load_assignment  # noqa: E402
from autograder.release.markers import make_stub  # noqa: E402
from autograder.release.zips import build_zips  # noqa: E402

BASE = KIT / ".cache" / "debian-root"
MIRROR = "http://deb.debian.org/debian"
WHEELS = Path(os.environ.get("PIP_FIND_LINKS", "/opt/wheels"))


def sh(*cmd: str, **kw) -> subprocess.CompletedProcess:
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def base_root() -> Path:
    if (BASE / "usr" / "bin" / "python3").exists():
        return BASE
    shutil.rmtree(BASE, ignore_errors=True)
    BASE.parent.mkdir(parents=True, exist_ok=True)
    sh("debootstrap", "--variant=minbase", "bookworm", str(BASE), MIRROR)
    with mounted(BASE):
        sh("chroot", str(BASE), "apt-get", "update", "-qq")
        # Only what Gradescope's image has: python3, pip and CA certificates (no python3-venv).
        sh("chroot", str(BASE), "apt-get", "install", "-y", "-qq", "python3", "python3-pip", "ca-certificates", "unzip")
    for cert in Path("/usr/local/share/ca-certificates").glob("*.crt"):  # this workplace's egress CA
        shutil.copy(cert, BASE / "usr/local/share/ca-certificates" / cert.name)
    with mounted(BASE):
        sh("chroot", str(BASE), "update-ca-certificates")
    return BASE


class mounted:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.points = [("proc", root / "proc", ["-t", "proc"]), ("/dev", root / "dev", ["--bind"])]
        if WHEELS.is_dir():
            self.points.append((str(WHEELS), root / "opt" / "wheels", ["--bind"]))

    def __enter__(self):
        shutil.copy("/etc/resolv.conf", self.root / "etc" / "resolv.conf")
        for source, target, opts in self.points:
            target.mkdir(parents=True, exist_ok=True)
            sh("mount", *opts, source, str(target))
        return self

    def __exit__(self, *exc):
        for _, target, _ in reversed(self.points):
            subprocess.run(["umount", "-l", str(target)])


def isolated(run_root: Path, job: list[str]) -> list[str]:
    """``job`` with its own process, mount and network namespaces (a fresh /proc, a private /dev/shm), as in a
    container: the chroot shares this machine's user ids, and without them the worker's clean-up, which kills
    every process of its user, and its memory count, which adds up that user's processes, would reach other
    gradings running here as the same uid."""
    shm = shlex.quote(str(run_root / "dev" / "shm"))
    return [
        *("unshare", "--net", "--pid", "--fork", "--mount", f"--mount-proc={run_root / 'proc'}"),
        *("sh", "-c", f"mount -t tmpfs -o mode=1777 tmpfs {shm} && exec {shlex.join(job)}"),
    ]


def free_uid(run_root: Path) -> int:
    """A user and group id that no user, group or process of this machine or of ``run_root`` has."""
    used = {p.pw_uid for p in pwd.getpwall()} | {g.gr_gid for g in grp.getgrall()}
    for table in ("passwd", "group"):
        for line in (run_root / "etc" / table).read_text().splitlines():
            fields = line.split(":")
            if len(fields) > 2 and fields[2].isdigit():
                used.add(int(fields[2]))
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            used.update(
                int(x) for line in status.read_text().splitlines() if line.startswith(("Uid:", "Gid:")) for x in line.split()[1:]
            )
        except (OSError, ValueError):
            continue
    return next(uid for uid in range(64999, 20000, -1) if uid not in used)


def own_uid(run_root: Path) -> None:
    """Give the worker user the root's install created (``useradd --system``: uid 999, the uid of this
    machine's first ``kit-student``) a uid of its own, as a container's users are its own.

    The chroot shares this machine's user ids. The process namespace keeps the root's gradings from
    signalling this machine's processes, but not the other way: a grader running here as root (make
    test, a release) kills every process of its slot's user (kill(-1) as that uid) when it starts a
    worker template and when it ends a worker, and counts that user's processes and memory as its
    student's. With uid 999 in both, it killed the worker of a grading in the root now and then (the
    attention reference lost the tests it was answering: "the process stopped while answering"), and
    could have stopped its own student for the root's processes."""
    uid = free_uid(run_root)
    sh("chroot", str(run_root), "groupmod", "-g", str(uid), STUDENT_USER)
    sh("chroot", str(run_root), "usermod", "-u", str(uid), "-g", str(uid), STUDENT_USER)


def check(name: str) -> int:
    assignment = load_assignment(name)
    run_root = KIT / ".cache" / f"gradescope-image-{name}"
    shutil.rmtree(run_root, ignore_errors=True)
    sh("cp", "-a", str(base_root()), str(run_root))
    ag = run_root / "autograder"
    with zipfile.ZipFile(__import__("io").BytesIO(build_zips(assignment)["autograder.zip"])) as zf:
        zf.extractall(ag / "source")
    for script in ("setup.sh", "run_autograder"):
        (ag / "source" / script).chmod(0o755)
    shutil.copy(ag / "source" / "run_autograder", ag / "run_autograder")
    env = [
        "env",
        "-i",
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME=/root",
        "PIP_FIND_LINKS=/opt/wheels",
        "TORCH_INDEX_URL=https://pypi.org/simple",
        "PIP_CERT=/etc/ssl/certs/ca-certificates.crt",
        "DEBIAN_FRONTEND=noninteractive",
    ]
    failures = 0
    with mounted(run_root):
        sh("chroot", str(run_root), *env, "bash", "-c", "apt-get update -qq && cd /autograder/source && bash setup.sh")
        own_uid(run_root)
        for label, source, expected in (
            ("reference", assignment.solution.read_text(), 100),
            ("stub", make_stub(assignment.solution.read_text()), 0),
        ):
            shutil.rmtree(ag / "submission", ignore_errors=True)
            (ag / "submission").mkdir()
            (ag / "submission" / assignment.submit_file).write_text(source)
            shutil.rmtree(ag / "results", ignore_errors=True)
            (ag / "results").mkdir()
            sh(*isolated(run_root, ["chroot", str(run_root), *env, "/autograder/run_autograder"]), stdout=subprocess.DEVNULL)
            score = json.loads((ag / "results" / "results.json").read_text())["score"]
            print(f"{name} {label}: {score} (expected {expected})")
            failures += score != expected
    return failures


if __name__ == "__main__":
    if os.geteuid() != 0:
        sys.exit("run as root: debootstrap, chroot and mount need it")
    from autograder.config import list_assignments

    names = sys.argv[1:] or list_assignments()
    sys.exit(1 if sum(check(n) for n in names) else 0)
