#!/usr/bin/env python3
"""Write a small class's submissions, laid out as Gradescope's "Export Submissions" folder, to try grade-all on.

    python tools/sample_export.py attention /tmp/export [--students 6]

The students are made up; their files come from the assignment's own catalogue, so the grades are known:
the reference (100), the untouched stub (0), a correct solution in another style (100), and catalogued
mistakes (each named in its feedback). One submission is late, one is a group of two, and one student
submitted twice (the later counts). The tutorial "Your first term" grades this folder with grade-all; the
documentation's screenshots (docs/assets/screenshots/) are of that run's pages, taken with headless Chromium:

    python tools/sample_export.py attention /tmp/export
    .venv/bin/attention-kit grade-all attention /tmp/export --out /tmp/graded --due 2027-02-22T23:59:00+00:00
    chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,1400 \
        --screenshot=docs/assets/screenshots/dashboard.png file:///tmp/graded/report.html
    (student-page.png: students/submission_5005.html, feedback.png: students/submission_5006.html, 1100x1250)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

KIT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(KIT))

from autograder.catalogue import read_catalogue, submission_source  # noqa: E402
from autograder.config import load_assignment  # noqa: E402
from autograder.release.markers import make_stub  # noqa: E402

# (submission id, [(name, sid, email)], created_at): made-up people; the deadline the dates are read against is
# course.toml's, or grade-all's --due (the tutorial passes one).
PEOPLE = [
    ("submission_5001", [("Ada Lovelace", "111", "ada@example.edu")], "2027-02-21 18:00:00"),
    ("submission_5002", [("Alan Turing", "222", "alan@example.edu")], "2027-02-22 21:30:00"),
    (
        "submission_5003",
        [("Grace Hopper", "333", "grace@example.edu"), ("José Núñez", "444", "jose@example.edu")],
        "2027-02-22 12:00:00",
    ),
    ("submission_5004", [("Barbara Liskov", "555", "barbara@example.edu")], "2027-02-24 09:00:00"),
    ("submission_5005", [("Edsger Dijkstra", "666", "edsger@example.edu")], "2027-02-20 10:00:00"),
    ("submission_5006", [("Katherine Johnson", "777", "katherine@example.edu")], "2027-02-22 23:00:00"),
    ("submission_5007", [("Donald Knuth", "888", "donald@example.edu")], "2027-02-19 15:00:00"),
    ("submission_5008", [("Ada Lovelace", "111", "ada@example.edu")], "2027-02-20 09:00:00"),
]


def sources(name: str, count: int) -> list[str]:
    """``count`` submissions: the reference, the stub, a variant when there is one, then mistakes."""
    assignment = load_assignment(name)
    reference = assignment.solution.read_text()
    files = [reference, make_stub(reference)]
    variants = read_catalogue(assignment, "variant")
    if variants:
        files.append(submission_source(assignment, variants[0]))
    mistakes = read_catalogue(assignment, "mistake")
    step = max(1, len(mistakes) // max(1, count - len(files)))
    files += [submission_source(assignment, m) for m in mistakes[::step]]
    return files[:count]


def write_export(name: str, folder: Path, count: int = 6) -> Path:
    assignment = load_assignment(name)
    count = max(2, min(count, len(PEOPLE)))
    folder.mkdir(parents=True, exist_ok=False)
    metadata = []
    for (sid, people, created), source in zip(PEOPLE[:count], sources(name, count)):
        (folder / sid).mkdir()
        (folder / sid / assignment.submit_file).write_text(source)
        metadata.append(f"{sid}:\n  :submitters:")
        for person, student_id, email in people:
            metadata.append(f"  - :name: {person}\n    :sid: '{student_id}'\n    :email: {email}")
        metadata.append(f"  :created_at: {created}.000000000 +00:00")
    (folder / "submission_metadata.yml").write_text("\n".join(metadata) + "\n", encoding="utf-8")
    return folder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment")
    parser.add_argument("folder", help="where to write the export (must not exist)")
    parser.add_argument("--students", type=int, default=6, help=f"how many submissions (2 to {len(PEOPLE)})")
    args = parser.parse_args(argv)
    try:
        folder = write_export(args.assignment, Path(args.folder), args.students)
    except FileExistsError:
        print(f"error: {args.folder} exists; name a new folder", file=sys.stderr)
        return 2
    print(f"wrote {folder}: {sum(p.is_dir() for p in folder.iterdir())} submissions and submission_metadata.yml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
