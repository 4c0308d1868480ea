"""History end to end: a real ``indexer serve``, real MCP clients, real files.

One server for the module (each test has a lang of its own); the tests that restart or
break a server start their own.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.history import (
    check_history_consistent,
    edit_outside,
    entry_reason,
    history_store,
    history_versions,
    vault_file,
    wait_for_version,
)
from helpers.indexer_process import RunningIndexer, spawn_indexer, start_indexer, wait_for
from helpers.snapshots import snapshot

from indexer.cli import main as cli_main
from indexer.sqlite_lib import sqlite3
from indexer.vault.fsops import etag_of
from indexer.vault.history import schema
from indexer.vault.history.store import HistoryStore

# Folder summaries are versions too; these tests count the notes' versions only.
NO_SUMMARIES = {"INDEXER_SUMMARIES": "0"}

pytestmark = pytest.mark.e2e

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
CLIENTS, APPENDS = 8, 100


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    """One server for the module, without folder summaries: the background pass could
    write a summary between a test's two looks at the vault."""
    running = start_indexer(tmp_path_factory.mktemp("history") / "ws", env=NO_SUMMARIES)
    try:
        yield running
    finally:
        running.stop()


async def call(client: Client, tool: str, **args: object) -> dict:
    result = await client.call_tool(tool, args)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def contents(root: Path) -> dict[str, str]:
    """Path -> sha256 of every file below ``root`` (what undo must give back exactly)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


async def merge_as_the_writer(client: Client, lang: str, entry_id: str) -> None:
    """The tool calls of a Memory Writer merge for one knowledge entry, each with the
    entry's reason: merge into a note, create a note with an image, log the event."""
    reason = entry_reason(entry_id, "Past tense of go")
    note = await call(client, "read", lang=lang, path="items/go.md")
    merged = note["content"] + "\n## Participle\n\ngone\n"
    await call(
        client, "write", lang=lang, path="items/go.md", content=merged,
        if_match=note["etag"], reason=reason,
    )  # fmt: skip
    await call(
        client, "write", lang=lang, path="items/gone.md",
        content="# Gone\n\n![g](gone.md.assets/g.png)\n", if_match="", reason=reason,
    )  # fmt: skip
    await call(
        client, "write", lang=lang, path="items/gone.md.assets/g.png",
        content=base64.b64encode(PNG).decode(), encoding="base64", reason=reason,
    )  # fmt: skip
    await call(
        client, "append", lang=lang, path="events/2026/11/29.md",
        content="\n## Event\n\nlearned: gone\n", reason=reason,
    )  # fmt: skip


async def test_a_writer_merge_is_undone_to_the_exact_bytes(server: RunningIndexer) -> None:
    lang, root = "hu", vault_file(server.workspace, "hu", "")
    async with server.client() as c:
        await call(c, "write", lang=lang, path="items/go.md", content="# Go\n\ngo, went\n")
        await call(c, "append", lang=lang, path="events/2026/11/29.md", content="# 29\n")
        before = contents(root)
        await merge_as_the_writer(c, lang, "e1")
        assert contents(root) != before
        plan = await call(c, "undo", lang=lang, entry_id="e1", dry_run=True)
        assert [f["path"] for f in plan["files"]] == [
            "events/2026/11/29.md",
            "items/go.md",
            "items/gone.md",
            "items/gone.md.assets/g.png",
        ]
        undone = await call(c, "undo", lang=lang, entry_id="e1")
        assert [f["deleted"] for f in undone["files"]] == [False, False, True, True]
    assert contents(root) == before
    rows = history_versions(server.workspace, lang, "items/go.md")
    assert (rows[0]["op"], rows[0]["reason"]) == ("restore", "undo entry:e1")


async def test_an_edit_after_the_merge_makes_undo_refuse(server: RunningIndexer) -> None:
    lang, root = "hv", vault_file(server.workspace, "hv", "")
    async with server.client() as c:
        await call(c, "write", lang=lang, path="items/go.md", content="# Go\n")
        await merge_as_the_writer(c, lang, "e2")
        edit_outside(server.workspace, lang, "items/gone.md", "# Gone\n\nmine now\n", wait=False)
        for _ in range(2):  # before the watcher records the edit, and after
            state = snapshot(root)
            with pytest.raises(ToolError, match=r"^conflict: entry e2 cannot be undone"):
                await c.call_tool("undo", {"lang": lang, "entry_id": "e2"})
            assert snapshot(root) == state
            wait_for_version(
                server.workspace, lang, "items/gone.md", lambda v: v["actor"] == "external"
            )


async def test_a_deleted_note_comes_back_with_restore(server: RunningIndexer) -> None:
    lang = "hw"
    async with server.client() as c:
        await call(
            c, "write", lang=lang, path="items/a.md", content="# A\n\n![p](a.md.assets/p.png)\n"
        )
        png = base64.b64encode(PNG).decode()
        await call(
            c, "write", lang=lang, path="items/a.md.assets/p.png", content=png, encoding="base64"
        )
        note = vault_file(server.workspace, lang, "items/a.md").read_bytes()
        await call(c, "delete", lang=lang, path="items/a.md", reason="clean up")
        assert not vault_file(server.workspace, lang, "items/a.md").exists()
        listed = await call(c, "history", lang=lang, path="items/a.md")
        assert [(v["version"], v["op"]) for v in listed["versions"]] == [
            (2, "delete"),
            (1, "write"),
        ]
        restored = await call(c, "restore", lang=lang, path="items/a.md", version=1, if_match="")
        assert restored["version"] == 3 and restored["etag"] == etag_of(note)
        found = await call(c, "search", lang=lang, query="A")
        assert [r["path"] for r in found["results"]] == ["items/a.md"]
    assert vault_file(server.workspace, lang, "items/a.md").read_bytes() == note
    assert vault_file(server.workspace, lang, "items/a.md.assets/p.png").read_bytes() == PNG


async def test_concurrent_appends_leave_one_version_each_in_order(server: RunningIndexer) -> None:
    lang, path = "hx", "events/2026/11/29.md"

    async def client(k: int) -> None:
        async with server.client() as c:
            for i in range(APPENDS):
                await c.call_tool(
                    "append", {"lang": lang, "path": path, "content": f"- c{k} n{i:03}\n"}
                )

    await asyncio.gather(*(client(k) for k in range(CLIENTS)))
    text = vault_file(server.workspace, lang, path).read_bytes()
    with history_store(server.workspace) as store:
        rows = store.versions(lang, path, 10_000)[::-1]
        assert len(rows) == CLIENTS * APPENDS and {r.op for r in rows} == {"append"}
        assert [r.version for r in rows] == list(range(1, CLIENTS * APPENDS + 1))
        for older, newer in itertools.pairwise(rows):
            assert newer.prev_etag == older.etag
        ends = [row.size or 0 for row in rows]
        pieces = [text[start:end] for start, end in zip([0, *ends], ends, strict=False)]
        for row in [*rows[:: CLIENTS * APPENDS // 16], rows[-1]]:
            assert store.content(row) == text[: row.size]
    assert sorted(pieces) == sorted(
        f"- c{k} n{i:03}\n".encode() for k in range(CLIENTS) for i in range(APPENDS)
    )
    for k in range(CLIENTS):
        mine = [p for p in pieces if p.startswith(f"- c{k} ".encode())]
        assert mine == sorted(mine)  # each client's appends in the order it made them


async def test_the_watcher_records_edits_once_and_never_a_tool_write_twice(
    server: RunningIndexer,
) -> None:
    lang, ws = "hy", server.workspace
    async with server.client() as c:
        await call(c, "write", lang=lang, path="a.md", content="# A\n", reason="by a tool")
        edit_outside(ws, lang, "b.md", "# B, made in an editor\n")  # the watcher saw a.md too
        assert [(v["version"], v["actor"]) for v in history_versions(ws, lang, "a.md")] == [
            (1, "tool")
        ]
        edit_outside(ws, lang, "a.md", "# A, edited in an editor\n")
        vault_file(ws, lang, "b.md").unlink()
        wait_for_version(ws, lang, "b.md", lambda v: v["op"] == "delete")
        diff = await call(c, "diff", lang=lang, path="a.md", from_version=1)
        assert "+# A, edited in an editor" in diff["diff"]
    assert [(v["op"], v["actor"]) for v in history_versions(ws, lang, "b.md")] == [
        ("delete", "external"),
        ("baseline", "external"),
    ]


async def test_a_move_onto_a_note_deleted_outside_comes_after_that_deletion(
    server: RunningIndexer,
) -> None:
    """Another program deletes a note, and a tool moves another note to its path after
    the watcher heard of the deletion or before (within its debounce): the target's
    history shows the deletion before the move's arrival, and undo of the move brings
    back no text of the deleted note."""
    lang, ws = "hv", server.workspace
    names = ("heard.md", "unheard.md")
    async with server.client() as c:
        for name in (*names, *(f"from/{name}" for name in names)):
            await call(c, "write", lang=lang, path=name, content=f"# {name}\n")
        for number, name in enumerate(names):
            vault_file(ws, lang, name).unlink()
            if name == "heard.md":
                wait_for_version(ws, lang, name, lambda v: v["op"] == "delete")
            reason = entry_reason(f"E{number}", "move")
            await call(c, "move", lang=lang, path=f"from/{name}", new_path=name, reason=reason)
        edit_outside(ws, lang, "later.md", "# later\n")  # (the watcher's pass came since)
        for number, name in enumerate(names):
            listed = await call(c, "history", lang=lang, path=name)
            ops = [(v["op"], v["actor"]) for v in listed["versions"]]
            assert ops == [("move", "tool"), ("delete", "external"), ("write", "tool")], name
            await call(c, "undo", lang=lang, entry_id=f"E{number}")
            assert not vault_file(ws, lang, name).exists()
            assert vault_file(ws, lang, f"from/{name}").read_text().endswith(f"# from/{name}\n")


def tree(root: Path) -> dict[str, str]:
    """Every file below ``root`` with its sha256, and every folder (""): what an undo
    must give back, folders it made gone too."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else ""
        for p in sorted(root.rglob("*"))
    }


async def test_an_undone_entry_leaves_no_folder_it_made(server: RunningIndexer) -> None:
    """An entry moves a note into a new folder, then its image to a new name (the note's
    link follows: the note's newest version is a write, not a move), and writes a note in
    a folder of its own: the undo put every file back and left the two new folders,
    empty."""
    lang, ws = "ht", server.workspace
    root = vault_file(ws, lang, "")
    note, moved = "ملاحظات/笔记 一.md", "新 フォルダ/노트 ✓.md"
    async with server.client() as c:
        await call(
            c, "write", lang=lang, path=note, content="# 一\n\n![](笔记%20一.md.assets/p.png)\n"
        )
        await call(
            c, "write", lang=lang, path=f"{note}.assets/p.png",
            content=base64.b64encode(PNG).decode(), encoding="base64",
        )  # fmt: skip
        await call(
            c, "write", lang=lang, path="ссылки.md", content="# s\n\n[n](<ملاحظات/笔记 一.md>)\n"
        )
        before = tree(root)
        reason = entry_reason("F1", "reorganize")
        await call(c, "move", lang=lang, path=note, new_path=moved, reason=reason)
        image = await call(
            c, "move", lang=lang, path=f"{moved}.assets/p.png",
            new_path=f"{moved}.assets/תמונה 1.png", reason=reason,
        )  # fmt: skip
        assert moved in image["relinked"]
        await call(c, "write", lang=lang, path="नया/गहरा/टिप्पणी.md", content="# n\n", reason=reason)
        await call(c, "undo", lang=lang, entry_id="F1")
    assert tree(root) == before


async def test_a_note_moved_onto_a_folder_is_a_conflict_through_mcp_and_rest(
    server: RunningIndexer,
) -> None:
    """It was refused as "only .md notes ... are writable" (of the folder's name),
    not as the conflict a note moved onto a note is; nothing on disk changes."""
    lang = "hq"
    root = vault_file(server.workspace, lang, "")
    async with server.client() as c:
        await call(c, "write", lang=lang, path="a.md", content="# A\n")
        await call(c, "write", lang=lang, path="archive/b.md", content="# B\n")
        state = snapshot(root)
        for new_path in ("archive", "archive/"):
            with pytest.raises(ToolError, match=r"^conflict: archive already exists \(a folder\)"):
                await c.call_tool("move", {"lang": lang, "path": "a.md", "new_path": new_path})
    with httpx2.Client(base_url=server.url.removesuffix("/mcp") + "/api/v1") as http:
        answer = http.post(f"/{lang}/move", json={"path": "a.md", "new_path": "archive"})
    assert answer.status_code == 412
    assert answer.json()["error"]["code"] == "conflict"
    assert "archive/a.md" in answer.json()["error"]["message"]  # where it could go
    assert snapshot(root) == state


def test_indexer_history_prints_the_versions(server: RunningIndexer) -> None:
    lang = "hz"
    with httpx2.Client(base_url=server.url.removesuffix("/mcp") + "/api/v1") as http:
        md = {"Content-Type": "text/markdown"}
        http.put(f"/{lang}/notes/a.md", content=b"# one\n", headers=md, params={"reason": "first"})
        http.put(f"/{lang}/notes/a.md", content=b"# two\n", headers=md)
    run = [sys.executable, "-m", "indexer", "history", "--workspace", str(server.workspace)]
    listed = subprocess.run([*run, "--lang", lang, "./a.md"], capture_output=True, text=True)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0] == f"a.md (vault {lang}): 2 versions, newest first"
    assert lines[1].split()[0:3] == ["2", lines[1].split()[1], "write"] and lines[2].endswith(
        "first"
    )
    shown = subprocess.run([*run, "--lang", lang, "a.md", "--show", "1"], capture_output=True)
    assert shown.stdout.endswith(b"# one\n")
    missing = subprocess.run([*run, "--lang", lang, "b.md"], capture_output=True, text=True)
    assert missing.returncode == 1 and missing.stderr.startswith("indexer history: not_found:")
    # as the history tool says them: a folder, a link, a lang with no vault
    (server.workspace / "memory/languages" / lang / "vault/sub").mkdir()
    big = server.workspace / "memory/languages" / lang / "vault/big.md"
    big.write_bytes(b"# big\n" + b"x" * (5 << 20))  # past the size limit: never a version
    said = subprocess.run([*run, "--lang", lang, "big.md"], capture_output=True, text=True)
    assert said.returncode == 0
    assert said.stdout == f"big.md (vault {lang}): no version recorded yet\n"
    (server.workspace / "memory/languages" / lang / "vault/link").symlink_to("/etc")
    for args, code, status in (
        (["--lang", lang, "sub"], "invalid_argument", 2),
        (["--lang", lang, "sub", "--json"], "invalid_argument", 2),
        (["--lang", lang, "sub/"], "forbidden_path", 2),  # (bad usage: a path typed)
        (["--lang", lang, "link/ssl"], "forbidden_path", 2),  # (a link is not followed)
        (["--lang", "xx", "a.md"], "not_found", 1),
    ):
        said = subprocess.run([*run, *args], capture_output=True, text=True)
        assert said.returncode == status, said
        assert said.stderr.startswith(f"indexer history: {code}:"), said


def test_indexer_history_before_any_server_served_answers_as_with_no_version(
    workspace: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No history database yet (no server has served the workspace): a file that is
    there has no version recorded yet, as the tool answers, and one that is not there
    is not_found; nothing is created by asking."""
    vault = workspace / "memory/languages/en/vault"
    vault.mkdir(parents=True)
    (vault / "a.md").write_text("# a\n")
    ask = ["history", "--workspace", str(workspace), "--lang", "en"]
    assert cli_main([*ask, "a.md"]) == 0
    assert capsys.readouterr().out == "a.md (vault en): no version recorded yet\n"
    assert cli_main([*ask, "a.md", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"path": "a.md", "versions": []}
    assert cli_main([*ask, "a.md", "--show", "1"]) == 1
    no_version = "indexer history: not_found: a.md (vault en) has no version 1\n"
    assert capsys.readouterr().err == no_version
    assert cli_main([*ask, "b.md"]) == 1
    assert capsys.readouterr().err.startswith("indexer history: not_found:")
    assert cli_main([*ask, "b.md", "--show", "1"]) == 1
    assert capsys.readouterr().err.startswith("indexer history: not_found:")
    assert not (workspace / ".indexer").exists()


def test_indexer_history_on_a_terminal_shows_escape_sequences_never_obeys_them(
    workspace: Path,
) -> None:
    """``history --show`` and ``search`` wrote a note's bytes to the terminal (a window
    retitled, the screen cleared); a pipe still gets the exact bytes."""
    import os
    import pty

    from indexer.vault.sandbox import Sandbox
    from indexer.vault.vault import Vault
    from shared.workspace import Workspace

    store = HistoryStore(Workspace(workspace).history_dir, etag_of)
    store.open()
    try:
        vault = Vault(Sandbox(Workspace(workspace)), max_file_bytes=1 << 20, history=store)
        text = "# Esc\n\nhello \x1b]0;PWNED\x07\x1b[2J world\n"
        vault.write("en", "esc.md", text)
    finally:
        store.close()
    ask = [sys.executable, "-m", "indexer", "history", "--workspace", str(workspace)]
    show = [*ask, "--lang", "en", "esc.md", "--show", "1"]
    search = [sys.executable, "-m", "indexer", "search", "--workspace", str(workspace)]
    for command in (show, [*search, "--lang", "en", "hello"]):
        leader, follower = pty.openpty()
        try:
            done = subprocess.run(command, stdout=follower, timeout=60)
            os.close(follower)
            shown = b""
            with contextlib.suppress(OSError):  # (EIO once the writer is gone)
                while chunk := os.read(leader, 65536):
                    shown += chunk
        finally:
            os.close(leader)
        assert done.returncode == 0
        assert b"\x1b" not in shown and b"\x07" not in shown, shown
        assert b"\\x1b]0;PWNED\\x07\\x1b[2J" in shown, shown  # spelled out
    piped = subprocess.run(show, capture_output=True, timeout=60)
    assert piped.stdout.endswith(text.encode())


# -- own servers ---------------------------------------------------------------------------


def test_history_survives_a_deleted_index_and_sees_edits_made_while_stopped(
    workspace: Path,
) -> None:
    """An index built anew beside a history (deleted, or an upgrade's newer schema): a
    note made while stopped got no version (an outside overwrite then lost its text) and
    one deleted while stopped stayed alive in history. What changed since history last
    recorded is what was made while no indexer ran; a note older than that, first seen
    now, still gets its version at its first change."""
    vault_file(workspace, "en", "old.md").parent.mkdir(parents=True)
    vault_file(workspace, "en", "old.md").write_text("# there before any indexer\n")
    first = start_indexer(workspace, env=NO_SUMMARIES)
    with httpx2.Client(base_url=first.url.removesuffix("/mcp") + "/api/v1") as http:
        for name in ("a.md", "gone.md"):
            http.put(
                f"/en/notes/{name}", content=b"# A\n", headers={"Content-Type": "text/markdown"}
            )
    first.stop()
    (workspace / ".indexer" / "index.sqlite").unlink()
    vault_file(workspace, "en", "a.md").write_text("# A, edited while stopped\n")
    vault_file(workspace, "en", "found.md").write_text("# found: made while stopped\n")
    vault_file(workspace, "en", "gone.md").unlink()
    second = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        with httpx2.Client(base_url=second.url.removesuffix("/mcp") + "/api/v1") as http:
            wait_for(lambda: http.get("/status").json()["index_ready"], 30, what="the reconcile")
            edited = wait_for_version(workspace, "en", "a.md", lambda v: v["actor"] == "external")
            assert (edited["version"], edited["op"]) == (2, "edit")
            found = wait_for_version(workspace, "en", "found.md", lambda v: True)
            assert (found["version"], found["actor"]) == (1, "external")
            gone = wait_for_version(workspace, "en", "gone.md", lambda v: v["op"] == "delete")
            assert gone["version"] == 2
            assert http.get("/en/history/old.md").json()["versions"] == []
    finally:
        second.stop()
    assert check_history_consistent(workspace) == 5


OLD_TEXTS = {"seed.md": b"# Seed\n\nthere before the first index\n", "p.md": b"# P\n\nfirst\n"}


@pytest.fixture(scope="module")
def served_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two notes (``OLD_TEXTS``), indexed by a server that then stopped (history has not
    seen them): served once for the module, copied by each test that starts from it."""
    workspace = tmp_path_factory.mktemp("served-once") / "ws"
    for name, data in OLD_TEXTS.items():
        vault_file(workspace, "en", name).parent.mkdir(parents=True, exist_ok=True)
        vault_file(workspace, "en", name).write_bytes(data)
    first = start_indexer(workspace, env=NO_SUMMARIES)
    with httpx2.Client(base_url=first.url.removesuffix("/mcp") + "/api/v1") as http:
        wait_for(lambda: http.get("/status").json()["index_ready"], 30, what="the reconcile")
    first.stop()
    return workspace


def indexed_then_stopped(served_once: Path, workspace: Path) -> dict[str, bytes]:
    """``workspace`` made a copy of ``served_once``; returns the two notes' texts."""
    shutil.copytree(served_once, workspace, symlinks=True, dirs_exist_ok=True)
    return dict(OLD_TEXTS)


def test_an_upgrade_keeps_the_texts_of_notes_changed_while_stopped(
    served_once: Path, workspace: Path
) -> None:
    """An index of an older schema is recreated from the vaults: the texts it held of the
    notes history never recorded went with it, so a note another program deleted or
    overwrote while no indexer ran could not be restored (after a start with the same
    schema it could: ``op: baseline``)."""
    from indexer.index.schema import SCHEMA_VERSION

    old = indexed_then_stopped(served_once, workspace)
    with sqlite3.connect(workspace / ".indexer" / "index.sqlite") as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")  # (an older indexer's)
    vault_file(workspace, "en", "seed.md").unlink()
    vault_file(workspace, "en", "p.md").write_bytes(b"# P\n\noverwritten by an editor\n")
    second = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        gone = wait_for_version(workspace, "en", "seed.md", lambda v: v["op"] == "delete")
        edited = wait_for_version(workspace, "en", "p.md", lambda v: v["op"] == "edit")
        assert gone["version"] == 2 and edited["version"] == 2
        with httpx2.Client(base_url=second.url.removesuffix("/mcp") + "/api/v1") as http:
            for name, data in old.items():
                (first_version,) = [
                    v
                    for v in http.get(f"/en/history/{name}").json()["versions"]
                    if v["version"] == 1
                ]
                assert first_version["op"] == "baseline", name
                shown = http.get(f"/en/notes/{name}", params={"version": 1}).json()
                assert shown["content"].encode() == data, name
    finally:
        second.stop()
    assert "recreating it from the vaults" in second.log_path.read_text()


def test_a_reindex_keeps_the_texts_of_notes_changed_while_stopped(
    served_once: Path, workspace: Path
) -> None:
    """``indexer reindex`` rebuilds the index, whose copies were the texts history never
    recorded: a note another program deleted or overwrote while no indexer ran could not
    be restored after it. It records the changes first, as a start does."""
    old = indexed_then_stopped(served_once, workspace)
    vault_file(workspace, "en", "seed.md").unlink()
    vault_file(workspace, "en", "p.md").write_bytes(b"# P\n\noverwritten by an editor\n")
    done = subprocess.run(
        [sys.executable, "-m", "indexer", "reindex", "--workspace", str(workspace)],
        capture_output=True,
        text=True,
        env={**os.environ, **NO_SUMMARIES},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    second = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        with httpx2.Client(base_url=second.url.removesuffix("/mcp") + "/api/v1") as http:
            for name, data in old.items():
                versions = http.get(f"/en/history/{name}").json()["versions"]
                ops = sorted((v["version"], v["op"]) for v in versions)
                assert ops == [(1, "baseline"), (2, "delete" if name == "seed.md" else "edit")]
                shown = http.get(f"/en/notes/{name}", params={"version": 1}).json()
                assert shown["content"].encode() == data, name
    finally:
        second.stop()


def test_a_note_made_while_no_indexer_ran_is_recorded_at_the_next_start(workspace: Path) -> None:
    """SPEC: changes seen by the start-up reconcile are recorded too. A note created
    while stopped had no version at all (only the notes history knew were compared);
    with its first version, an outside overwrite of it later keeps the text before."""
    first = start_indexer(workspace, env=NO_SUMMARIES)
    with httpx2.Client(base_url=first.url.removesuffix("/mcp") + "/api/v1") as http:
        http.put("/en/notes/a.md", content=b"# A\n", headers={"Content-Type": "text/markdown"})
        wait_for(lambda: http.get("/status").json()["index_ready"], 30, what="the reconcile")
    first.stop()
    vault_file(workspace, "en", "new/made.md").parent.mkdir(parents=True)
    vault_file(workspace, "en", "new/made.md").write_text("# made while stopped\n")
    second = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        made = wait_for_version(workspace, "en", "new/made.md", lambda v: True)
        assert made["actor"] == "external" and made["version"] == 1
        with httpx2.Client(base_url=second.url.removesuffix("/mcp") + "/api/v1") as http:
            wait_for(lambda: http.get("/status").json()["index_ready"], 30, what="the reconcile")
            assert len(http.get("/en/history/a.md").json()["versions"]) == 1  # unchanged
    finally:
        second.stop()
    assert check_history_consistent(workspace) == 2


def test_a_note_history_never_saw_keeps_the_text_another_program_replaced(
    workspace: Path,
) -> None:
    """The notes found when the index was built get a version at their first change;
    when another program made that change (an edit, a deletion), their text was lost to
    ``restore``, though the index held it. It is their first version now (``baseline``),
    while serving and at the next start; a text the index did not hold exactly (not
    UTF-8) gets none, as before."""
    before = {
        "edited.md": b"# Edited\n\nas it was\n",
        "deleted.md": b"---\ntitle: Deleted\n---\n# Deleted\n\nkeep me\n",
        "offline.md": b"# Offline\n\nbefore\n",
        "latin1.md": b"# caf\xe9\n",
        "notes.txt": "plain text, \u6771\u4eac\n".encode(),
    }
    for name, data in before.items():
        vault_file(workspace, "en", name).parent.mkdir(parents=True, exist_ok=True)
        vault_file(workspace, "en", name).write_bytes(data)
    first = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        with httpx2.Client(base_url=first.url.removesuffix("/mcp") + "/api/v1") as http:
            wait_for(lambda: http.get("/status").json()["index_ready"], 30, what="the reconcile")
        for name in ("edited.md", "latin1.md", "notes.txt"):
            edit_outside(workspace, "en", name, "# changed in an editor\n")
        vault_file(workspace, "en", "deleted.md").unlink()
        wait_for_version(workspace, "en", "deleted.md", lambda v: v["op"] == "delete")

        async def check() -> None:
            async with first.client() as c:
                for name in ("edited.md", "deleted.md", "notes.txt"):
                    old = await call(c, "read", lang="en", path=name, version=1)
                    assert old["content"].encode() == before[name], name
                done = await call(c, "restore", lang="en", path="deleted.md", version=1)
                assert done["version"] == 3
            assert vault_file(workspace, "en", "deleted.md").read_bytes() == before["deleted.md"]

        asyncio.run(check())
        ops = [(v["op"], v["actor"]) for v in history_versions(workspace, "en", "edited.md")]
        assert ops == [("edit", "external"), ("baseline", "external")]
        assert [v["op"] for v in history_versions(workspace, "en", "latin1.md")] == ["baseline"]
    finally:
        first.stop()
    vault_file(workspace, "en", "offline.md").write_text("# Offline\n\nedited while stopped\n")
    second = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        wait_for_version(workspace, "en", "offline.md", lambda v: v["op"] == "edit")
        rows = history_versions(workspace, "en", "offline.md")
        assert [(v["version"], v["op"]) for v in rows] == [(2, "edit"), (1, "baseline")]
        with history_store(workspace) as store:
            first_version = store.get("en", "offline.md", 1)
            assert first_version is not None
            assert store.content(first_version) == before["offline.md"]
    finally:
        second.stop()
    check_history_consistent(workspace)


def test_a_rename_by_another_program_links_the_two_histories(workspace: Path) -> None:
    """A note renamed in a file manager or Obsidian reached history as a deletion and a
    new file, two histories that said nothing of each other: the old versions looked
    lost to a reader of the new path's. The deletion now names where the note went
    (``moved_to``) and the new file where it came from (``moved_from``), while serving
    and for a rename made while no indexer ran; a deletion and a new file of other
    bytes, or empty ones, stay apart."""
    for name, text in {
        "seen.md": "# Seen at start\n\nnever changed by a tool\n",
        "folder/one.md": "# One\n\nin a folder\n",
        "folder/two.md": "# Two\n\nin a folder too\n",
        "gone.md": "# Gone\n\ndeleted for good\n",
        "empty.md": "",
        "offline.md": "# Offline\n\nrenamed while stopped\n",
    }.items():
        vault_file(workspace, "en", name).parent.mkdir(parents=True, exist_ok=True)
        vault_file(workspace, "en", name).write_text(text)
    first = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        with httpx2.Client(base_url=first.url.removesuffix("/mcp") + "/api/v1") as http:
            wait_for(lambda: http.get("/status").json()["index_ready"], 30, what="the reconcile")

            async def write() -> None:
                async with first.client() as c:
                    await call(c, "write", lang="en", path="known.md", content="# Known\n\nv1\n")

            asyncio.run(write())
            moves = {"seen.md": "renamed/seen.md", "known.md": "known-renamed.md"}
            for old, new in moves.items():
                vault_file(workspace, "en", new).parent.mkdir(parents=True, exist_ok=True)
                vault_file(workspace, "en", old).rename(vault_file(workspace, "en", new))
            vault_file(workspace, "en", "folder").rename(vault_file(workspace, "en", "moved"))
            moves |= {"folder/one.md": "moved/one.md", "folder/two.md": "moved/two.md"}
            vault_file(workspace, "en", "gone.md").unlink()
            vault_file(workspace, "en", "other.md").write_text("# Other\n\nnew text\n")
            vault_file(workspace, "en", "empty.md").unlink()
            vault_file(workspace, "en", "empty-too.md").write_text("")
            for old, new in moves.items():
                moved_from = wait_for_version(workspace, "en", new, lambda v: "moved_from" in v)
                assert moved_from["moved_from"] == old and moved_from["actor"] == "external"
                gone = history_versions(workspace, "en", old)[0]
                assert (gone["op"], gone.get("moved_to")) == ("delete", new), old
            assert http.get("/en/history/known-renamed.md").json()["versions"][0]["moved_from"] == (
                "known.md"
            )
            for path in ("other.md", "empty-too.md"):
                made = wait_for_version(workspace, "en", path, lambda v: v["etag"] is not None)
                assert "moved_from" not in made, path
            for path in ("gone.md", "empty.md"):
                gone = wait_for_version(workspace, "en", path, lambda v: v["op"] == "delete")
                assert "moved_to" not in gone, path
    finally:
        first.stop()
    vault_file(workspace, "en", "offline.md").rename(vault_file(workspace, "en", "offline-2.md"))
    second = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        made = wait_for_version(workspace, "en", "offline-2.md", lambda v: "moved_from" in v)
        assert made["moved_from"] == "offline.md"
        assert history_versions(workspace, "en", "offline.md")[0]["moved_to"] == "offline-2.md"
    finally:
        second.stop()
    check_history_consistent(workspace)


def test_a_note_replaced_by_a_link_is_deleted_while_served_and_while_stopped(
    workspace: Path, tmp_path: Path
) -> None:
    """Another program's ``rm n.md; ln -s elsewhere.md n.md``, or a link renamed over a
    note: the note is gone for the tools (the sandbox refuses links) and for search, and
    history records its deletion, after the text it had for a note it never saw."""
    (tmp_path / "outside.md").write_text("# outside the vault\n")
    for name in ("elsewhere.md", "seen.md", "offline.md"):
        vault_file(workspace, "en", name).parent.mkdir(parents=True, exist_ok=True)
        vault_file(workspace, "en", name).write_text(f"# {name} as it was\n")
    first = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        with httpx2.Client(base_url=first.url.removesuffix("/mcp") + "/api/v1") as http:
            wait_for(lambda: http.get("/status").json()["index_ready"], 30, what="the reconcile")
            http.put(
                "/en/notes/known.md", content=b"# K\n", headers={"Content-Type": "text/markdown"}
            )
            for name in ("known.md", "seen.md"):
                vault_file(workspace, "en", name).unlink()
                vault_file(workspace, "en", name).symlink_to("elsewhere.md")
            for name, before in (("known.md", "write"), ("seen.md", "baseline")):
                wait_for_version(workspace, "en", name, lambda v: v["op"] == "delete")
                assert [v["op"] for v in history_versions(workspace, "en", name)][1] == before
    finally:
        first.stop()
    temp = vault_file(workspace, "en", "link.tmp")
    temp.symlink_to(tmp_path / "outside.md")
    os.replace(temp, vault_file(workspace, "en", "offline.md"))
    second = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        wait_for_version(workspace, "en", "offline.md", lambda v: v["op"] == "delete")
        with history_store(workspace) as store:
            kept = store.get("en", "offline.md", 1)
            assert kept is not None and kept.op == "baseline"
            assert store.content(kept) == b"# offline.md as it was\n"
    finally:
        second.stop()
    check_history_consistent(workspace)


@pytest.mark.parametrize("damage", ["garbage", "newer"])
def test_an_unusable_history_stops_the_start_in_one_line(workspace: Path, damage: str) -> None:
    folder = workspace / ".indexer" / "history"
    folder.mkdir(parents=True)
    path = folder / schema.FILE_NAME
    if damage == "garbage":
        path.write_bytes(b"this is not SQLite " * 500)
    else:
        store = HistoryStore(folder, etag_of)
        store.open()
        store.close()
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA user_version = 99")
        conn.close()
    before = path.read_bytes()
    proc = spawn_indexer(workspace)
    assert proc.wait(timeout=30) == 1
    log = proc.log_path.read_text()  # type: ignore[attr-defined]
    assert log.count("\n") == 1 and log.startswith("indexer serve: the history "), log
    assert path.read_bytes() == before
    assert not (workspace / "indexer.mcp.url").exists()
