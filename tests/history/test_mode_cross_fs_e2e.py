"""The undo of a move whose two places are on two file systems now (a disk mounted in
the vault since the move: no rename goes between them, ``undo_moves.move_back`` gives
up) writes the note back at its old place with the mode its row kept, as a restore
does: a 0600 note comes back 0600 there, not 0644 less the umask.

Two file systems in the vault need a mount: the server runs in a mount namespace of
its own (``unshare --mount``, root), a tmpfs is mounted there over the note's old
folder after the move, and the test looks at that folder through the server's root
(``/proc/<pid>/root``); the mount goes with the server's process."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from helpers.history import entry_reason, vault_file
from helpers.indexer_process import start_indexer
from test_mode_kept_e2e import NO_SUMMARIES, call, private_note

pytestmark = pytest.mark.e2e

NAMESPACE = ["unshare", "--mount", "--propagation", "private"]


def private_mounts() -> bool:
    """Whether this process may start a program in a mount namespace of its own."""
    if os.geteuid() != 0 or not (shutil.which("unshare") and shutil.which("nsenter")):
        return False
    done = subprocess.run([*NAMESPACE, "true"], capture_output=True, check=False)
    return done.returncode == 0


@pytest.mark.skipif(not private_mounts(), reason="needs root and mount namespaces")
async def test_a_move_undone_across_two_file_systems_brings_the_note_back_private(
    tmp_path: Path,
) -> None:
    lang = "xf"
    server = start_indexer(tmp_path / "ws", env=NO_SUMMARIES, prefix=NAMESPACE)
    ws, pid = server.workspace, server.process.pid
    try:
        async with server.client() as c:
            written = (await private_note(c, ws, lang, "home/a.md")).read_bytes()
            reason = entry_reason("X1", "move")
            await call(c, "move", lang=lang, path="home/a.md", new_path="away/a.md", reason=reason)
            home = vault_file(ws, lang, "home")
            home.mkdir(exist_ok=True)  # (an empty folder the disk is mounted on)
            subprocess.run(
                ["nsenter", "--target", str(pid), "--mount", "mount", "-t", "tmpfs", "t", home],
                check=True,
            )
            seen_home = Path(f"/proc/{pid}/root{home}")
            assert seen_home.stat().st_dev != vault_file(ws, lang, "away").stat().st_dev
            undone = await call(c, "undo", lang=lang, entry_id="X1")
            assert [r["path"] for r in undone["files"]] == ["away/a.md", "home/a.md"], undone
            back = seen_home / "a.md"
            assert back.read_bytes() == written
            assert stat.S_IMODE(back.stat().st_mode) == 0o600
            assert not vault_file(ws, lang, "away/a.md").exists()
            assert not (home / "a.md").exists()  # (written on the mounted disk, not below it)
    finally:
        server.stop()
