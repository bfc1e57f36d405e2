"""The catalogue of an assignment: classic mistakes, correct variants, and independent code.

Each entry is one file in ``assignments/<a>/{mistakes,variants,corpus}/`` (the one form: the scaffold
writes its mistakes as files too). Its docstring's first line is the title, the rest the explanation a student sees; ``CAUGHT_BY`` lists the tests a
mistake must lose points in. The code of an entry is the reference solution changed one of two
ways (read here with ``ast``; nothing is run):

* ``PATCH = [(old, new), ...]``: line edits of the reference. ``old`` is one or more lines of
  code, matched against the reference ignoring indentation and trailing comments, and must
  match exactly once (a clear error otherwise, so a changed reference never silently breaks a
  mistake); ``new`` replaces them at the same indentation ("" deletes them). A mistake in a
  long training loop is then the one line it changes, not a copy of the loop.
* definitions after the declarations, appended to the (patched) reference, redefining what
  they change (short functions read better whole).

The grader's diagnosis and the release self-check both read entries here, so grading never
imports release code. The sources only the release grades (a corpus entry with its bug, the submission that
computes nothing) are built in :mod:`autograder.release.catalogue_grading`.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from .config import Assignment, ConfigError

KINDS = ("mistake", "variant", "corpus")
DECLARATIONS = ("CAUGHT_BY", "BUG", "BUG_NAMES", "PATCH")


@dataclass
class CatalogueEntry:
    kind: str  # "mistake", "variant" or "corpus"
    name: str
    path: Path
    title: str
    explanation: str
    caught_by: list[str]
    bug: tuple[str, str] | None = None  # corpus: one injected bug, (text, replacement)
    bug_names: list[str] = field(default_factory=list)  # corpus: the mistakes that bug may be named as
    patch: list[tuple[str, str]] = field(default_factory=list)
    code: str = ""  # what is appended to the (patched) reference: the entry's file ("" for a table in assignment.toml)


def folder_of(assignment: Assignment, kind: str) -> Path:
    return {"mistake": assignment.mistakes_dir, "variant": assignment.variants_dir, "corpus": assignment.root / "corpus"}[kind]


def read_catalogue(assignment: Assignment, kind: str) -> list[CatalogueEntry]:
    """Mistakes, variants or the independent-code corpus of ``assignment``, in name order."""
    folder = folder_of(assignment, kind)
    entries = []
    for path in sorted(folder.glob("*.py")) if folder.is_dir() else []:
        try:
            tree = ast.parse(path.read_text(), str(path))
        except SyntaxError as exc:
            raise ConfigError(f"{path}: not valid Python ({exc.msg}, line {exc.lineno})") from None
        doc = (ast.get_docstring(tree) or path.stem).strip()
        title, _, explanation = doc.partition("\n")
        declared: dict[str, object] = {}
        for node in tree.body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if getattr(target, "id", "") in DECLARATIONS:
                        try:
                            declared[target.id] = ast.literal_eval(node.value)
                        except ValueError:
                            raise ConfigError(f"{kind} {path.stem} ({path}): {target.id} must be a literal") from None
        bug = declared.get("BUG")
        patch = [tuple(pair) for pair in declared.get("PATCH", [])]
        if any(len(pair) != 2 or not all(isinstance(p, str) for p in pair) for pair in patch):
            raise ConfigError(f"{kind} {path.stem} ({path}): PATCH must be a list of (old, new) pairs of strings")
        entries.append(
            CatalogueEntry(
                kind,
                path.stem,
                path,
                title.strip(),
                unwrap(explanation),
                list(declared.get("CAUGHT_BY", [])),
                tuple(bug) if bug else None,
                list(declared.get("BUG_NAMES", [])),
                patch,  # type: ignore[arg-type]
                path.read_text(),
            )
        )
    return entries


def _code(line: str) -> str:
    """A line's code, without indentation or a trailing comment (a '#' inside a string is rare in
    references and only makes a PATCH fail to match, loudly)."""
    return line.split("#", 1)[0].strip()


def apply_patch(source: str, patch: list[tuple[str, str]], where: str = "PATCH") -> str:
    """``source`` with each (old, new) applied; each ``old`` must match exactly once."""
    lines = source.splitlines(keepends=True)
    for old, new in patch:
        wanted = [_code(line) for line in old.strip("\n").splitlines()]
        if not wanted or not all(wanted):
            raise ConfigError(f"{where}: {old!r} must be one or more non-empty lines of code")
        codes = [_code(line) for line in lines]
        hits = [i for i in range(len(lines) - len(wanted) + 1) if codes[i : i + len(wanted)] == wanted]
        if len(hits) != 1:
            raise ConfigError(
                f"{where}: {old.strip()!r} must match exactly one place in the reference, found {len(hits)}; "
                "update the PATCH to the reference's current lines"
            )
        first = lines[hits[0]]
        indent = first[: len(first) - len(first.lstrip())]
        replacement = [indent + line + "\n" if line.strip() else "\n" for line in textwrap.dedent(new).strip("\n").splitlines()]
        lines[hits[0] : hits[0] + len(wanted)] = replacement if new.strip() else []
    return "".join(lines)


def submission_source(assignment: Assignment, entry: CatalogueEntry | None) -> str:
    """The whole wrong (or variant) solution: the reference, patched, with the entry's
    definitions appended."""
    return combined_source(assignment, [] if entry is None else [entry])


def combined_source(assignment: Assignment, entries: list[CatalogueEntry]) -> str:
    """The reference with several entries at once (a submission with two mistakes): every PATCH
    applied in turn, then every entry's definitions appended."""
    source = assignment.solution.read_text()
    for entry in entries:
        if entry.patch:
            source = apply_patch(source, entry.patch, f"{entry.kind} {entry.name} ({entry.path})")
    return source + "".join(f"\n\n# ---- {e.kind}: {e.name} ----\n" + e.code for e in entries)


def _definitions(source: str) -> dict[str, str]:
    """The last definition of each top-level function and class, as a normalised AST dump."""
    found: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
                body = body[1:]  # docstrings do not count as changes
            found[node.name] = ast.dump(ast.Module(body=body, type_ignores=[]))
        elif isinstance(node, ast.Assign):  # Class.method = ... redefines the class
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                    found[target.value.id] = found.get(target.value.id, "") + ast.dump(node)
    return found


@lru_cache(maxsize=512)
def _changed(reference: str, source: str) -> frozenset[str]:
    before, after = _definitions(reference), _definitions(source)
    return frozenset(name for name, dump in after.items() if before.get(name) != dump)


def changed_names(assignment: Assignment, entry: CatalogueEntry) -> set[str]:
    """The top-level functions and classes an entry changes (patched or redefined)."""
    return set(_changed(assignment.solution.read_text(), submission_source(assignment, entry)))


def unwrap(text: str) -> str:
    """A docstring's paragraphs as the student reads them: the source's line breaks inside a paragraph
    joined with spaces, blank lines kept as paragraph breaks."""
    paragraphs = [" ".join(line.strip() for line in block.splitlines() if line.strip()) for block in text.strip().split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)
