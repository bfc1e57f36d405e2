"""Find the contract's file in whatever a student uploaded, and normalise it.

Uploads come as the file itself, a folder (Gradescope's ``submission/``), a
zip (with or without a folder inside, with macOS ``__MACOSX`` junk), or a
folder holding such a zip. Only the one contract file is ever used; nothing
else in the upload is imported or even copied. An upload with no ``<module>.py``
but a notebook (``<module>.ipynb``, or its only ``.ipynb``) is graded as the module
its code cells define (:mod:`.notebook_upload`), with a note saying what was left out; with neither, its only
``.py`` under another name may be (:func:`_lone_module`). A file of blanks and comments only is refused as empty.

Reading an upload never follows a link: symbolic links in folders and zips,
FIFOs and devices are skipped (and the student is told), every file is opened
with ``O_NOFOLLOW`` and checked to be a regular file, and unpacking writes only
``.py``, ``.ipynb`` and ``.zip`` members under the unpack folder. One :class:`UnpackBudget`
covers the whole upload (bytes, files, nesting depth and time), counted from
the moment grading starts.
"""

from __future__ import annotations

import os
import re
import stat
import struct
import tempfile
import time
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path, PurePosixPath

from ..config import KIT_ROOT
from .bounded import Unreadable, bounded
from .notebook_upload import MAX_NOTEBOOK_BYTES, Extracted, notebook_module

MAX_FILE_BYTES = 1024 * 1024
JUNK_PARTS = {"__MACOSX", ".ipynb_checkpoints", "__pycache__", ".git"}


class SubmissionProblem(Exception):
    """The upload cannot be graded; the message tells the student what to do."""


@dataclass
class UnpackBudget:
    """Limits for the whole upload, nested zips included."""

    deadline: float = field(default_factory=lambda: time.monotonic() + 30)
    max_bytes: int = 50 * 1024 * 1024  # extracted, all archives together
    max_files: int = 2000  # files seen, all archives together
    max_depth: int = 2  # a zip inside a zip, no deeper
    used_bytes: int = 0
    used_files: int = 0
    ignored: list[str] = field(default_factory=list)  # what was skipped, for the student
    links: int = 0  # symbolic links met (never followed): a fact for the dashboard's flags

    def count(self, n_bytes: int = 0, n_files: int = 0) -> None:
        self.used_bytes += n_bytes
        self.used_files += n_files
        if self.used_bytes > self.max_bytes or self.used_files > self.max_files:
            raise SubmissionProblem(
                f"the upload unpacks to more than {self.max_files} files or {self.max_bytes // 2**20} MB; "
                "upload just the .py file."
            )
        if time.monotonic() > self.deadline:
            raise SubmissionProblem("unpacking the upload took too long; upload just the .py file.")

    def ignore(self, what: str) -> None:
        if len(self.ignored) < 20:
            self.ignored.append(what)


def _is_junk(path: Path) -> bool:
    return any(part in JUNK_PARTS for part in path.parts) or path.name.startswith("._")


def _wanted(name: str) -> bool:
    return name.lower().endswith((".py", ".ipynb", ".zip"))


CENTRAL_ENTRY_BYTES = 512  # room per listed file in a zip's central directory (46 bytes, a name, extra fields)
_EOCD = struct.Struct("<4s4H2LH")  # end of central directory record
_ZIP64_LOCATOR = struct.Struct("<4sLQL")
_ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")


def central_directory(archive: Path) -> tuple[int, int] | None:
    """(entries, bytes) of a zip's central directory, read from its end-of-central-directory
    record (zip64 too) the way ``zipfile`` finds it, without parsing the directory itself; None
    when there is no such record (``zipfile`` then refuses the file on its own)."""
    with open(archive, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        if size < _EOCD.size:
            return None
        tail_start = max(0, size - _EOCD.size - 65535)
        f.seek(tail_start)
        tail = f.read(size - tail_start)
        at = len(tail) - _EOCD.size
        if not (tail[at : at + 4] == b"PK\x05\x06" and tail[-2:] == b"\0\0"):
            at = tail.rfind(b"PK\x05\x06")
            if at < 0 or at + _EOCD.size > len(tail):
                return None
        _, _, _, _, entries, cd_bytes, cd_offset, _ = _EOCD.unpack_from(tail, at)
        if 0xFFFF in (entries,) or 0xFFFFFFFF in (cd_bytes, cd_offset):  # zip64: the real numbers are elsewhere
            locator = tail_start + at - _ZIP64_LOCATOR.size
            if locator >= 0:
                f.seek(locator)
                sig, _, record, _ = _ZIP64_LOCATOR.unpack(f.read(_ZIP64_LOCATOR.size))
                if sig == b"PK\x06\x07" and 0 <= record <= size - _ZIP64_EOCD.size:
                    f.seek(record)
                    fields = _ZIP64_EOCD.unpack(f.read(_ZIP64_EOCD.size))
                    if fields[0] == b"PK\x06\x06":
                        entries, cd_bytes = fields[7], fields[8]
        return entries, cd_bytes


def check_central_directory(archive: Path, budget: UnpackBudget) -> None:
    """Refuse a zip whose directory lists more files than the budget has left, or takes more bytes
    than that many entries need, before ``zipfile`` builds an object for every entry (a 2.7 MB
    zip holding a 47 MB directory of a million entries took the grader to 710 MB)."""
    try:
        found = central_directory(archive)
    except (OSError, struct.error):
        return  # zipfile says what is wrong with it
    if found is None:
        return
    entries, cd_bytes = found
    files_left = max(0, budget.max_files - budget.used_files)
    if entries > files_left or cd_bytes > budget.max_files * CENTRAL_ENTRY_BYTES:
        raise SubmissionProblem(
            f"{archive.name} lists more than {budget.max_files} files (its directory is {cd_bytes:,} bytes for "
            f"{entries:,} entries); upload just the .py file."
        )


def _extract_zip(archive: Path, into: Path, budget: UnpackBudget) -> None:
    """Extract the .py and .zip members of ``archive`` into ``into``; links and escapes are skipped."""
    try:
        check_central_directory(archive, budget)
        with zipfile.ZipFile(archive) as zf:
            members = zf.infolist()
            budget.count(n_files=len(members))
            root = into.resolve()
            for m in members:
                mode = m.external_attr >> 16
                name = m.filename
                if stat.S_ISLNK(mode):
                    budget.links += 1
                    budget.ignore(f"{name} (a link)")
                    continue
                if m.is_dir() or _is_junk(Path(name)) or not _wanted(name):
                    continue
                target = (into / name).resolve()
                if root not in target.parents:
                    budget.ignore(f"{name} (points outside the upload)")
                    continue
                limit = {"py": MAX_FILE_BYTES + 1, "ipynb": MAX_NOTEBOOK_BYTES + 1}.get(
                    name.lower().rsplit(".", 1)[-1], budget.max_bytes
                )
                if m.file_size > limit:
                    budget.ignore(f"{name} (too large)")
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                with zf.open(m) as src, os.fdopen(fd, "wb") as dst:
                    while True:
                        chunk = src.read(1 << 16)
                        if not chunk:
                            break
                        budget.count(n_bytes=len(chunk))
                        dst.write(chunk)
    except SubmissionProblem:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError, ValueError) as exc:
        raise SubmissionProblem(f"{archive.name} is not a readable zip file ({exc}); upload the .py file instead.") from None


def _regular_files(root: Path, budget: UnpackBudget) -> list[Path]:
    """Every regular file under ``root`` (itself if it is one), never following links."""
    if root.is_file() and not root.is_symlink():
        return [root]
    found = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs[:] = [d for d in dirs if d not in JUNK_PARTS]  # never walked, never counted (a project's .git)
        for name in sorted(dirs):
            if os.path.islink(os.path.join(folder, name)):
                budget.links += 1
                budget.ignore(f"{Path(folder, name).relative_to(root)} (a link)")
        for name in sorted(files):
            path = Path(folder, name)
            budget.count(n_files=1)
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                budget.links += 1
                budget.ignore(f"{path.relative_to(root)} (a link)")
            elif not stat.S_ISREG(info.st_mode):
                budget.ignore(f"{path.relative_to(root)} (not a regular file)")
            else:
                found.append(path)
    return found


def _candidates(
    root: Path, workdir: Path, budget: UnpackBudget, depth: int = 0, inside: PurePosixPath | None = None
) -> dict[Path, PurePosixPath]:
    """Every regular file in the upload, zips unpacked (one level of zip inside a zip), each with where it sits
    in the upload (a zip's member under the zip's own place: ``old.zip/attention.py``). Which file is graded is
    judged by that place, never by where the grader unpacked it: the same upload, the same choice on every
    platform (an absolute path's depth differs between Gradescope's tree, a release's and a class folder)."""
    files: dict[Path, PurePosixPath] = {}
    for p in _regular_files(root, budget):
        relative = p.relative_to(root) if root.is_dir() else Path(p.name)
        if _is_junk(relative):
            continue
        place = (inside or PurePosixPath()) / relative.as_posix()
        if p.suffix.lower() == ".zip":
            if depth >= budget.max_depth:
                budget.ignore(f"{p.name} (a zip nested too deeply)")
                continue
            into = Path(tempfile.mkdtemp(dir=workdir, prefix="zip-"))
            _extract_zip(p, into, budget)
            files.update(_candidates(into, workdir, budget, depth + 1, place))
        else:
            files[p] = place
    return files


def _by_place(places: dict[Path, PurePosixPath]):
    """The sort key that picks among matches: the shallowest in the upload, then by its place's name."""
    return lambda p: (len(places[p].parts), str(places[p]))


def find_submission_file(
    upload: Path, filename: str, workdir: Path, budget: UnpackBudget | None = None, graded: frozenset[str] = frozenset()
) -> tuple[Path, str | None]:
    """Return (the file to grade, a note for the student or None).

    Looks for ``filename`` exactly, then case-insensitively, then a browser
    duplicate such as ``attention (1).py``; the shallowest match wins. Without one, a
    notebook named so (``attention.ipynb``...) or the upload's only ``.ipynb`` is graded
    from its code cells: the file returned is the module they define, written in ``workdir`` (a notebook that
    imports the module and defines none of the ``graded`` functions is the lab notebook: a problem).
    Without one, the upload's only ``.py`` if it may be the module (:func:`_lone_module`); otherwise raises
    :class:`SubmissionProblem` with a list of what was found.
    """
    budget = budget or UnpackBudget()
    upload = Path(upload)
    if not upload.exists():
        raise SubmissionProblem(f"nothing was uploaded (no {upload}).")
    places = _candidates(upload, workdir, budget)
    files = list(places)
    notes = []
    if budget.ignored:
        notes.append("Ignored in the upload: " + ", ".join(budget.ignored) + ".")
    if not files:
        raise SubmissionProblem(" ".join([f"the upload is empty: submit your {filename}.", *notes]))
    stem = Path(filename).stem
    duplicate = _browser_copy(stem, ".py")
    rules = [
        (lambda p: p.name == filename, None),
        (lambda p: p.name.lower() == filename.lower(), "graded {found} as {filename} (the name's capitals differ)."),
        (lambda p: bool(duplicate.match(p.name)), "graded {found} as {filename}; please name the file exactly {filename}."),
    ]
    if upload.is_file() and upload.suffix == ".py":
        # A single .py file named explicitly (the CLI): that is the file to grade.
        rules.append((lambda p: p == upload, "graded {found} as {filename}."))
    for matches, note in rules:
        found = sorted((p for p in files if matches(p)), key=_by_place(places))
        if found:
            chosen = found[0]
            others = [p for p in files if p != chosen and (any(m(p) for m, _ in rules) or _named_notebook(p, stem))]
            if others:  # the student may have meant another: say which one counted
                notes.insert(0, _also_found(others, chosen, places))
            if note:
                notes.insert(0, note.format(found=chosen.name, filename=filename))
            return chosen, " ".join(notes) or None
    notebook = _chosen_notebook(upload, places, stem)
    if notebook is not None:
        return _notebook_as_module(notebook, filename, workdir, notes, graded)
    lone = _lone_module(files, filename, graded)
    if lone is not None:
        return lone, " ".join([_LONE.format(found=places[lone], filename=filename), *notes])
    listing = ", ".join(sorted({p.name for p in files})[:20])
    raise SubmissionProblem(
        " ".join(
            [
                f"no file named {filename} was found in the upload. Found: {listing}. "
                f"Upload your {filename} (the file from the handout, with that exact name).",
                *notes,
            ]
        )
    )


_LONE = "graded {found} as {filename} (the only .py file in the upload); please name it exactly {filename}."
_DEFINED = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)", re.MULTILINE)


def _lone_module(files: list[Path], filename: str, graded: frozenset[str]) -> Path | None:
    """The upload's only .py, if it may be the module under another name (``attention_final.py``, ``hw3.py``): not named
    as another assignment of this copy of the kit (``seq2seq.py``), and defining a ``graded`` function or class (read as
    text: a syntax error is graded, and said) or nothing at all (then said to be empty). A lone ``notes.py`` is not."""
    lone = [p for p in files if p.suffix.lower() == ".py"]
    others = {f"{p.parent.name.lower()}.py" for p in (KIT_ROOT / "assignments").glob("*/assignment.toml")} - {filename.lower()}
    if len(lone) != 1 or lone[0].name.lower() in others:
        return None
    text = _read_regular(lone[0], MAX_FILE_BYTES, "the .py file itself").decode("utf-8", errors="replace")
    return lone[0] if not graded or set(_DEFINED.findall(text)) & graded or is_blank(text) else None


def is_blank(text: str) -> bool:
    """Nothing but blank lines and comments: a file saved before anything was written in it."""
    return all(not line.strip() or line.lstrip().startswith("#") for line in text.lstrip("\ufeff").splitlines())


def _also_found(others: list[Path], chosen: Path, places: dict[Path, PurePosixPath]) -> str:
    named = sorted(str(places[p]) for p in others)
    more = " ..." if len(named) > 5 else ""
    return f"Also in the upload, not graded: {', '.join(named[:5])}{more} (only {places[chosen]} is)."


def _browser_copy(stem: str, suffix: str) -> re.Pattern:
    """``attention.py``, ``attention (1).py``, ``Attention copy.py``...: the module's file as browsers save it again."""
    return re.compile(rf"^{re.escape(stem)}[\s_\-]*(\(\d+\)|\d+|copy)?{re.escape(suffix)}$", re.IGNORECASE)


def _named_notebook(p: Path, stem: str) -> bool:
    return bool(_browser_copy(stem, ".ipynb").match(p.name))


def _chosen_notebook(upload: Path, places: dict[Path, PurePosixPath], stem: str) -> Path | None:
    """The notebook to grade when the upload holds no .py to: named as the module (exactly, in other
    capitals, a browser duplicate), the one named on the command line, or the upload's only notebook."""
    notebooks = sorted((p for p in places if p.suffix.lower() == ".ipynb"), key=_by_place(places))
    named = _browser_copy(stem, ".ipynb")
    rules = [
        lambda p: p.name == f"{stem}.ipynb",
        lambda p: p.name.lower() == f"{stem}.ipynb".lower(),
        lambda p: bool(named.match(p.name)),
        lambda p: p == upload,
    ]
    for matches in rules:
        found = [p for p in notebooks if matches(p)]
        if found:
            return found[0]
    return notebooks[0] if len(notebooks) == 1 else None


def _notebook_as_module(
    notebook: Path, filename: str, workdir: Path, notes: list[str], graded: frozenset[str]
) -> tuple[Path, str]:
    """The module ``notebook``'s code cells define, written under ``workdir``, and the note saying so."""

    raw = _read_regular(notebook, MAX_NOTEBOOK_BYTES, "the notebook itself")
    try:  # read in a child of its own (bounded.py): whatever the bytes make the reader do is the upload's problem
        found = bounded(lambda: asdict(notebook_module(raw, notebook.name, Path(filename).stem, graded)))
        extracted = Extracted(str(found["source"]), [str(d) for d in found["dropped"]])
    except Unreadable as exc:
        if exc.raised == "NotebookProblem":
            raise SubmissionProblem(exc.reason) from None
        raise SubmissionProblem(
            f"{notebook.name} {exc.said()}: upload {filename}, your code as a .py file (in Jupyter: File > Download as > Python)."
        ) from None
    folder = Path(tempfile.mkdtemp(dir=workdir, prefix="notebook-"))
    target = folder / filename
    target.write_text(extracted.source, encoding="utf-8")
    return target, " ".join([extracted.note(notebook.name, filename), *notes])


def _read_regular(path: Path, limit: int, what: str) -> bytes:
    """At most ``limit`` + 1 bytes of a regular file, never through a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise SubmissionProblem(f"{path.name} could not be read ({exc.strerror}); upload {what}.") from None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise SubmissionProblem(f"{path.name} is not a regular file; upload {what}.")
        return f.read(limit + 1)


def normalise_source(path: Path, out: Path) -> None:
    """Copy the student's file as UTF-8 with LF line endings and no BOM (never through a link)."""
    raw = _read_regular(path, MAX_FILE_BYTES, "the .py file itself")
    if len(raw) > MAX_FILE_BYTES:
        raise SubmissionProblem(f"{path.name} is over 1 MB; a solution file should be far smaller.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise SubmissionProblem(
            f"{path.name} is not UTF-8 text (line {line}, byte {exc.start}); save it as UTF-8 in your editor and upload again."
        ) from None
    if is_blank(text):
        raise SubmissionProblem(f"your file {path.name} is empty (did you upload before saving?)")
    out.write_text(text.replace("\r\n", "\n").replace("\r", "\n"), encoding="utf-8")
