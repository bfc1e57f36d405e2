"""The zips: ``student.zip`` and ``autograder.zip`` (and Otter's), byte-identical from the same sources.

One job: pack a release. :func:`autograder_files` is every file Gradescope unzips (the
set-up scripts with the pinned torch, the grading engine without the instructor's tools, the
assignment's tests and reference);
:func:`make_zip` packs files reproducibly (sorted entries, fixed dates and permissions);
:func:`build_zips` builds an assignment's zips from :func:`.student_folder.student_files`;
:func:`otter_autograder_zip` is Otter's own Gradescope zip, built only with ``release --otter``.
"""

from __future__ import annotations

import io
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from ..config import ENGINE, INSTRUCTOR_ONLY, KIT_ROOT, STUDENT_USER, Assignment, ConfigError
from .banned_names import check_banned
from .student_folder import TEMPLATES, student_files

if TYPE_CHECKING:
    from .course import CourseEntry

ZIP_DATE = (1980, 1, 1, 0, 0, 0)
ENGINE_EXCLUDE = {"__pycache__"}
OTTER_TORCH_INDEX_URL = "https://download.pytorch.org/whl/cpu"


def torch_version() -> str:
    for line in (KIT_ROOT / "requirements.txt").read_text().splitlines():
        if line.startswith("torch=="):
            return line.split("==", 1)[1].strip()
    raise ConfigError("requirements.txt does not pin torch (torch==X.Y.Z)")


# -- the autograder ---------------------------------------------------------------


def shipped_engine_files() -> list[str]:
    """The grading engine's files (paths in the package) that autograder.zip carries: all but INSTRUCTOR_ONLY."""
    return [
        path.relative_to(ENGINE).as_posix()
        for path in sorted(ENGINE.rglob("*"))
        if path.is_file()
        and not ENGINE_EXCLUDE & set(path.parts)
        and path.relative_to(ENGINE).parts[0] not in INSTRUCTOR_ONLY
        and path.suffix in (".py", ".sh", ".ini", "")
    ]


def autograder_files(assignment: Assignment, kit_root: Path = KIT_ROOT) -> dict[str, bytes]:
    """Every file of autograder.zip: scripts at the root, engine, this assignment's tests and reference."""
    setup = (TEMPLATES / "setup.sh").read_text()
    setup = setup.replace("@TORCH_VERSION@", torch_version()).replace("@STUDENT_USER@", STUDENT_USER)
    files: dict[str, bytes] = {
        "setup.sh": setup.encode(),
        "run_autograder": (TEMPLATES / "run_autograder").read_bytes(),
        "requirements.txt": (kit_root / "requirements.txt").read_bytes(),
    }
    for rel in shipped_engine_files():
        files[f"autograder/{rel}"] = (ENGINE / rel).read_bytes()
    for path in sorted(assignment.root.rglob("*")):
        rel = path.relative_to(assignment.root)
        if (
            path.is_file()
            and not ENGINE_EXCLUDE & set(rel.parts)
            and rel.parts[0] not in ("handout.md", "notebook.py", "do_nothing.py")
        ):
            files[f"assignments/{assignment.name}/{rel.as_posix()}"] = path.read_bytes()
    files[f"solutions/{assignment.name}/{assignment.submit_file}"] = assignment.solution.read_bytes()
    return files


def make_zip(files: dict[str, bytes], prefix: str = "") -> bytes:
    """A reproducible zip: sorted entries, fixed dates, fixed permissions."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel in sorted(files):
            info = zipfile.ZipInfo(prefix + rel, date_time=ZIP_DATE)
            executable = Path(rel).name in ("setup.sh", "run_autograder")
            info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            zf.writestr(info, files[rel])
    return buffer.getvalue()


def otter_autograder_zip(assignment: Assignment, files: dict[str, bytes]) -> bytes:
    """Otter's own Gradescope zip (``otter generate``) from the same checks, repacked reproducibly."""
    import subprocess

    with tempfile.TemporaryDirectory(prefix="kit-otter-") as tmp:
        folder = Path(tmp) / "student"
        for rel, data in files.items():
            (folder / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / rel).write_bytes(data)
        requirements = Path(tmp) / "requirements.txt"
        requirements.write_text(
            "# Otter installs these on Gradescope; torch from the CPU wheel index (the default wheel is CUDA).\n"
            f"--extra-index-url {OTTER_TORCH_INDEX_URL}\ntorch=={torch_version()}+cpu\n"
            + "".join(
                line + "\n"
                for line in (KIT_ROOT / "requirements.txt").read_text().splitlines()
                if line.startswith(("numpy==", "pytest=="))
            )
        )
        out = Path(tmp) / "otter-autograder.zip"
        proc = subprocess.run(
            [
                str(Path(sys.executable).parent / "otter"),
                "generate",
                "-t",
                "tests",
                "-o",
                str(out),
                "--no-config",
                "--no-environment",
                "-r",
                str(requirements),
                "public_tests",
                "autograder",
            ],
            cwd=folder,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise ConfigError(f"{assignment.name}: otter generate failed:\n{proc.stdout[-1500:]}{proc.stderr[-1500:]}")
        with zipfile.ZipFile(out) as zf:
            return make_zip({info.filename: zf.read(info) for info in zf.infolist() if not info.is_dir()})


def build_zips(
    assignment: Assignment,
    shipped: frozenset[str] = frozenset(),
    hints: bool | None = None,
    refresh_numbers: bool = False,
    otter: bool = False,
    entry: CourseEntry | None = None,
) -> dict[str, bytes]:
    """student.zip and autograder.zip; with ``otter``, also Otter's own Gradescope zip
    (``release --otter``; see the README's "Otter or the kit's zip"). ``hints`` and the dates in the
    handout come from ``entry`` (default: the kit's course.toml) unless ``hints`` is given. No zip is built with
    a banned name the pinned torch or numpy lacks (the worker could not guard it: :func:`check_banned`)."""
    check_banned(assignment.root / "assignment.toml", assignment.banned)
    student = student_files(assignment, shipped, hints, refresh_numbers, entry)
    zips = {
        "student.zip": make_zip(student, prefix=f"{assignment.name}/"),
        "autograder.zip": make_zip(autograder_files(assignment)),
    }
    if otter:
        zips["otter-autograder.zip"] = otter_autograder_zip(assignment, student)
    return zips


def student_files_from_zip(data: bytes) -> dict[str, bytes]:
    """The files of a student.zip, without its top folder."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {info.filename.split("/", 1)[1]: zf.read(info) for info in zf.infolist() if not info.is_dir()}
