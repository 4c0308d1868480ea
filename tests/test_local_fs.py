"""Which file systems grep takes the watcher's word on: local ones, by mount type."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from indexer.index.local_fs import LOCAL_TYPES, LocalFolders, mount_type

MOUNTINFO = """\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
30 22 0:25 / /home rw shared:2 - xfs /dev/sda2 rw
41 30 0:40 / /home/me/shared\\040notes rw - nfs4 server:/notes rw,vers=4.2
42 22 0:41 / /mnt/box rw - fuse.sshfs me@box:/ rw
43 22 0:42 / /mnt/vm rw - virtiofs share rw
44 22 0:43 / /tmp rw shared:5 - tmpfs tmpfs rw
"""


@pytest.mark.parametrize(
    ("path", "fstype"),
    [
        ("/", "ext4"),
        ("/var/lib/x", "ext4"),
        ("/home/me/notes", "xfs"),
        ("/home/me/shared notes/vault", "nfs4"),  # an escaped space in the mount point
        ("/home/me/shared notesX", "xfs"),  # a prefix of the name is not inside it
        ("/mnt/box/memory", "fuse.sshfs"),
        ("/mnt/vm", "virtiofs"),
        ("/tmp/ws/memory/languages/en/vault", "tmpfs"),
    ],
)
def test_the_longest_mount_point_holding_a_path_gives_its_type(path: str, fstype: str) -> None:
    assert mount_type(MOUNTINFO, path) == fstype


def test_only_local_types_are_trusted() -> None:
    assert {"ext4", "xfs", "btrfs", "tmpfs", "overlay"} <= LOCAL_TYPES
    assert not {"nfs", "nfs4", "cifs", "smb3", "fuse.sshfs", "virtiofs", "9p"} & LOCAL_TYPES
    assert mount_type("garbage\n\n1 2 3", "/x") is None


def test_a_folder_on_a_network_mount_is_not_local(tmp_path: Path) -> None:
    info = tmp_path / "mountinfo"
    info.write_text(MOUNTINFO.replace("/home/me/shared\\040notes", str(tmp_path)))
    assert not LocalFolders(info).is_local(tmp_path / "vault")
    assert LocalFolders(tmp_path / "missing").is_local(tmp_path) is False


@pytest.mark.skipif(sys.platform != "linux", reason="/proc/self/mountinfo")
def test_this_machines_temp_folder_is_local(tmp_path: Path) -> None:
    assert LocalFolders().is_local(tmp_path)
