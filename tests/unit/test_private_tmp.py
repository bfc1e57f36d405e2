"""The worker's private /tmp hides the host's, except what it needs (a venv of a checkout in /tmp)."""

from autograder.worker.server import paths_to_keep


def test_only_the_outermost_needed_paths_under_masked_folders_are_kept():
    wanted = [
        "/tmp/kit-stage-x",
        "/tmp/ci/clone/.venv",
        "/tmp/ci/clone/.venv/lib/python3.11/site-packages",
        "/usr/lib/python3.11",
        "/root/.pyenv/versions/3.11.7",
        "/tmpfoo/elsewhere",
    ]
    assert paths_to_keep(wanted, ["/tmp", "/var/tmp", "/dev/shm"]) == ["/tmp/kit-stage-x", "/tmp/ci/clone/.venv"]


def test_nothing_is_kept_when_nothing_lies_under_them():
    assert paths_to_keep(["/work/main/.venv", "/usr/lib/python3.11"], ["/tmp"]) == []
