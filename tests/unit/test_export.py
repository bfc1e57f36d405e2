"""Reading the class's folder for grade-all (``cohort/export.py``): what a tampered or odd export or plain folder
cannot do (the red team's, 2026-12-05). No grading."""

from __future__ import annotations

import pytest

from autograder.cohort.export import BatchError, check_duplicates, class_folder, find_submissions, one_nameless, unlisted


def _export(folder, text: str, names=("submission_1",)):
    folder.mkdir()
    for name in names:
        (folder / name).mkdir()
    (folder / "submission_metadata.yml").write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "key",
    ["../../../../tmp/elsewhere", "/tmp/victim/keep", "..", "a/b", "7", "true"],
    ids=["parent", "absolute", "dots", "slash", "number", "bool"],
)
def test_a_metadata_key_that_is_not_a_folder_name_is_refused(tmp_path, key):
    """A key was a path: a folder outside the export was graded, and its results written outside --out."""
    folder = _export(tmp_path / "export", f"submission_1:\n  :submitters: []\n{key}:\n  :submitters: []\n")
    with pytest.raises(BatchError, match="is not the name of a submission's folder"):
        find_submissions(folder)


@pytest.mark.parametrize(
    "text",
    [
        "submission_1: just text\n",
        "submission_1:\n  :submitters: a string\n",
        "submission_1:\n  :submitters: {name: x}\n",
        "submission_1:\n  :submitters: null\n  submitters: 5\n",
    ],
)
def test_a_malformed_entry_is_flagged_on_its_own_row_and_still_graded(tmp_path, text):
    """One student's broken entry never costs the class its grades (issue 48): it is graded, nameless, with a note."""
    text += "submission_2:\n  :submitters:\n  - :name: Ann\n    :sid: '1'\n"
    folder = _export(tmp_path / "export", text)
    (folder / "submission_2").mkdir(exist_ok=True)
    broken, fine = find_submissions(folder)
    assert broken.sid == "submission_1" and broken.name == "" and any("is not an export's" in n for n in broken.notes)
    assert fine.name == "Ann" and not fine.notes


def test_odd_submitters_and_bytes_are_read_or_refused_with_a_message(tmp_path):
    folder = _export(tmp_path / "export", "submission_1:\n  :submitters:\n  - just a string\n  - null\n  - :name: Ann\n")
    (sub,) = find_submissions(folder)
    assert sub.name == "Ann" and sub.submitters == [{"name": "Ann", "sid": "", "email": ""}]
    bad = tmp_path / "bytes"
    bad.mkdir()
    (bad / "submission_metadata.yml").write_bytes(b"submission_1:\n  :submitters:\n  - :name: \xff\xfe\n")
    with pytest.raises(BatchError, match="is not readable YAML"):
        find_submissions(bad)


def test_control_characters_and_lone_surrogates_in_names_never_reach_a_file_or_the_terminal(tmp_path):
    """An email with "\\x1b[2J" cleared the staff's terminal (the duplicate warning); a name with a lone surrogate
    stopped grade-all half-way through writing gradebook.csv."""
    text = (
        'submission_1:\n  :submitters:\n  - :name: "Bo\\ud800b"\n    :email: "x\\e[2J@x.edu"\n'
        'submission_2:\n  :submitters:\n  - :name: Bob\n    :email: "x\\e[2J@x.edu"\n'
    )
    subs = find_submissions(_export(tmp_path / "export", text, ("submission_1", "submission_2")))
    assert subs[0].name == "Bo\ufffdb" and subs[0].email == "x\ufffd[2J@x.edu"
    (warning,) = check_duplicates(subs)
    assert "\x1b" not in warning and "appears in 2 submissions" in warning
    "".join(s.name + s.email for s in subs).encode("utf-8")  # writable as UTF-8


def test_two_entries_of_one_student_in_a_plain_folder_are_refused_not_merged(tmp_path):
    """alice.py and alice.zip both became 'alice': one grade overwrote the other, silently."""
    (tmp_path / "plain").mkdir()
    for name in ("alice.py", "alice.zip", "bob.py"):
        (tmp_path / "plain" / name).write_text("x = 1\n")
    with pytest.raises(BatchError, match=r"alice.py, alice.zip \(all 'alice'\)"):
        find_submissions(tmp_path / "plain")
    (tmp_path / "plain" / "alice.zip").unlink()
    assert [s.sid for s in find_submissions(tmp_path / "plain")] == ["alice", "bob"]


def test_a_submission_folder_that_is_a_link_is_refused(tmp_path):
    """A tampered export's submission_1 -> /root/private: its files were graded and copied into a worker."""
    private = tmp_path / "private"
    private.mkdir()
    (private / "attention.py").write_text("SECRET = 1\n")
    folder = _export(tmp_path / "export", "submission_1:\n  :submitters: []\n", names=())
    (folder / "submission_1").symlink_to(private, target_is_directory=True)
    with pytest.raises(BatchError, match="submission_1 is a link, not a submission's folder"):
        find_submissions(folder)


def test_marks_that_reorder_text_are_replaced(tmp_path):
    folder = _export(tmp_path / "export", 'submission_1:\n  :submitters:\n  - :name: "Eve\\u202egnp.exe"\n')
    assert find_submissions(folder)[0].name == "Eve\ufffdgnp.exe"


def test_a_folder_the_metadata_does_not_list_is_named_not_skipped_silently(tmp_path):
    folder = _export(tmp_path / "export", "submission_1:\n  :submitters: []\n", names=("submission_1", "submission_2"))
    subs = find_submissions(folder)
    assert [s.sid for s in subs] == ["submission_1"]
    assert unlisted(folder, subs) == [
        "submission_2/ is in the export but not in submission_metadata.yml: not graded (re-download the export if it should be)"
    ]


def test_an_export_one_level_down_is_the_class_and_a_nameless_class_of_one_is_warned(tmp_path):
    """Issue 48: the folder holding the unzipped export was read as a plain folder of one nameless submission."""
    meta = "submission_1:\n  :submitters:\n  - :name: Ada\n    :sid: '1'\n"
    (tmp_path / "holder").mkdir()
    export = _export(tmp_path / "holder" / "export", meta)
    assert class_folder(export) == (export, []), "the export itself: as before"
    folder, notes = class_folder(tmp_path / "holder")
    assert folder == export and notes[0].startswith(f"note: {tmp_path / 'holder'} holds a Gradescope export one level down")
    assert [s.name for s in find_submissions(folder)] == ["Ada"] and one_nameless(find_submissions(folder), folder) == []
    plain = tmp_path / "plain"
    (plain / "alice").mkdir(parents=True)
    assert class_folder(plain) == (plain, [])
    (warning,) = one_nameless(find_submissions(plain), plain)
    assert warning.startswith(f"warning: {plain} makes a class of one submission (alice) with no student's name")
    (plain / "bob.py").write_text("x = 1\n")
    assert one_nameless(find_submissions(plain), plain) == [], "two students: a class"
    _export(tmp_path / "holder" / "export2", meta)
    with pytest.raises(BatchError, match="holds 2 Gradescope exports, one level down: .*export, .*export2"):
        class_folder(tmp_path / "holder")
