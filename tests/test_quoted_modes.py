"""USER.md's and a folder summary's mode beside quoted files of another group
(``indexer.jobs.group_bits``): a 0640 day file of group A left USER.md 0640 under its own
group B, which then let every member of B read what only A could; a folder's summary of
0640 notes of A likewise. Real files of two groups: chown needs root."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexer.jobs.quoted_modes import quoted_mode
from indexer.jobs.summary_modes import summary_mode
from shared.workspace import OVERVIEW_FILE

OTHER_GROUP = 54_321  # (any number: root may give a file a group with no name)
DAY = "events/2026/12/07.md"

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0, reason="a file of another group than the process's needs root (chown)"
)


@pytest.fixture
def root(tmp_path: Path) -> Iterator[int]:
    (tmp_path / "events/2026/12").mkdir(parents=True)
    (tmp_path / DAY).write_text("- 10:00 a thing\n")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        yield fd
    finally:
        os.close(fd)


def _set(root: int, rel: str, mode: int, gid: int) -> None:
    os.chown(rel, -1, gid, dir_fd=root)
    os.chmod(rel, mode, dir_fd=root)


def test_a_group_readable_day_file_of_another_group_narrows_user_md_to_owner_only(
    root: int,
) -> None:
    _set(root, DAY, 0o640, OTHER_GROUP)
    os.close(os.open("USER.md", os.O_WRONLY | os.O_CREAT, 0o640, dir_fd=root))
    _set(root, "USER.md", 0o640, os.getegid())
    assert quoted_mode(root, [DAY], "USER.md") == 0o600


def test_a_new_user_md_of_the_process_group_is_owner_only_too(root: int) -> None:
    _set(root, DAY, 0o640, OTHER_GROUP)
    assert quoted_mode(root, [DAY], "USER.md") == 0o600


def test_a_folder_of_another_group_counts_by_its_bits_for_others(root: int) -> None:
    _set(root, "events", 0o750, OTHER_GROUP)  # (the day file 0644: its folder narrows)
    assert quoted_mode(root, [DAY], "USER.md") == 0o600


@pytest.mark.parametrize(
    ("mode", "gid", "wanted"),
    [
        (0o640, None, 0o640),  # the output's own group: its group may read both
        (0o644, OTHER_GROUP, None),  # anyone may read the day file: nothing narrows
        (0o600, OTHER_GROUP, 0o600),
    ],
)
def test_the_same_group_or_a_file_open_to_all_is_as_before(
    root: int, mode: int, gid: int | None, wanted: int | None
) -> None:
    _set(root, DAY, mode, os.getegid() if gid is None else gid)
    assert quoted_mode(root, [DAY], "USER.md") == wanted


@pytest.mark.parametrize(("gid", "wanted"), [(OTHER_GROUP, 0o600), (None, 0o640)])
def test_a_folder_summary_of_notes_of_another_group_is_owner_only(
    root: int, gid: int | None, wanted: int
) -> None:
    folder = os.open("events/2026/12", os.O_RDONLY | os.O_DIRECTORY, dir_fd=root)
    try:
        _set(folder, "07.md", 0o640, os.getegid() if gid is None else gid)
        os.close(os.open(OVERVIEW_FILE, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=folder))
        assert summary_mode(folder) == wanted
    finally:
        os.close(folder)
