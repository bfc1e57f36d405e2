"""The documentation's generated pages say what the code says, and the README and the changelog keep their shape.

* docs/reference/config.md (tools/gen_docs.py) lists every key the configuration schema accepts, under its file
  and table, and no key the loader refuses (the former `[functions.<f>]` and `[mistakes.<id>]` tables);
* docs/reference/cli.md lists every command of the parser;
* README.md stays under about 800 words, says on its first screen how to put an assignment on Gradescope, and holds
  no block a command rewrites;
* CHANGELOG.md is one line per change under version headings, the newest version being the kit's one version
  (`autograder.__version__`, which pyproject.toml reads).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import autograder

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

KIT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(KIT / "tools"))

import gen_docs  # noqa: E402


def _sections(page: str) -> dict[tuple[str, str], str]:
    """{(file, table): the text under that heading} of the config page."""
    found, file, table = {}, "", ""
    for line in page.splitlines():
        if line.startswith("## "):
            file, table = line[3:].strip(), ""
        elif line.startswith("### "):
            heading = line[4:].strip().strip("`")
            table = "" if heading == "Top level" else heading
        else:
            found.setdefault((file, table), "")
            found[(file, table)] += line + "\n"
    return found


def test_the_config_page_lists_every_key_the_schema_accepts():
    page = gen_docs.config_page()
    sections = _sections(page)
    keys = gen_docs.config_keys()
    assert {file for file, _, _ in keys} == {"course.toml", "assignment.toml"}
    missing = [
        (file, table, key)
        for file, table, key in keys
        if not re.search(rf"^\| `{re.escape(key)}` \|", sections.get((file, table), ""), re.MULTILINE)
    ]
    assert not missing, f"docs/reference/config.md does not list {missing}"
    listed = {
        (file, table, m.group(1))
        for (file, table), text in sections.items()
        for m in re.finditer(r"^\| `([^`]+)` \|", text, re.MULTILINE)
    }
    assert listed == keys, f"listed but not in the schema: {sorted(listed - keys)}"


def test_the_config_page_lists_nothing_the_loader_refuses():
    sections = _sections(gen_docs.config_page())
    top = sections.get(("assignment.toml", ""), "")
    for former in ("functions", "mistakes"):  # refused with what to write instead
        assert f"| `{former}` |" not in top
        assert not any(table.startswith((f"[{former}", former)) for _, table in sections)


def test_the_cli_page_lists_every_command():
    from autograder.cli import build_parser

    page = gen_docs.cli_page()
    commands = [name for name, _, _ in gen_docs._subcommands(build_parser())]
    assert "grade" in commands and "release" in commands
    for name in [*commands, "bench"]:
        assert f"\n## {name}\n" in page, f"docs/reference/cli.md has no section for `{name}`"


def test_the_readme_is_short_and_starts_with_gradescope():
    text = (KIT / "README.md").read_text()
    words = len(text.split())
    assert words <= 850, f"README.md has {words} words; move detail into docs/ (about 800 at most)"
    first_screen = "\n".join(text.splitlines()[:12])
    assert "autograder.zip" in first_screen and "Gradescope" in first_screen
    assert ":start -->" not in text, "README.md holds a block a command rewrites; those live in docs/measurements/"


def test_the_changelog_is_one_line_per_change_and_one_version():
    text = (KIT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert headings[0] == "Unreleased", "the first heading is where the next changes go"
    versions = [h.split()[0] for h in headings[1:]]
    assert versions[0] == autograder.__version__, f"the newest version is {versions[0]}, the kit's {autograder.__version__}"
    assert versions == sorted(versions, key=lambda v: tuple(int(p) for p in v.split(".")), reverse=True)
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("- "):
            assert "regrading changes scores:" in line, f"CHANGELOG.md:{number + 1} does not say whether regrading changes scores"
            follower = lines[number + 1] if number + 1 < len(lines) else ""
            assert not follower.startswith(" "), f"CHANGELOG.md:{number + 1}: an entry is one line"
    pyproject = tomllib.loads((KIT / "pyproject.toml").read_text())
    assert "version" not in pyproject["project"], "pyproject.toml states a version of its own"
    assert "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "autograder.__version__"}
