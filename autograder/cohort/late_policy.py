"""The term's rules for late work: course.toml's ``[late]`` and ``[extensions.<assignment>]``, applied per student.

One job: from a student's submission time, their deadline (the one in force, or their extension),
the grace period, the late days they have left and the score the grader gave, say what they get
and why (:class:`LateOutcome`: ``raw_total``, ``late_days_used``, ``penalty``, ``total`` and the
``rule`` text each gradebook row carries). A day late is any part of 24 hours after the deadline,
once past the grace period; late days absorb whole days first, the policy deducts for the rest.
Nothing here changes when ``[late]`` is absent: the total is the grader's score. The term's
ledger of late days spent is :mod:`.late_days`.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

from ..config import KIT_ROOT, ConfigError

LATE_KEYS = ("grace_minutes", "per_day", "cap", "late_days", "ledger")
DEFAULT_LEDGER = "late_days.csv"  # beside the --out folders (a relative path is read from --out's parent)
DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class Amount:
    """``"10%"`` (a percentage) or ``5`` (points), as course.toml writes it."""

    value: float
    percent: bool

    def __str__(self) -> str:
        return f"{self.value:g} %" if self.percent else f"{self.value:g} point{'s' if self.value != 1 else ''}"


def _amount(value: object, where: str) -> Amount:
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            number = float(value.strip()[:-1])
        except ValueError:
            number = -1.0
        if 0 <= number <= 100:
            return Amount(number, True)
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return Amount(float(value), False)
    raise ConfigError(f'course.toml: late.{where} = {value!r}: a percentage such as "10%" or a number of points such as 5')


@dataclass(frozen=True)
class LatePolicy:
    """``[late]``: ``per_day`` off for each day late (a percentage of the grader's score, or points),
    ``cap`` (the most late work can score: a percentage of the assignment's points, or points),
    ``grace_minutes`` after the deadline that are not late, and ``late_days`` each student may spend
    in the term before the policy applies (recorded in ``ledger``)."""

    grace_minutes: float = 0.0
    per_day: Amount | None = None
    cap: Amount | None = None
    late_days: int = 0
    ledger: str = DEFAULT_LEDGER

    @property
    def configured(self) -> bool:
        return bool(self.per_day or self.cap or self.late_days)

    def describe(self) -> str:
        """The policy in one line, as grade-all prints it and the dashboard states it."""
        if not self.configured:
            return "no late policy (course.toml has no [late]): totals are the grader's scores"
        parts = [
            f"{self.per_day} off per day late" if self.per_day else "",
            f"late work scores at most {self.cap}" if self.cap else "",
        ]
        if self.late_days:
            parts.append(f"{self.late_days} late day{'s' if self.late_days != 1 else ''} per student for the term")
        if self.grace_minutes:
            parts.append(f"{self.grace_minutes:g} minutes' grace")
        return "late policy: " + "; ".join(p for p in parts if p)


def load_policy(kit_root=KIT_ROOT, path=None) -> LatePolicy:
    """course.toml's ``[late]`` (or that of the course file ``path``), checked (unknown keys name the nearest valid one)."""
    from ..release.course import read_table

    table = read_table("late", LATE_KEYS, kit_root, path)
    grace, days = table.get("grace_minutes", 0), table.get("late_days", 0)
    if isinstance(grace, bool) or not isinstance(grace, (int, float)) or grace < 0:
        raise ConfigError(f"course.toml: late.grace_minutes = {grace!r}: a number of minutes (e.g. 15)")
    if isinstance(days, bool) or not isinstance(days, int) or days < 0:
        raise ConfigError(f"course.toml: late.late_days = {days!r}: a whole number of days (e.g. 3)")
    return LatePolicy(
        grace_minutes=float(grace),
        per_day=_amount(table["per_day"], "per_day") if "per_day" in table else None,
        cap=_amount(table["cap"], "cap") if "cap" in table else None,
        late_days=days,
        ledger=str(table.get("ledger", DEFAULT_LEDGER)),
    )


def load_extensions(assignment: str, zone: str, kit_root=KIT_ROOT, path=None) -> dict[str, dt.datetime]:
    """``[extensions.<assignment>]``: {student id or email (lower case): their deadline}. A date means
    23:59:59 that day in the course's time zone, as a ``due`` does."""
    from ..release.course import _deadline, read_table

    table = read_table("extensions", None, kit_root, path).get(assignment, {})
    if not isinstance(table, dict):
        raise ConfigError(f'course.toml: extensions.{assignment} must be a table: "<student id or email>" = <date-time>')
    return {str(k).strip().lower(): _deadline(v, zone, f"course.toml, extensions.{assignment}.{k}") for k, v in table.items()}


def deadline_for(person: dict, due: dt.datetime | None, extensions: dict[str, dt.datetime]) -> tuple[dt.datetime | None, bool]:
    """(this student's deadline, whether it is an extension): theirs by id, else by email, else ``due``.
    No deadline in force (``--due none``) means none for anyone."""
    if due is None:
        return None, False
    for key in (person.get("sid", ""), person.get("email", "")):
        if key and key.strip().lower() in extensions:
            return extensions[key.strip().lower()], True
    return due, False


def days_late(submitted: dt.datetime | None, deadline: dt.datetime | None, grace_minutes: float = 0.0) -> int | None:
    """Whole days late (any part of a day counts as one), 0 when on time or within the grace period,
    None when there is no deadline or no submission time."""
    if submitted is None or deadline is None:
        return None
    late_by = submitted - deadline
    if late_by <= dt.timedelta(minutes=grace_minutes):
        return 0
    return math.ceil(late_by / DAY)


@dataclass(frozen=True)
class LateOutcome:
    """What the late policy did to one student's score, with the words a gradebook row carries."""

    raw_total: float
    total: float
    penalty: float
    late_days_used: int
    days_late: int | None  # None: no deadline or no submission time
    rule: str

    @property
    def late(self) -> bool | None:
        return None if self.days_late is None else self.days_late > 0


def _days(n: int) -> str:
    return f"{n} day{'s' if n != 1 else ''}"


def _deduction(raw: float, rest: int, policy: LatePolicy, max_points: float) -> tuple[float, float | None]:
    """(points off for ``rest`` days past the late days, the cap's ceiling when it lowered the score)."""
    penalty = 0.0
    if policy.per_day and rest:
        penalty = (raw * policy.per_day.value / 100 if policy.per_day.percent else policy.per_day.value) * rest
    ceiling = None
    if policy.cap and rest:
        limit = max_points * policy.cap.value / 100 if policy.cap.percent else policy.cap.value
        if raw - penalty > limit:
            penalty, ceiling = raw - limit, limit
    return round(min(max(penalty, 0.0), raw), 2), ceiling


def apply_policy(
    raw: float,
    submitted: dt.datetime | None,
    deadline: dt.datetime | None,
    policy: LatePolicy,
    available: int,
    max_points: float,
    extension: str = "",
) -> LateOutcome:
    """The outcome for a student who submitted at ``submitted`` against ``deadline`` with ``available``
    late days left (``extension``: their extended deadline as text, named in the rule), e.g.
    "2 days late: 1 late day used, 10 % off the rest"."""
    raw = float(raw)
    suffix = f" (extension to {extension})" if extension else ""
    days = days_late(submitted, deadline, policy.grace_minutes)
    if days is None:
        return LateOutcome(raw, raw, 0.0, 0, None, "no deadline in force" if deadline is None else f"no submission time{suffix}")
    if days == 0:
        within = submitted > deadline
        return LateOutcome(raw, raw, 0.0, 0, 0, f"on time{suffix}" + (": within the grace period" if within else ""))
    if not policy.configured:
        return LateOutcome(raw, raw, 0.0, 0, days, f"{_days(days)} late{suffix}; course.toml has no late policy")
    used = min(days, max(available, 0))
    rest = days - used
    penalty, ceiling = _deduction(raw, rest, policy, max_points)
    said = [f"{used} late day{'s' if used != 1 else ''} used" + ("" if rest else f" ({available - used} left)")] if used else []
    if rest and policy.per_day:
        said.append(f"{policy.per_day} off the rest" if used else f"{policy.per_day} off per day")
    if ceiling is not None:
        said.append(f"capped at {ceiling:.2f}")
    if rest and not penalty:
        said.append("no deduction" if policy.per_day or ceiling is not None else f"under the cap of {policy.cap}, no deduction")
    if rest and not used and policy.late_days:
        said.insert(0, "no late days left")
    return LateOutcome(raw, round(raw - penalty, 2), penalty, used, days, f"{_days(days)} late{suffix}: " + ", ".join(said))


def mark_late(subs: list, due: dt.datetime | None, extensions: dict[str, dt.datetime], grace_minutes: float = 0.0) -> None:
    """Set each submission's ``late``: late for at least one of its students (their extension and the
    grace period counted), None when there is no deadline or no submission time."""
    from .cohort import people
    from .export import _parse_time

    for s in subs:
        submitted = _parse_time(s.created_at)
        days = [days_late(submitted, deadline_for(p, due, extensions)[0], grace_minutes) for _, p in people(s)]
        known = [d for d in days if d is not None]
        s.late = any(d > 0 for d in known) if known else None


def cohort_outcomes(
    entries: list,
    documents: dict[str, dict],
    due: dt.datetime | None,
    policy: LatePolicy,
    extensions: dict[str, dt.datetime],
    spent: dict[str, int],
    max_points: float,
    zone: str = "UTC",
) -> dict[str, LateOutcome]:
    """{student key: their outcome} for each gradebook entry (class_stats.gradebook_entries), ``spent``
    holding the late days each student used on the course's earlier assignments."""
    from ..release.course import format_deadline
    from .export import _parse_time

    outcomes = {}
    for e in entries:
        raw = float(documents.get(e.sub.sid, {}).get("score", 0) or 0)
        deadline, extended = deadline_for(e.person, due, extensions)
        available = policy.late_days - spent.get(e.key, 0)
        extension = format_deadline(deadline, zone) if extended and deadline else ""
        outcomes[e.key] = apply_policy(raw, _parse_time(e.sub.created_at), deadline, policy, available, max_points, extension)
    return outcomes


def unmatched_extensions(extensions: dict[str, dt.datetime], subs: list) -> list[str]:
    """Extension keys that match no student id or email in this export (a typo, or a student who did not submit)."""
    from .cohort import people

    known = {str(v).strip().lower() for s in subs for _, p in people(s) for v in (p.get("sid"), p.get("email")) if v}
    return sorted(k for k in extensions if k not in known)
