"""Find the contract's file in whatever a student uploaded, and normalise it.

Uploads come as the file itself, a folder (Gradescope's ``submission/``), a
zip (with or without a folder inside, with macOS ``__MACOSX`` junk), or a
folder holding such a zip. Only the one contract file is ever used; nothing
else in the upload is imported or even copied.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import zipfile
from pathlib import Path

MAX_FILE_BYTES = 1024 * 1024
MAX_ZIP_MEMBERS = 2000
MAX_ZIP_BYTES = 50 * 1024 * 1024
JUNK_PARTS = {"__MACOSX", ".ipynb_checkpoints", "__pycache__", ".git"}


class SubmissionProblem(Exception):
    """The upload cannot be graded; the message tells the student what to do."""


def _is_junk(path: Path) -> bool:
    return any(part in JUNK_PARTS for part in path.parts) or path.name.startswith("._")


def _extract_zip(archive: Path, into: Path) -> None:
    try:
        with zipfile.ZipFile(archive) as zf:
            members = zf.infolist()
            if len(members) > MAX_ZIP_MEMBERS or sum(m.file_size for m in members) > MAX_ZIP_BYTES:
                raise SubmissionProblem(f"{archive.name} is too large to unpack; upload just the .py file.")
            for m in members:
                target = (into / m.filename).resolve()
                if not str(target).startswith(str(into.resolve())) or m.is_dir():
                    continue  # skip folders and anything trying to escape (zip slip)
                if _is_junk(Path(m.filename)):
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(m) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError) as exc:
        raise SubmissionProblem(f"{archive.name} is not a readable zip file ({exc}); upload the .py file instead.") from None


def _candidates(root: Path, workdir: Path, depth: int = 0) -> list[Path]:
    """Every file in the upload, zips unpacked (one level of zip inside a zip)."""
    files: list[Path] = []
    paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
    for p in paths:
        if _is_junk(p.relative_to(root) if root.is_dir() else Path(p.name)):
            continue
        if p.suffix.lower() == ".zip" and depth < 2:
            into = Path(tempfile.mkdtemp(dir=workdir, prefix="zip-"))
            _extract_zip(p, into)
            files.extend(_candidates(into, workdir, depth + 1))
        else:
            files.append(p)
    return files


def find_submission_file(upload: Path, filename: str, workdir: Path) -> tuple[Path, str | None]:
    """Return (the file to grade, a note for the student or None).

    Looks for ``filename`` exactly, then case-insensitively, then a browser
    duplicate such as ``attention (1).py``; the shallowest match wins.
    Raises :class:`SubmissionProblem` with a list of what was found otherwise.
    """
    upload = Path(upload)
    if not upload.exists():
        raise SubmissionProblem(f"nothing was uploaded (no {upload}).")
    files = _candidates(upload, workdir)
    if not files:
        raise SubmissionProblem(f"the upload is empty: submit your {filename}.")
    stem = Path(filename).stem
    duplicate = re.compile(rf"^{re.escape(stem)}[\s_\-]*(\(\d+\)|\d+|copy)?\.py$", re.IGNORECASE)
    rules = [
        (lambda p: p.name == filename, None),
        (lambda p: p.name.lower() == filename.lower(), "graded {found} as {filename} (the name's capitals differ)."),
        (lambda p: bool(duplicate.match(p.name)), "graded {found} as {filename}; please name the file exactly {filename}."),
    ]
    if upload.is_file() and upload.suffix == ".py":
        # A single .py file named explicitly (the CLI): that is the file to grade.
        rules.append((lambda p: p == upload, "graded {found} as {filename}."))
    for matches, note in rules:
        found = sorted((p for p in files if matches(p)), key=lambda p: (len(p.parts), str(p)))
        if found:
            chosen = found[0]
            return chosen, note.format(found=chosen.name, filename=filename) if note else None
    listing = ", ".join(sorted({p.name for p in files})[:20])
    raise SubmissionProblem(
        f"no file named {filename} was found in the upload. Found: {listing}. "
        f"Upload your {filename} (the file from the handout, with that exact name)."
    )


def normalise_source(path: Path, out: Path) -> None:
    """Copy the student's file as UTF-8 with LF line endings and no BOM."""
    raw = path.read_bytes()
    if len(raw) > MAX_FILE_BYTES:
        raise SubmissionProblem(f"{path.name} is {len(raw) // 1024} KB; a solution file should be far smaller than 1 MB.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SubmissionProblem(
            f"{path.name} is not UTF-8 text (byte {exc.start}); save it as UTF-8 in your editor and upload again."
        ) from None
    out.write_text(text.replace("\r\n", "\n").replace("\r", "\n"), encoding="utf-8")
