"""What ``assignment.toml`` and ``course.toml`` may hold: one typed schema per file, with a line on every key.

Why a schema: the hand-written key checks let wrong types and values through (``banned = "torch.softmax"``
loaded as 13 one-letter names, ``[feedback]`` written as a string crashed with an AttributeError, a misspelt
key under ``[[assignment]]`` was silently ignored). Each file is now converted to these msgspec Structs, which
refuse unknown keys (``forbid_unknown_fields``), wrong types and values out of range; :mod:`.config_check`
words the refusal (file, key, nearest valid key or value, what to write). The descriptions are the reference
documentation's source: :func:`reference_rows` lists every key with its type, default and an example.

This module is shipped in autograder.zip (assignment.toml is read at every grading), so it needs msgspec
(pinned in requirements.txt) and nothing of the instructor's tools.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec
from msgspec import Meta, Struct, field


def doc(description: str, example: str | None = None, must: str | None = None, key: str | None = None) -> Meta:
    """A key's documentation: its one line, an example value as TOML text, what an error says it ``must`` be
    (derived from its type when not given) and, for a table of free keys, what its keys are (``<test id>``)."""
    extra = {k: v for k, v in (("must", must), ("key", key)) if v}
    return Meta(description=description or None, examples=[example] if example else None, extra=extra or None)


class Moment:
    """A TOML date (``2027-02-22``: the end of that day in the course's time zone) or date-time
    (``2027-02-22T17:00:00-08:00``: that moment). One type for both: msgspec refuses a union of date and
    datetime, and the loader needs to know which of the two it was given (``value``)."""

    __slots__ = ("value",)

    def __init__(self, value: dt.date) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Moment({self.value.isoformat()})"


def dec_hook(type_: type, obj: Any) -> Any:
    """msgspec's hook for :class:`Moment`: a TOML date or date-time, or its ISO text (``"2027-02-22"``)."""
    if type_ is Moment:
        if isinstance(obj, dt.date):
            return Moment(obj)
        if isinstance(obj, str):
            try:
                return Moment(dt.date.fromisoformat(obj))
            except ValueError:
                pass
        raise ValueError("Expected a date or a date-time")
    raise NotImplementedError


# -- assignment.toml ---------------------------------------------------------------------------------------------

Visibility = Literal["hidden", "after_due_date", "after_published", "visible"]
HiddenSummary = Literal["off", "points", "categories", "causes"]
Seconds = Annotated[float, Meta(gt=0)]
TestPoints = Annotated[
    float,
    Meta(gt=0),
    doc("", "4", "a number of points above 0 (e.g. 4 or 2.5)"),
]
WHY = "a string that says why"


class Feedback(Struct, forbid_unknown_fields=True, kw_only=True):
    hidden_summary: Annotated[
        HiddenSummary,
        doc("what a student sees at once of the hidden tests' losses: off, points, categories or causes", '"categories"'),
    ] = "categories"


class Mutants(Struct, forbid_unknown_fields=True, kw_only=True):
    equivalent: Annotated[
        dict[str, Annotated[str, doc("", must=WHY)]],
        doc(
            "derived mutants no test can kill, each with why (read by `make mutants`)",
            '{ "compare:softmax:0" = "why" }',
            key="<mutant id>",
        ),
    ] = {}


class AssignmentFile(Struct, forbid_unknown_fields=True, kw_only=True):
    """``assignments/<name>/assignment.toml``."""

    title: Annotated[
        str,
        Meta(min_length=1),
        doc(
            "the assignment's title, at the top of its handout",
            '"Scaled dot-product attention"',
            "a string in double quotes, not empty",
        ),
    ]
    module: Annotated[str, doc("the module students submit, without .py (they hand in <module>.py)", '"attention"')]
    banned: Annotated[
        list[str],
        doc(
            "calls a submission may not make: dotted names of torch, numpy or einops, each checked to exist",
            '["torch.softmax", "torch.nn.functional.softmax"]',
            "a list of dotted names in double quotes",
        ),
    ] = []
    test_timeout: Annotated[
        Seconds, doc("seconds one test may take (a hang costs that test only)", "20", "a number of seconds above 0")
    ] = 20.0
    run_timeout: Annotated[
        Seconds,
        doc(
            "seconds the whole grading may take: at most 480, and not less than test_timeout",
            "420",
            "a number of seconds above 0",
        ),
    ] = 420.0
    worker_helpers: Annotated[
        Union[str, None],
        doc(
            "a file of the assignment's folder the worker imports beside the submission (seeded generators...)",
            '"worker_helpers.py"',
        ),
    ] = None
    points: Annotated[
        dict[str, TestPoints],
        doc(
            "every graded test by its id, with its points; they add up to 100",
            '{ "hidden/test_softmax.py::test_large_inputs" = 4 }',
            key="<test id>",
        ),
    ] = {}
    visibility: Annotated[
        dict[str, Visibility],
        doc(
            "when a test's result is shown, by test id (default: public tests visible, hidden ones after_published)",
            '{ "hidden/test_softmax.py::test_large_inputs" = "visible" }',
            key="<test id>",
        ),
    ] = {}
    uncaught: Annotated[
        dict[str, Annotated[str, doc("", must=WHY)]],
        doc(
            "hidden tests no catalogued mistake needs to fail, each with why (read by the self-check)",
            '{ "hidden/test_x.py::test_y" = "why" }',
            key="<test id>",
        ),
    ] = {}
    untested_functions: Annotated[
        dict[str, Annotated[str, doc("", must="a string that says how it is graded")]],
        doc(
            "functions of the stub no test names, each with how it is graded",
            '{ sinusoidal_positions = "graded through TinyCausalLM" }',
            key="<function>",
        ),
    ] = {}
    feedback: Annotated[Feedback, doc("what students see of the hidden tests")] = field(default_factory=Feedback)
    mutants: Annotated[Mutants, doc("what `make mutants` reads")] = field(default_factory=Mutants)


# -- course.toml -------------------------------------------------------------------------------------------------

PLATFORMS = ("gradescope", "prairielearn")
Platform = Literal["gradescope", "prairielearn"]
DATE_OR_TIME = "a date (2027-02-22) or a date-time (2027-02-22T17:00:00-08:00)"
AMOUNT = 'a percentage such as "10%" or a number of points such as 5'
Percentage = Annotated[str, Meta(pattern=r"^\s*[0-9]+(\.[0-9]*)?\s*%\s*$", extra={"type": 'percentage ("10%")'})]
Amount = Union[Percentage, Annotated[float, Meta(ge=0)], None]


class Shipment(Struct, forbid_unknown_fields=True, kw_only=True):
    from_: Annotated[str, doc("the earlier assignment whose reference code is shipped", '"multihead"')] = field(name="from")
    names: Annotated[
        list[str],
        Meta(min_length=1),
        doc("its functions or classes shipped in this student.zip", '["sinusoidal_positions"]', "a list of one or more names"),
    ]
    not_before: Annotated[
        Moment,
        doc("the first release day that ships them, not before the earlier assignment's deadline", "2027-03-01", DATE_OR_TIME),
    ]


class CourseAssignment(Struct, forbid_unknown_fields=True, kw_only=True):
    name: Annotated[str, doc("the assignment: its folder under assignments/ (one not authored yet is skipped)", '"attention"')]
    material: Annotated[
        str, doc("the course material it goes with (the schedule's column)", '"Week 9: scaled dot-product attention"')
    ] = ""
    release: Annotated[Union[Moment, None], doc("the day student.zip is handed out", "2027-02-15", DATE_OR_TIME)] = None
    due: Annotated[
        Union[Moment, None],
        doc("the deadline: a date is 23:59:59 that day in `timezone`, a date-time that moment", "2027-02-22", DATE_OR_TIME),
    ] = None
    builds_on: Annotated[
        list[str],
        doc(
            "earlier assignments whose work it uses (students bring their own code)",
            '["seq2seq"]',
            "a list of assignment names in double quotes",
        ),
    ] = []
    hints: Annotated[bool, doc("ship the handout's optional code-level hints", "true")] = False
    ships: Annotated[list[Shipment], doc("earlier references shipped in this release, each from a date")] = []
    not_answers: Annotated[
        dict[str, Annotated[str, doc("", must=WHY)]],
        doc(
            "names this release defines that another assignment asks students to write, each with why it is not that answer",
            '{ MultiHeadAttention = "torch\'s own module, which multihead bans" }',
            key="<name>",
        ),
    ] = {}


class Similarity(Struct, forbid_unknown_fields=True, kw_only=True):
    threshold: Annotated[
        float,
        Meta(ge=0, le=1),
        doc(
            "pairs sharing at least this fraction of one student's own code are listed", "0.5", "a number from 0 to 1 (e.g. 0.5)"
        ),
    ] = 0.5
    top: Annotated[
        int, Meta(ge=0), doc("how many of the most similar pairs the dashboard shows", "20", "a whole number of pairs (e.g. 20)")
    ] = 20


class Late(Struct, forbid_unknown_fields=True, kw_only=True):
    grace_minutes: Annotated[
        float, Meta(ge=0), doc("minutes after the deadline that still count as on time", "15", "a number of minutes (e.g. 15)")
    ] = 0.0
    per_day: Annotated[
        Amount, doc("off for each day late (any part of 24 h): a percentage of the score, or points", '"10%"', AMOUNT)
    ] = None
    cap: Annotated[
        Amount, doc("the most late work can score: a percentage of the assignment's points, or points", '"70%"', AMOUNT)
    ] = None
    late_days: Annotated[
        int,
        Meta(ge=0),
        doc(
            "each student's whole late days for the term, spent before the policy applies", "3", "a whole number of days (e.g. 3)"
        ),
    ] = 0
    ledger: Annotated[str, doc("where the late days spent are kept, relative to the folder holding --out", '"late_days.csv"')] = (
        "late_days.csv"
    )


class CourseFile(Struct, forbid_unknown_fields=True, kw_only=True):
    """``course.toml``: the course's order and dates (``[[assignment]]``) and the term's rules."""

    title: Annotated[str, doc("the course's title, on the schedule (dist/course.md)", '"Attention and Transformers"')] = "Course"
    timezone: Annotated[str, doc("the time zone of the deadlines, an IANA name", '"America/Los_Angeles"')] = "UTC"
    platforms: Annotated[
        list[Platform],
        Meta(min_length=1),
        doc(
            "what `make release` builds for each assignment (default both)",
            '["gradescope", "prairielearn"]',
            'a list of one or more of "gradescope", "prairielearn"',
        ),
    ] = field(default_factory=lambda: list(PLATFORMS))
    assignment: Annotated[list[CourseAssignment], doc("the course's assignments, in order")] = []
    similarity: Annotated[Similarity, doc("grade-all's similar pairs")] = field(default_factory=Similarity)
    late: Annotated[Late, doc("the late policy grade-all applies")] = field(default_factory=Late)
    extensions: Annotated[
        dict[
            str,
            Annotated[dict[str, Annotated[Moment, doc("", must=DATE_OR_TIME)]], doc("", key="<student id or email>")],
        ],
        doc(
            "one student's own deadline for one assignment (a date means 23:59:59 that day in `timezone`)",
            '{ attention = { "ada@example.edu" = 2027-02-25 } }',
            key="<assignment>",
        ),
    ] = {}


FILES = {"assignment.toml": AssignmentFile, "course.toml": CourseFile}


# -- the reference ---------------------------------------------------------------------------------------------


def unwrap(tp: Any) -> tuple[Any, list[Meta]]:
    """The type under ``Annotated`` and its Meta, outermost first."""
    metas: list[Meta] = []
    while get_origin(tp) is Annotated:
        tp, *extra = get_args(tp)
        metas += [m for m in extra if isinstance(m, Meta)]
    return tp, metas


def meta_of(tp: Any, name: str) -> Any:
    """A Meta attribute (``description``, ``examples``) or extra (``must``, ``key``, ``type``) of ``tp``, the first set."""
    for meta in unwrap(tp)[1]:
        value = (meta.extra or {}).get(name) if name in ("must", "key", "type") else getattr(meta, name)
        if value:
            return value[0] if name == "examples" else value
    return None


def is_table(tp: Any) -> bool:
    base = unwrap(tp)[0]
    return isinstance(base, type) and issubclass(base, Struct)


def type_text(tp: Any) -> str:
    """``number > 0``, ``list of string``, ``"off" | "points"``, ``table of <test id> = number > 0``."""
    base, metas = unwrap(tp)
    origin, args = get_origin(base), get_args(base)
    if meta_of(tp, "type"):
        return meta_of(tp, "type")
    limits = {
        sign: value for m in metas for sign, value in ((">", m.gt), (">=", m.ge), ("<", m.lt), ("<=", m.le)) if value is not None
    }
    bounds = "".join(f" {sign} {value:g}" for sign, value in limits.items())
    if set(limits) == {">=", "<="}:
        bounds = f" from {limits['>=']:g} to {limits['<=']:g}"
    if origin is Union:
        return " or ".join(type_text(a) for a in args if a is not type(None))
    if origin is Literal:
        return " | ".join(f'"{a}"' for a in args)
    if origin is list:
        return f"list of {type_text(args[0])}"
    if origin is dict:
        return f"table of {meta_of(tp, 'key') or '<key>'} = {type_text(args[1])}"
    names = {str: "string", bool: "boolean", int: "integer", float: "number", Moment: "date or date-time"}
    return names.get(base, "table" if is_table(base) else getattr(base, "__name__", str(base))) + bounds


def _default_text(info: msgspec.structs.FieldInfo) -> str:
    if info.required:
        return "(required)"
    value = info.default if info.default is not msgspec.NODEFAULT else info.default_factory()
    if value is None:
        return "(none)"
    if isinstance(value, Struct):
        return "(table)"
    return msgspec.json.encode(value).decode().replace(",", ", ") if not isinstance(value, bool) else str(value).lower()


def _rows(file: str, struct: type, table: str) -> list[dict[str, str]]:
    rows, nested = [], []
    for info in msgspec.structs.fields(struct):
        base, _ = unwrap(info.type)
        name = f"{table.strip('[]')}.{info.encode_name}".lstrip(".")  # the table a header names: late, assignment.ships
        if is_table(base):
            nested += _rows(file, base, f"[{name}]")
        elif get_origin(base) is list and is_table(get_args(base)[0]):
            nested += _rows(file, unwrap(get_args(base)[0])[0], f"[[{name}]]")
        else:
            rows.append(_row(file, table, info))
    return rows + nested


def _row(file: str, table: str, info: msgspec.structs.FieldInfo) -> dict[str, str]:
    return {
        "file": file,
        "table": table,
        "key": info.encode_name,
        "type": type_text(info.type),
        "default": _default_text(info),
        "description": meta_of(info.type, "description") or "",
        "example": meta_of(info.type, "examples") or "",
    }


def reference_rows() -> list[dict[str, str]]:
    """Every key of both files, for the reference pages: file, table (``""`` at the top, ``[late]``,
    ``[[assignment]]``, ``[[assignment.ships]]``), key, type, default, description and example (TOML text)."""
    return [row for file, struct in FILES.items() for row in _rows(file, struct, "")]
