"""Writes that keep what they must: permissions and owner, other programs' edits, and
plain words when the system refuses.

The lost-update test runs ``bench/lost_update.py`` (the same experiment the benchmark
reports) for a short time: an editor process saving every 2 ms, in place and by rename,
while this process reads and writes with ``if_match``; no editor save may be lost.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.permissions import immutable, need_immutable
from helpers.snapshots import snapshot

from indexer.core import Core
from indexer.settings import Settings
from indexer.vault import fsops, renames
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from indexer.web.mcp import create_server
from shared.errors import ConflictError
from shared.workspace import Workspace

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def vault(tmp_path: Path) -> Vault:
    return Vault(Sandbox(Workspace(tmp_path / "ws")), max_file_bytes=1 << 20)


def note_path(tmp_path: Path, rel: str) -> Path:
    return tmp_path / "ws/memory/languages/en/vault" / rel


def test_a_write_keeps_the_mode_of_the_note(vault: Vault, tmp_path: Path) -> None:
    vault.write("en", "private.md", "# private\n")
    path = note_path(tmp_path, "private.md")
    path.chmod(0o600)
    vault.write("en", "private.md", "# private\nagain\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    path.chmod(0o640)
    etag = vault.read("en", "private.md")["etag"]
    vault.write("en", "private.md", "# private\nthird\n", if_match=etag)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_a_private_notes_new_copy_is_never_open_to_others(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy that replaces a 0600 note was made 0644 (less the umask) and only then
    narrowed, before its text was written: another user who opened it in that moment
    (permissions are checked at open) read the note's new text through that descriptor
    later. Made with the note's own mode (the descriptors of the stdlib's ``os.open``
    that create a file are looked at; nothing of ours is replaced)."""
    vault.write("en", "private.md", "# private\n")
    note_path(tmp_path, "private.md").chmod(0o600)
    made: list[int] = []
    real_open = os.open

    def recording_open(path, flags, mode=0o777, *, dir_fd=None):  # type: ignore[no-untyped-def]
        if flags & os.O_CREAT:
            made.append(mode)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", recording_open)
    vault.write("en", "private.md", "# private\nsecret words\n")
    assert made and all(mode & 0o077 == 0 for mode in made), [oct(m) for m in made]
    assert stat.S_IMODE(note_path(tmp_path, "private.md").stat().st_mode) == 0o600


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another owner")
def test_a_write_keeps_the_owner_of_the_note(vault: Vault, tmp_path: Path) -> None:
    vault.write("en", "theirs.md", "# theirs\n")
    path = note_path(tmp_path, "theirs.md")
    os.chown(path, 4242, 4343)
    vault.write("en", "theirs.md", "# theirs\nedited\n")
    info = path.stat()
    assert (info.st_uid, info.st_gid) == (4242, 4343)


def test_an_editor_save_landing_during_the_swap_back_is_the_one_kept(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two editor saves race one write: the first lands between the check and the swap
    (the write swaps it back and refuses), the second lands before that swap back. The
    note must end as the newest save, never the older one."""
    vault.write("en", "n.md", "# n\n")
    etag = vault.read("en", "n.md")["etag"]
    path = note_path(tmp_path, "n.md")
    first, newest = path.read_text() + "ext 0\n", path.read_text() + "ext 0\next 1\n"
    exchange, calls = renames.exchange, []

    def editor_save(text: str) -> None:
        swap = path.with_name(".n.md.swp")
        swap.write_text(text)
        os.replace(swap, path)

    def racing_exchange(dir_fd: int, a: str, b: str) -> bool:
        if not calls:
            editor_save(first)  # after the write's last check, before its swap
        done = exchange(dir_fd, a, b)
        calls.append(a)
        if len(calls) == 1:
            editor_save(newest)  # after the swap, before the swap back
        return done

    monkeypatch.setattr(renames, "exchange", racing_exchange)
    with pytest.raises(ConflictError):
        vault.write("en", "n.md", "# mine\n", if_match=etag)
    assert path.read_text() == newest
    assert sorted(p.name for p in path.parent.iterdir()) == ["n.md"]


def _lease_breaking(inode: int) -> bool:
    """Whether /proc/locks shows a lease on ``inode`` that an open is waiting on."""
    lines = Path("/proc/locks").read_text().splitlines()
    return any("BREAKING" in line and f":{inode} " in line for line in lines)


def test_an_editor_opening_our_file_before_the_swap_back_reads_the_note_again(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editor save lands between the write's last check and its swap, so the write
    swaps back and refuses; meanwhile the editor opens the note for its next save while
    our file is in place. It must read the note as it is (its own save), never ours:
    saving on top of ours would lose the line it had just saved."""
    vault.write("en", "n.md", "# n\n")
    etag = vault.read("en", "n.md")["etag"]
    path = note_path(tmp_path, "n.md")
    saved = path.read_text() + "ext 0\n"
    exchange, calls, seen = renames.exchange, [], []

    def racing_exchange(dir_fd: int, a: str, b: str) -> bool:
        if not calls:
            swap = path.with_name(".n.md.swp")
            swap.write_text(saved)
            os.replace(swap, path)  # after the write's last check, before its swap
        done = exchange(dir_fd, a, b)
        calls.append(a)
        if len(calls) == 1:  # ours is in place: the editor opens the note now
            inode = path.stat().st_ino
            reader = threading.Thread(target=lambda: seen.append(path.read_text()))
            reader.start()
            deadline = time.monotonic() + 5
            while not _lease_breaking(inode) and reader.is_alive():
                assert time.monotonic() < deadline, "the editor's open never waited"
                time.sleep(0.001)
            readers.append(reader)
        return done

    readers: list[threading.Thread] = []
    monkeypatch.setattr(renames, "exchange", racing_exchange)
    with pytest.raises(ConflictError):
        vault.write("en", "n.md", "# mine\n", if_match=etag)
    readers[0].join(5)
    assert seen == [saved]
    assert path.read_text() == saved
    assert sorted(p.name for p in path.parent.iterdir()) == ["n.md"]


def test_an_open_waits_out_a_lease_held_for_a_moment(vault: Vault, tmp_path: Path) -> None:
    """A file under another's write lease (ours mid-swap, a file server's) is read once
    the lease is let go, not reported as an error or as gone."""
    vault.write("en", "n.md", "# n\n")
    fd = os.open(note_path(tmp_path, "n.md"), os.O_RDONLY)
    try:
        assert renames.write_lease(fd)
        threading.Timer(0.05, renames.release_lease, (fd,)).start()
        started = time.monotonic()
        assert vault.read("en", "n.md")["content"].endswith("# n\n")
        assert time.monotonic() - started >= 0.04
    finally:
        os.close(fd)


def test_a_lease_kept_on_a_file_is_a_conflict_in_the_end(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault.write("en", "n.md", "# n\n")
    monkeypatch.setattr(fsops, "LEASE_WAIT", 0.05)
    fd = os.open(note_path(tmp_path, "n.md"), os.O_RDONLY)
    try:
        assert renames.write_lease(fd)
        with pytest.raises(ConflictError, match="lease"):
            vault.read("en", "n.md")
    finally:
        renames.release_lease(fd)
        os.close(fd)
    assert vault.read("en", "n.md")["content"].endswith("# n\n")


def test_if_match_loses_no_save_of_an_editor() -> None:
    args = ["--seconds", "1.5", "--period-ms", "2", "--json"]
    done = subprocess.run(
        [sys.executable, str(REPO / "bench/lost_update.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    for result in json.loads(done.stdout):
        assert result["saves"] > 50 and result["writes"] > 0, result
        # One save may be lost in the window ``atomic.replace_at`` documents (an editor
        # whose open resolved the name before our swap reaches the lease check after its
        # release: no lease or compare-and-swap covers it), about one in 10,000 saves on a
        # loaded machine (one in 534 seen once, in a full run beside two others); without
        # ``if_match`` the same run loses hundreds (653 of 654 saves in place, 425 of 646
        # renamed).
        assert result["lost"] <= 1, result


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    ws = Workspace(tmp_path / "ws")
    settings = Settings(workspace=ws, max_file_bytes=1 << 20)
    vault = Vault(Sandbox(ws), max_file_bytes=settings.max_file_bytes)
    async with Client(create_server(Core(settings, vault))) as c:
        yield c


async def test_a_refusal_by_the_system_says_so_and_changes_nothing(
    client: Client, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await client.call_tool("write", {"lang": "en", "path": "locked/a.md", "content": "# a\n"})
    folder = note_path(tmp_path, "locked")
    need_immutable(folder)
    try:
        before = snapshot(tmp_path)
        calls = [
            ("write", {"path": "locked/a.md", "content": "# b\n"}),
            ("write", {"path": "locked/new.md", "content": "# new\n"}),
            ("delete", {"path": "locked/a.md"}),
        ]
        for tool, args in calls:
            with pytest.raises(ToolError) as info:
                await client.call_tool(tool, {"lang": "en", **args})
            text = str(info.value)
            assert text.startswith("forbidden_path: "), text
            assert "permission denied" in text and "nothing was changed" in text
            assert str(tmp_path) not in text
        assert snapshot(tmp_path) == before
        said = caplog.text  # the log says which call (it said "tool write: ..." only)
        assert "tool write en/locked/new.md: " in said and "tool delete en/locked/a.md: " in said
    finally:
        immutable(folder, False)


def test_a_folder_made_read_only_mid_write_never_makes_a_done_write_an_error(
    vault: Vault, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The folder turned read-only just after the swap: the old text could not be
    removed, and the write that had landed was answered "nothing was changed". Just
    before the swap: refused, and the temp file left is said in the log."""
    vault.write("en", "d/n.md", "# n\n")
    folder, path = note_path(tmp_path, "d"), note_path(tmp_path, "d/n.md")
    exchange = renames.exchange
    need_immutable(folder)
    immutable(folder, False)

    def locked_after(dir_fd: int, a: str, b: str) -> bool:
        done = exchange(dir_fd, a, b)
        immutable(folder, True)
        return done

    def locked_before(dir_fd: int, a: str, b: str) -> bool:
        immutable(folder, True)
        return exchange(dir_fd, a, b)

    try:
        monkeypatch.setattr(renames, "exchange", locked_after)
        etag = vault.read("en", "d/n.md")["etag"]
        vault.write("en", "d/n.md", "# n\nmine\n", if_match=etag)
        assert path.read_text().endswith("\n# n\nmine\n")
        immutable(folder, False)
        monkeypatch.setattr(renames, "exchange", locked_before)
        etag = vault.read("en", "d/n.md")["etag"]
        with pytest.raises(PermissionError):  # (forbidden_path at the tool boundary)
            vault.write("en", "d/n.md", "# n\nrefused\n", if_match=etag)
        assert path.read_text().endswith("\n# n\nmine\n")
    finally:
        immutable(folder, False)
    left = sorted(p.name for p in folder.iterdir() if p.name != "n.md")
    assert len(left) == 2 and all(name.startswith(".n.md.tmp.") for name in left)
    said = [r.getMessage() for r in caplog.records if "could not remove the temp file" in r.message]
    assert [name in " ".join(said) for name in left] == [True, True]
