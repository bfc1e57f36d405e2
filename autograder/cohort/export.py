"""The class's submissions: Gradescope's "Export Submissions" folder or a plain folder, read and closed.

One job: turn the folder ``grade-all`` is given into :class:`Submission` records: an export
(``submission_metadata.yml`` plus one ``submission_<id>/`` folder each, a group's members
with their ids and emails, Gradescope's submission time; found one level down too,
:func:`class_folder`) or a plain folder of files, zips or folders named by the student; note
students with several submissions, and warn of a "class" of one nameless submission; and, as root, close
the export, ``--out`` and a ``--compare`` folder to the worker accounts before any student
code runs (:func:`make_private`).
"""

from __future__ import annotations

import os
import pwd
import re
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from ..grading.submission import SubmissionProblem, UnpackBudget, check_central_directory


@dataclass
class Submission:
    sid: str  # the key of this submission (Gradescope id or file stem)
    path: Path
    name: str = ""
    student_id: str = ""
    email: str = ""
    created_at: str = ""
    notes: list[str] = field(default_factory=list)
    # the same student's other submissions: {the id or email they share: [those submissions' ids]}
    duplicates: dict[str, list[str]] = field(default_factory=dict)
    superseded_by: str = ""  # the same student(s)' later submission, which is the one that counts
    submitters: list[dict] = field(default_factory=list)  # [{"name", "sid", "email"}], several for a group
    late: bool | None = None  # None: no due date given, or no submission time


class BatchError(Exception):
    """The folder cannot be graded as asked; the message says why."""


def _read_export_metadata(folder: Path) -> dict:
    import yaml

    path = folder / "submission_metadata.yml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
        raise BatchError(f"{path} is not readable YAML ({exc}); re-download the Gradescope export.") from None
    if not isinstance(data, dict):
        raise BatchError(f"{path} does not look like a Gradescope export's metadata")
    for key in data:  # each key names a folder beside the metadata, its results file and its pages
        if not isinstance(key, str) or not _FOLDER_NAME.fullmatch(key) or key in (".", ".."):
            raise BatchError(
                f"{path}: {key!r} is not the name of a submission's folder (Gradescope's are submission_<number>); "
                "re-download the export, or grade a plain folder of files instead."
            )
    return data


def _malformed(info: object) -> bool:
    """Whether a submission's entry is not an export's (a table with a list of :submitters): that submission is
    still graded, flagged on its own row; one student's entry never costs the class its grades."""
    submitters = _submitters(info) if isinstance(info, dict) else None
    return (info is not None and not isinstance(info, dict)) or not isinstance(submitters, (list, type(None)))


MALFORMED = (
    "its entry in submission_metadata.yml is not an export's (no list of :submitters), so its student's name is "
    "not known here: graded all the same; re-download the export, or enter the grade by hand"
)


def _submitters(info: dict) -> object:
    return info.get(":submitters") or info.get("submitters")


# A submission's id: a name of a folder beside the metadata, never a path. Gradescope's are submission_<number>.
_FOLDER_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.@+-]*")


def _text(value: object) -> str:
    """A field of the metadata as text a file, a terminal and a spreadsheet can hold: control characters and lone
    surrogates (a name typed with them) become U+FFFD."""
    text = "" if value is None else str(value)
    return "".join("\ufffd" if _unsafe(ord(c)) else c for c in text)


def _unsafe(code: int) -> bool:
    """Control characters, lone surrogates, and the marks that reorder or break what follows (U+202A-U+202E,
    U+2066-U+2069, U+2028, U+2029)."""
    return code < 32 or 127 <= code < 160 or 0xD800 <= code < 0xE000 or 0x2028 <= code <= 0x202E or 0x2066 <= code <= 0x2069


def _field(d: object, key: str) -> str:
    if not isinstance(d, dict):
        return ""
    return _text(d.get(f":{key}", d.get(key, "")))


def find_submissions(folder: Path) -> list[Submission]:
    """The submissions in an export or a plain folder, in a stable order."""
    if not folder.is_dir():
        raise BatchError(f"{folder} is not a folder; pass the unzipped export or a folder of submissions.")
    entries = sorted(p for p in folder.iterdir() if not p.name.startswith(".") and p.name != "__MACOSX")
    if (folder / "submission_metadata.yml").is_file():
        meta = _read_export_metadata(folder)
        subs = []
        linked = [key for key in meta if (folder / key).is_symlink()]
        if linked:  # an export's folders are folders: a link would grade (and copy into a worker) what it points to
            raise BatchError(f"{folder}: {linked[0]} is a link, not a submission's folder; re-download the export.")
        for key, info in sorted(meta.items()):
            broken = _malformed(info)
            info = info if isinstance(info, dict) and not broken else {}
            submitters = [p for p in _submitters(info) or [{}] if isinstance(p, dict)]
            names = ", ".join(_field(s, "name") for s in submitters if _field(s, "name"))
            subs.append(
                Submission(
                    sid=key,
                    path=folder / key,
                    name=names,
                    student_id=";".join(_field(s, "sid") for s in submitters if _field(s, "sid")),
                    email=";".join(_field(s, "email") for s in submitters if _field(s, "email")),
                    created_at=_field(info, "created_at"),
                    submitters=[{k: _field(p, k) for k in ("name", "sid", "email")} for p in submitters],
                    notes=([] if (folder / key).exists() else ["listed in submission_metadata.yml but its folder is missing"])
                    + ([MALFORMED] if broken else []),
                )
            )
        return subs
    subs = [Submission(sid=p.stem if p.is_file() else p.name, path=p) for p in entries if p.is_dir() or p.is_file()]
    subs = [s for s in subs if s.path.name != "submission_metadata.yml"]
    unreadable = [s.path.name for s in subs if _text(s.sid) != s.sid]
    if unreadable:  # its name reaches file names, pages, gradebooks and the terminal
        raise BatchError(
            f"{folder}: {len(unreadable)} entr{'y has' if len(unreadable) == 1 else 'ies have'} a name with control "
            f"characters or bytes that are not UTF-8 ({_text(unreadable[0])!r}...); rename them and run again."
        )
    by_id: dict[str, list[str]] = {}
    for s in subs:
        by_id.setdefault(s.sid, []).append(s.path.name)
    clashes = {sid: names for sid, names in by_id.items() if len(names) > 1}
    if clashes:  # one results file per id: two entries of one id would overwrite each other's grade
        said = "; ".join(f"{', '.join(names)} (all '{sid}')" for sid, names in sorted(clashes.items()))
        raise BatchError(
            f"{folder}: entries with the same student name would share one grade: {said}. Keep one entry per "
            "student (or rename one) and run again."
        )
    return subs


def class_folder(folder: Path) -> tuple[Path, list[str]]:
    """(the folder to read, what to say about it): ``folder`` itself, or the Gradescope export unzipped one level
    down in it (``folder/<export>/submission_metadata.yml``, as unzipping the export into a folder of its own
    leaves it), said in a note; read as a plain folder, that was one nameless submission. Several exports in
    ``folder``: BatchError naming each, to pass the one to grade."""
    if not folder.is_dir() or (folder / "submission_metadata.yml").is_file():
        return folder, []
    entries = sorted(p for p in folder.iterdir() if not p.name.startswith(".") and p.name != "__MACOSX")
    inside = [p for p in entries if p.is_dir() and not p.is_symlink() and (p / "submission_metadata.yml").is_file()]
    if len(inside) > 1:
        raise BatchError(
            f"{folder} holds {len(inside)} Gradescope exports, one level down: {', '.join(_text(p) for p in inside)}. "
            "Pass the one to grade (the folder holding submission_metadata.yml) instead."
        )
    if not inside:
        return folder, []
    others = [_text(p.name) for p in entries if p != inside[0]]
    beside = f"; not graded beside it: {', '.join(others[:3])}{' ...' if len(others) > 3 else ''}" if others else ""
    return inside[0], [
        f"note: {_text(folder)} holds a Gradescope export one level down: grading {_text(inside[0])}, the folder "
        f"holding submission_metadata.yml (pass it to skip this note){beside}"
    ]


def one_nameless(subs: list[Submission], folder: Path) -> list[str]:
    """A warning when the class would be one submission with no student's name (a student's own upload, an
    export's single submission folder, a folder holding the export's zip): a gradebook of one unnamed row."""
    if len(subs) != 1 or subs[0].name:
        return []
    return [
        f"warning: {_text(folder)} makes a class of one submission ({_text(subs[0].sid)}) with no student's name: is it "
        "one student's upload rather than the class? Pass the unzipped Gradescope export (the folder holding "
        "submission_metadata.yml) or a folder with one file or folder per student."
    ]


def _reachable_by_others(path: Path) -> bool:
    """Could a user who is neither the owner nor in the group list or enter ``path``?"""
    path = path.resolve()
    for folder in path.parents:
        if not folder.stat().st_mode & 0o001:
            return False
    return bool(path.stat().st_mode & 0o005)


def make_private(export: Path, out: Path, earlier: Path | None = None) -> list[str]:
    """As root, before any student code runs: nothing of the class is readable to the worker accounts.

    ``--out`` (results, gradebooks, report) becomes ``0700`` and root's if a worker account owned
    it; the export, and an earlier ``--out`` given to ``--compare``, lose their permissions for
    other users (``o-rwx``) when other users could reach them. Each worker then reads only its
    own student's file, copied into its private staging. Returns what was changed, for the log."""
    from ..sandbox import running_as_root
    from ..sandbox.users import STUDENT_USER

    if not running_as_root():
        return []
    changed = []
    out.mkdir(parents=True, exist_ok=True)
    for folder in (out, out / "results"):
        folder.mkdir(exist_ok=True)
        info = folder.stat()
        try:
            owner = pwd.getpwuid(info.st_uid).pw_name
        except KeyError:
            owner = ""
        if info.st_uid != 0 and (owner == STUDENT_USER or owner.startswith(STUDENT_USER + "-") or not owner):
            os.chown(folder, 0, 0)
            changed.append(f"{folder} now belongs to root")
        if info.st_mode & 0o077:
            folder.chmod(0o700)
            changed.append(f"{folder} is now 0700")
    for folder in (export, earlier):
        if folder is None or not folder.exists():
            continue
        if _reachable_by_others(folder):
            try:
                folder.chmod(folder.stat().st_mode & ~0o007)
                changed.append(f"{folder} was readable by other users (the worker accounts among them): now o-rwx")
            except OSError as exc:  # a read-only copy: say so, the grading itself still isolates each worker
                changed.append(
                    f"WARNING: {folder} is readable by other users and could not be closed ({exc.strerror}); students' code could read it: copy it into a private folder (chmod 700) and grade that"
                )
    return changed


def unlisted(folder: Path, subs: list[Submission]) -> list[str]:
    """An export's folders that its metadata does not list (they are not graded): a warning each."""
    if not (folder / "submission_metadata.yml").is_file():
        return []
    listed = {s.path.name for s in subs}
    return [
        f"{_text(p.name)}/ is in the export but not in submission_metadata.yml: not graded (re-download the export if it should be)"
        for p in sorted(folder.iterdir())
        if p.is_dir() and not p.is_symlink() and p.name not in listed and not p.name.startswith(".") and p.name != "__MACOSX"
    ]


def check_duplicates(subs: list[Submission]) -> list[str]:
    """Students with more than one submission (same id or email); all are graded, and flagged."""
    seen: dict[str, list[str]] = {}
    for s in subs:
        for ident in filter(None, [s.student_id, s.email, s.sid if not s.student_id and not s.email else ""]):
            for part in ident.split(";"):
                seen.setdefault(part, []).append(s.sid)
    warnings = []
    for ident, sids in seen.items():
        if len(set(sids)) > 1:
            for s in subs:
                if s.sid in sids:
                    s.duplicates[ident] = [x for x in sids if x != s.sid]
            warnings.append(f"{_text(ident)} appears in {len(set(sids))} submissions: {_text(', '.join(sorted(set(sids))))}")
    return warnings


def _contains_file(path: Path, filename: str) -> bool:
    if path.is_file():
        if path.suffix == ".zip":
            try:
                check_central_directory(path, UnpackBudget())  # before zipfile builds an object per entry
                with zipfile.ZipFile(path) as zf:
                    return any(Path(n).name.lower() == filename.lower() for n in zf.namelist())
            except (zipfile.BadZipFile, OSError, SubmissionProblem):
                return False
        return path.suffix == ".py"
    return any(p.name.lower() == filename.lower() or p.suffix == ".zip" for p in path.rglob("*"))


def _parse_time(text: str) -> datetime | None:
    """Gradescope's ``2026-11-01 10:00:00.000000000 -08:00`` (nanoseconds) or ISO 8601."""
    text = (text or "").strip()
    if not text:
        return None
    text = re.sub(r"(\.\d{6})\d+", r"\1", text)  # Python reads at most microseconds
    text = re.sub(r"\s+([+-]\d\d:?\d\d)$", r"\1", text).replace("Z", "+00:00")
    try:
        moment = datetime.fromisoformat(text.replace(" ", "T", 1))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def duplicates_text(sub: Submission) -> str:
    """The submission's duplicates in words ("a@x.edu also has submission(s) 12, 14"), "" without any."""
    return "; ".join(f"{ident} also has submission(s) {', '.join(sids)}" for ident, sids in sub.duplicates.items())
