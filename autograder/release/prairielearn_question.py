"""The PrairieLearn release of one assignment: the files of ``dist/<a>/prairielearn/``.

One job: :func:`prairielearn_files` lists every file of that folder (relative path -> bytes):

* ``questions/<a>/``: ``info.json`` (external grading: the image, the entrypoint, the grading
  package, a timeout within PrairieLearn's 600 s), ``question.html`` (a file upload of
  ``<module>.py``, the grader's results), ``initial_code.py`` (the stub, for the in-browser
  editor alternative) and ``tests/`` (the suite, copied to ``/grade/tests``);
* ``serverFilesCourse/<package>/``: the grading package, the same engine, assignment and
  reference files as autograder.zip (:func:`.zips.autograder_files`), with ``run_grader.sh``,
  PrairieLearn's entrypoint, instead of Gradescope's two scripts;
* ``Dockerfile``: the grader image, every package pinned inside it (grading has no network).
"""

from __future__ import annotations

import html
import json
import re
import shlex
import uuid
from pathlib import Path

from ..config import KIT_ROOT, STUDENT_USER, Assignment, ConfigError
from ..platforms.prairielearn import grading_timeout
from .student_folder import TEMPLATES
from .zips import ENGINE_EXCLUDE, autograder_files, torch_version

PL_TEMPLATES = TEMPLATES / "prairielearn"
IMAGE_REPOSITORY = "attention-kit/grader"  # the image is <this>:<torch version>, built from the Dockerfile
KIT_VENV = "/opt/attention-kit/venv"  # where the Dockerfile installs the pinned packages
ENTRYPOINT = "run_grader.sh"
GRADESCOPE_ONLY = ("setup.sh", "run_autograder")  # autograder.zip's scripts, not in the PrairieLearn package


def torch_index_url() -> str:
    """setup.sh's default ``TORCH_INDEX_URL`` (PyTorch's CPU wheel index): the Dockerfile's ARG default."""
    setup = (TEMPLATES / "setup.sh").read_text()
    found = re.search(r'TORCH_INDEX_URL="\$\{TORCH_INDEX_URL:-([^}"]+)\}"', setup)
    if not found:
        raise ConfigError("templates/setup.sh does not set TORCH_INDEX_URL's default")
    return found.group(1)


def package_name(assignment: Assignment) -> str:
    """The grading package's folder in the course's ``serverFilesCourse/``."""
    return f"attention_kit_{assignment.name}"


def image_name() -> str:
    return f"{IMAGE_REPOSITORY}:{torch_version()}"


def question_uuid(assignment: Assignment) -> str:
    """A UUID that stays the same from release to release (PrairieLearn keys a question's history on it)."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"attention-kit:question:{assignment.name}"))


def info_json(assignment: Assignment, topic: str) -> dict:
    """The question's info.json: an externally graded v3 question with one variant."""
    package = package_name(assignment)
    return {
        "uuid": question_uuid(assignment),
        "title": assignment.title,
        "topic": topic,
        "tags": ["attention-kit", assignment.name],
        "type": "v3",
        "singleVariant": True,
        "gradingMethod": "External",
        "externalGradingOptions": {
            "enabled": True,
            "image": image_name(),
            "serverFilesCourse": [f"{package}/"],
            "entrypoint": f"/grade/serverFilesCourse/{package}/{ENTRYPOINT}",
            "timeout": grading_timeout(assignment),
        },
    }


def question_html(assignment: Assignment) -> str:
    text = (PL_TEMPLATES / "question.html").read_text()
    return text.replace("@TITLE@", html.escape(assignment.title)).replace("@FILE@", html.escape(assignment.submit_file))


def requirement_pins(kit_root: Path = KIT_ROOT) -> list[str]:
    """requirements.txt's pins other than torch (which comes from the CPU index), markers kept."""
    pins = []
    for line in (kit_root / "requirements.txt").read_text().splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith("#") and not line.startswith("torch=="):
            pins.append(line)
    return pins


def dockerfile() -> str:
    text = (PL_TEMPLATES / "Dockerfile").read_text()
    for key, value in {
        "@IMAGE@": image_name(),
        "@TORCH_INDEX_URL@": torch_index_url(),
        "@TORCH_VERSION@": torch_version(),
        "@PINS@": " ".join(shlex.quote(pin) for pin in requirement_pins()),
        "@STUDENT_USER@": STUDENT_USER,
        "@KIT_VENV@": KIT_VENV,
    }.items():
        text = text.replace(key, value)
    return text


def grading_package(assignment: Assignment) -> dict[str, bytes]:
    """The files of ``serverFilesCourse/<package>/``: autograder.zip's, with PrairieLearn's entrypoint."""
    files = {rel: data for rel, data in autograder_files(assignment).items() if rel not in GRADESCOPE_ONLY}
    files[ENTRYPOINT] = (PL_TEMPLATES / ENTRYPOINT).read_text().replace("@KIT_VENV@", KIT_VENV).encode()
    return files


def prairielearn_files(assignment: Assignment, stub: str, topic: str = "attention-kit") -> dict[str, bytes]:
    """Every file of ``dist/<a>/prairielearn/``; ``stub`` is student.zip's ``<module>.py``, ``topic`` the
    question's PrairieLearn topic (the course's title)."""
    question = f"questions/{assignment.name}"
    files: dict[str, bytes] = {
        f"{question}/info.json": (json.dumps(info_json(assignment, topic), indent=2) + "\n").encode(),
        f"{question}/question.html": question_html(assignment).encode(),
        f"{question}/initial_code.py": stub.encode(),
        "Dockerfile": dockerfile().encode(),
    }
    for path in sorted(assignment.tests_dir.rglob("*")):
        rel = path.relative_to(assignment.tests_dir)
        if path.is_file() and not ENGINE_EXCLUDE & set(rel.parts):
            files[f"{question}/tests/{rel.as_posix()}"] = path.read_bytes()
    package = package_name(assignment)
    for rel, data in grading_package(assignment).items():
        files[f"serverFilesCourse/{package}/{rel}"] = data
    return files


def write_tree(files: dict[str, bytes], folder: Path) -> Path:
    """Write ``files`` under ``folder`` (the entrypoint executable, as PrairieLearn makes it); returns ``folder``."""
    for rel, data in files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        target.chmod(0o755 if target.name == ENTRYPOINT else 0o644)
    return folder
