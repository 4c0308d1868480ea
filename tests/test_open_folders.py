"""Which workspace folders the start warns of: any other user may write one (a vault,
the workspace), or rename the workspace away in its parent (writable, not sticky)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from indexer.open_folders import open_folders, warning
from shared.workspace import Workspace


def test_open_folders_and_the_command_said(tmp_path: Path) -> None:
    parent = tmp_path / "shared dir"
    vault = parent / "ws" / "memory" / "languages" / "en" / "vault"
    vault.mkdir(parents=True, mode=0o755)
    space = Workspace(parent / "ws")
    assert open_folders(space) == [] and warning([]) == ""
    os.chmod(parent, 0o777)  # others may rename the workspace away and put theirs there
    os.chmod(vault, 0o773)
    found = open_folders(space)
    assert found == [(vault, "every user"), (parent, "every user")]
    said = warning(found)
    assert f"chmod go-w {shlex.quote(str(vault))} {shlex.quote(str(parent))}`" in said
    os.chmod(parent, 0o1777)  # sticky, as /tmp: only the owner renames what is in it
    assert open_folders(space) == [(vault, "every user")]
