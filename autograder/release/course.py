"""The course as data: ``course.toml`` read into its order, dates, hints and dated shipments.

``course.toml`` at the kit's root orders the assignments, dates their release and
deadline, says what each builds on, and records the instructor's dated choices to
ship an earlier assignment's reference inside a later release. Its dates reach the
students (a line at the top of each handout, :func:`dates_line`) and grading
(``grade-all`` flags submissions after :attr:`CourseEntry.deadline` unless ``--due``
says otherwise).

Its keys, their types and values are the schema's (:class:`~autograder.config_schema.CourseFile`), checked
whenever any part of the file is read (:func:`read_course_file`): a misspelt key in ``[[assignment]]`` or
``[late]`` is refused, naming the nearest valid one, rather than ignored. What no type can say (dates in
order, earlier assignments, a time zone that exists) is checked here.

The check that no ``student.zip`` answers another assignment is :mod:`.answer_check`.
"""

from __future__ import annotations

import datetime as dt
import difflib
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..config import KIT_ROOT, ConfigError, list_assignments, nearest_key, read_toml
from ..config_check import convert
from ..config_schema import PLATFORMS, CourseAssignment, CourseFile, Moment

COURSE_FILE = "course.toml"
DEFAULT_TIMEZONE = "UTC"  # course.toml's `timezone`: where a `due` date's end of day falls
DUE_TIME = dt.time(23, 59, 59)  # a `due` given as a date means the end of that day
# PLATFORMS (config_schema): course.toml's `platforms`, what the release builds (default both)


@dataclass(frozen=True)
class Shipment:
    """Reference code of ``source`` (``names``) shipped in a later release from ``not_before`` on."""

    source: str
    names: tuple[str, ...]
    not_before: dt.date


@dataclass(frozen=True)
class CourseEntry:
    name: str
    material: str = ""
    release: dt.date | None = None
    due: dt.date | None = None
    builds_on: tuple[str, ...] = ()
    hints: bool = False
    ships: tuple[Shipment, ...] = ()
    not_answers: dict[str, str] = field(default_factory=dict)  # name -> why it is not the other assignment's answer
    deadline: dt.datetime | None = None  # the moment `due` means (time zone aware); later submissions are late
    timezone: str = DEFAULT_TIMEZONE  # the course's time zone, named in what the dates say

    def deadline_text(self) -> str:
        """``2027-02-22 23:59 UTC``: the deadline as students and instructors read it ("" if none)."""
        return format_deadline(self.deadline, self.timezone) if self.deadline else ""

    def shipped(self, as_of: dt.date) -> dict[str, set[str]]:
        """{earlier assignment: names of its reference shipped in this release} on ``as_of``."""
        out: dict[str, set[str]] = {}
        for ship in self.ships:
            if as_of >= ship.not_before:
                out.setdefault(ship.source, set()).update(ship.names)
        return out


@dataclass(frozen=True)
class Course:
    title: str
    entries: tuple[CourseEntry, ...]
    path: Path | None = None
    platforms: tuple[str, ...] = PLATFORMS  # what the release builds for each assignment

    @property
    def order(self) -> list[str]:
        return [e.name for e in self.entries]

    def entry(self, name: str) -> CourseEntry:
        for e in self.entries:
            if e.name == name:
                return e
        return CourseEntry(name=name)

    def schedule(self) -> str:
        """The course's schedule as a Markdown table (written to dist/course.md)."""
        lines = [
            f"# {self.title}: release schedule",
            "",
            "| # | assignment | material | release | due | builds on | ships earlier reference | hints |",
            "| ---: | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for i, e in enumerate(self.entries, start=1):
            ships = "; ".join(f"{s.source}: {', '.join(s.names)} (from {s.not_before})" for s in e.ships) or "none"
            lines.append(
                f"| {i} | `{e.name}` | {e.material} | {e.release or '?'} | {e.deadline_text() or '?'} | "
                f"{', '.join(e.builds_on) or '-'} | {ships} | {'shipped' if e.hints else 'no'} |"
            )
        lines += [
            "",
            "Each handout (the README.md of each student.zip) states its release and due dates; `grade-all` flags "
            "submissions after the due time as late unless `--due` overrides it.",
        ]
        return "\n".join(lines) + "\n"


def format_deadline(moment: dt.datetime, zone: str = DEFAULT_TIMEZONE) -> str:
    """``2027-02-22 23:59 UTC`` (in the course's zone), or ``2026-11-02 00:00 UTC-08:00`` for another offset."""
    try:
        from zoneinfo import ZoneInfo

        local = moment.astimezone(ZoneInfo(zone))
        if local.utcoffset() == moment.utcoffset():
            return f"{local:%Y-%m-%d %H:%M} {zone}"
    except Exception:  # noqa: BLE001 - an unknown zone was refused when the course was read; print the offset
        pass
    offset = moment.utcoffset() or dt.timedelta(0)
    sign = "-" if offset < dt.timedelta(0) else "+"
    minutes = abs(int(offset.total_seconds())) // 60
    return f"{moment:%Y-%m-%d %H:%M} UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def dates_line(entry: CourseEntry) -> str:
    """What a handout says of its dates (from course.toml), or "" for an undated assignment."""
    parts = []
    if entry.release:
        parts.append(f"released {entry.release.isoformat()}")
    if entry.deadline:
        parts.append(f"due {entry.deadline_text()}")
    if not parts:
        return ""
    text = ", ".join(parts)
    return f"**{text[0].upper()}{text[1:]}** (the course's schedule, course.toml)."


def _date(value: object, where: str) -> dt.date | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError:
        raise ConfigError(f"{where}: {value!r} is not a date (YYYY-MM-DD)") from None


def _deadline(value: object, zone: str, where: str) -> dt.datetime | None:
    """The moment a ``due`` means: a date is the end of that day in the course's zone; a TOML
    date-time with an offset is that moment; one without an offset is in the course's zone."""
    from zoneinfo import ZoneInfo

    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=ZoneInfo(zone))
    day = _date(value, where)
    return dt.datetime.combine(day, DUE_TIME, tzinfo=ZoneInfo(zone)) if day else None


def _timezone(value: object, where: str) -> str:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

    zone = str(value or DEFAULT_TIMEZONE)
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        near = difflib.get_close_matches(zone, sorted(available_timezones()), n=1)
        hint = f"did you mean {near[0]!r}?" if near else "e.g. UTC, America/Los_Angeles"
        raise ConfigError(f"{where}: timezone {zone!r} is not a time zone name ({hint})") from None
    return zone


def _value(moment: Moment | None) -> dt.date | None:
    return moment.value if moment is not None else None


def read_course_file(path: Path, kit_root: Path = KIT_ROOT, data: dict | None = None) -> CourseFile:
    """``path`` (a course.toml; ``data``, when already parsed) checked against its schema, whatever part of it the
    caller reads: keys, types and values, and each ``[extensions.<assignment>]`` naming an assignment (else its
    deadlines would never apply)."""
    data = read_toml(path) if data is None else data
    spec = convert(data, CourseFile, path, "the comments of the kit's course.toml describe every key")
    known = sorted({a.name for a in spec.assignment} | set(list_assignments(kit_root)))
    for name in spec.extensions:
        if name not in known:
            raise ConfigError(
                f"{path}: [extensions.{name}] names no assignment of the course: {nearest_key(name, known)} "
                "Name the table after the assignment, [extensions.<assignment>]"
            )
    return spec


def load_course(kit_root: Path = KIT_ROOT, path: Path | None = None) -> Course:
    """Read ``course.toml`` (or ``path``); assignments it does not list come last, undated, with a warning."""
    path = path or kit_root / COURSE_FILE
    existing = list_assignments(kit_root)
    if not path.is_file():
        return Course("Course", tuple(CourseEntry(n) for n in existing), None)
    spec = read_course_file(path, kit_root)
    zone = _timezone(spec.timezone, path.name)
    platforms = tuple(p for p in PLATFORMS if p in spec.platforms)
    entries: list[CourseEntry] = []
    for raw in spec.assignment:
        if raw.name not in existing:
            continue  # listed but not (yet) authored: nothing to release
        entries.append(_entry(raw, {e.name: e for e in entries}, zone, path))
    listed = {e.name for e in entries}
    for name in existing:
        if name not in listed:
            print(f"warning: {path.name} does not list assignment {name!r}; it is released last, undated", file=sys.stderr)
            entries.append(CourseEntry(name, timezone=zone))
    return Course(spec.title, tuple(entries), path, platforms)


def _entry(raw: CourseAssignment, earlier: dict[str, CourseEntry], zone: str, path: Path) -> CourseEntry:
    """One ``[[assignment]]`` (its types checked by the schema): dates in order, earlier assignments named."""
    where = f"{path.name}, assignment {raw.name!r}"
    if raw.name in earlier:
        raise ConfigError(f"{where}: listed twice")
    release, due = _date(_value(raw.release), where), _date(_value(raw.due), where)
    deadline = _deadline(_value(raw.due), zone, where)
    if deadline is not None:
        due = deadline.date()
    if release and due and due < release:
        raise ConfigError(f"{where}: due {due} is before its release {release}")
    for dep in raw.builds_on:
        if dep not in earlier:
            raise ConfigError(
                f"{where}: builds_on {dep!r}, which is not an earlier assignment in the course ({nearest_key(dep, list(earlier))})"
            )
    return CourseEntry(
        name=raw.name,
        material=raw.material,
        release=release,
        due=due,
        builds_on=tuple(raw.builds_on),
        hints=raw.hints,
        ships=tuple(_shipments(raw, earlier, where)),
        not_answers=dict(raw.not_answers),
        deadline=deadline,
        timezone=zone,
    )


def _shipments(raw: CourseAssignment, earlier: dict, where: str) -> list[Shipment]:
    """An assignment's [[assignment.ships]]: earlier references it ships, each only after that one's deadline."""
    ships = []
    for ship in raw.ships:
        source, names = ship.from_, tuple(ship.names)
        not_before = _date(ship.not_before.value, where)
        if source not in earlier:
            raise ConfigError(f"{where}: ships from {source!r}, which is not an earlier assignment in the course")
        source_due = earlier[source].due
        if source_due is None or not_before is None or not_before < source_due:
            raise ConfigError(
                f"{where}: ships {source}'s reference from {not_before}, before {source}'s deadline "
                f"({source_due or 'not set'}): that would hand out an answer before it is due"
            )
        ships.append(Shipment(source, names, not_before))
    return ships


def read_table(name: str, keys: tuple[str, ...] | None = None, kit_root: Path = KIT_ROOT, path: Path | None = None) -> dict:
    """course.toml's top-level table ``[name]`` as written (``{}`` when absent or the file is missing): the
    term's rules that grade-all reads (``[late]``, ``[extensions]``, ``[similarity]``). The whole file is
    checked against its schema first (every key, type and value); ``keys`` is no longer needed for that."""
    path = path or kit_root / COURSE_FILE
    if not path.is_file():
        return {}
    data = read_toml(path)
    read_course_file(path, kit_root, data)
    return data.get(name, {})
