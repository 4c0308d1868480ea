"""Files over ``max_file_bytes`` made outside the tools (a person's 5 MiB log, a large
photo): ``read`` refuses them (``too_large``: what the limit is for), but ``stat``
tells their size and etag, ``delete`` removes them and ``move`` moves a text file or an
image as it is. A note that large is not moved (its links would need its text). Each
case also checks what else is on disk and in history."""

from __future__ import annotations

import base64
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.history import vault_with_history
from helpers.snapshots import snapshot

from indexer.core import Core
from indexer.settings import Settings
from indexer.vault.fsops import etag_of
from indexer.vault.vault import Vault
from indexer.web.mcp import create_server
from shared.errors import VaultError

LIMIT = 4096
BIG = b"line of a log\n" * (LIMIT // 7)  # twice the limit
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, LIMIT) as made:
        yield made


@pytest.fixture
async def client(vault: Vault) -> AsyncIterator[Client]:
    settings = Settings(workspace=vault.sandbox.workspace, max_file_bytes=LIMIT)
    async with Client(create_server(Core(settings, vault))) as c:
        yield c


def root(vault: Vault) -> Path:
    return vault.sandbox.workspace.vault_dir("en")


def put(vault: Vault, rel: str, data: bytes = BIG) -> Path:
    """A file made by another program (not through the tools)."""
    path = root(vault) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def files(vault: Vault) -> dict[str, bytes]:
    """Every file of the vault (path -> bytes): what a change may touch."""
    base = root(vault)
    return {p.relative_to(base).as_posix(): p.read_bytes() for p in base.rglob("*") if p.is_file()}


def version_count(vault: Vault) -> int:
    store = vault.recorder.store
    assert store is not None
    return store.stats()["versions"]


def refused(vault: Vault, code: str, call, *args, **kwargs) -> str:  # type: ignore[no-untyped-def]
    """The call is refused with ``code`` and changes nothing, on disk or in history."""
    before, versions = snapshot(vault.sandbox.workspace.root / "memory"), version_count(vault)
    with pytest.raises(VaultError) as info:
        call(*args, **kwargs)
    assert info.value.code == code, str(info.value)
    assert snapshot(vault.sandbox.workspace.root / "memory") == before
    assert version_count(vault) == versions
    return info.value.message


# -- stat ----------------------------------------------------------------------------------


def test_grep_finds_in_a_big_note_what_search_finds(tmp_path: Path, vault: Vault) -> None:
    """Search reads 8 MiB of a note; grep read none of one past the size limit and
    answered "no match, complete" for text search showed in a snippet."""
    from indexer.index.service import NoteIndex

    put(vault, "log.md", BIG + b"needleword at the end\n")
    index = NoteIndex(vault.sandbox.workspace)
    index.open()
    try:
        index.reconcile()
        assert [r["path"] for r in index.search("en", "needleword")["results"]] == ["log.md"]
    finally:
        index.close()
    found = vault.grep("en", "needleword")
    assert [m["path"] for m in found["matches"]] == ["log.md"] and not found["truncated"]


def test_stat_tells_a_big_files_size_and_etag(vault: Vault) -> None:
    put(vault, "logs/big.txt")
    put(vault, "big.md", b"# Big\n" + BIG)
    assert refused(vault, "too_large", vault.read, "en", "logs/big.txt")
    found = vault.stat("en", "logs/big.txt")
    assert found["exists"] and found["type"] == "file"
    assert found["size"] == len(BIG) and found["etag"] == etag_of(BIG)
    note = vault.stat("en", "big.md")
    assert note["size"] == len(BIG) + 6 and note["etag"] == etag_of(b"# Big\n" + BIG)


def test_stat_etag_of_a_small_file_is_reads(vault: Vault) -> None:
    written = vault.write("en", "a.md", "# A\n")
    put(vault, "empty.txt", b"")
    assert vault.stat("en", "a.md")["etag"] == written["etag"] == vault.read("en", "a.md")["etag"]
    assert vault.stat("en", "empty.txt")["etag"] == vault.read("en", "empty.txt")["etag"]


# -- delete --------------------------------------------------------------------------------


def test_delete_removes_a_big_text_file_and_nothing_else(vault: Vault) -> None:
    vault.write("en", "logs/keep.md", "# Keep\n")
    put(vault, "logs/big.txt")
    others = {k: v for k, v in files(vault).items() if k != "logs/big.txt"}
    versions = version_count(vault)
    assert vault.delete("en", "logs/big.txt") == {"path": "logs/big.txt", "deleted": True}
    assert files(vault) == others
    assert version_count(vault) == versions  # history keeps no text over the limit
    assert not vault.stat("en", "logs/big.txt")["exists"]


def test_delete_of_a_big_note_takes_its_images_and_records_them(vault: Vault) -> None:
    vault.write("en", "n.md.assets/a.png", base64.b64encode(PNG).decode(), "base64")
    put(vault, "n.md", b"# N\n" + BIG)
    vault.delete("en", "n.md", reason="too big")
    assert not (root(vault) / "n.md").exists() and not (root(vault) / "n.md.assets").exists()
    rows = vault.history("en", "n.md.assets/a.png")["versions"]
    assert [(v["op"], v["reason"]) for v in rows] == [("delete", "too big"), ("write", None)]


def test_delete_of_a_note_keeps_the_images_history_could_not(
    vault: Vault, caplog: pytest.LogCaptureFixture
) -> None:
    """The note's whole .assets/ folder was removed: an image over the limit, one whose
    name no tool can use and a dot-file, never in history, were lost for good."""
    vault.write("en", "n.md", "# N\n\n![s](n.md.assets/small.png)\n")
    vault.write("en", "n.md.assets/small.png", base64.b64encode(PNG).decode(), encoding="base64")
    put(vault, "n.md.assets/sub/deep.png", PNG)
    for name, data in {"big.png": PNG + BIG, "what?.png": PNG, ".DS_Store": b"x"}.items():
        put(vault, f"n.md.assets/{name}", data)
    vault.delete("en", "n.md")
    kept = ["n.md.assets/.DS_Store", "n.md.assets/big.png", "n.md.assets/what?.png"]
    assert sorted(files(vault)) == kept
    assert "kept 3 file(s) in n.md.assets/" in caplog.text
    vault.restore("en", "n.md", 1)
    assert sorted(files(vault)) == sorted(
        [*kept, "n.md", "n.md.assets/small.png", "n.md.assets/sub/deep.png"]
    )
    vault.delete("en", "n.md.assets/big.png")
    (root(vault) / "n.md.assets/.DS_Store").unlink()
    (root(vault) / "n.md.assets/what?.png").unlink()
    vault.delete("en", "n.md")  # nothing kept: the folder goes
    assert files(vault) == {} and not (root(vault) / "n.md.assets").exists()


def test_an_image_rewritten_during_a_delete_is_kept(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An image another program rewrote after the delete recorded it was removed: its
    new bytes were in no version. Folders below are pruned to the depth limit only (1,100
    levels made the delete answer internal, a RecursionError, after it was done)."""
    vault.write("en", "n.md", "# N\n")
    vault.write("en", "n.md.assets/a.png", base64.b64encode(PNG).decode(), encoding="base64")
    deep = root(vault) / "n.md.assets" / "/".join(["d"] * 40)  # past the depth limit
    deep.mkdir(parents=True)
    changing = vault.recorder.changing

    def rewritten_meanwhile(*args: object, **kwargs: object) -> object:
        put(vault, "n.md.assets/a.png", PNG + b"new")
        return changing(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(vault.recorder, "changing", rewritten_meanwhile)
    vault.delete("en", "n.md")
    assert (root(vault) / "n.md.assets/a.png").read_bytes() == PNG + b"new"
    assert not (root(vault) / "n.md").exists() and deep.is_dir()  # (pruned 32 deep at most)


def test_delete_of_a_big_file_that_grew_outside_keeps_its_history(vault: Vault) -> None:
    """History had no row for the delete: it still said the file existed, with its
    last text (restorable, as the text over the limit never was)."""
    vault.write("en", "log.txt", "small\n")
    put(vault, "log.txt")
    vault.delete("en", "log.txt", reason="rotated")
    assert not (root(vault) / "log.txt").exists()
    rows = vault.history("en", "log.txt")["versions"]
    newest = rows[0]
    assert (newest["op"], newest["etag"], newest["reason"]) == ("delete", None, "rotated")
    assert [v["op"] for v in rows] == ["delete", "write"]
    assert vault.read("en", "log.txt", version=1)["content"] == "small\n"
    vault.restore("en", "log.txt", 1)
    assert (root(vault) / "log.txt").read_text() == "small\n"


def test_a_big_file_is_not_written_over_and_the_refusal_says_what_to_do(
    vault: Vault,
) -> None:
    """Write, restore and undo over a file another program grew past the limit are
    refused (history could not keep what they would replace); the message says how to
    go on, and that way works."""
    vault.write("en", "log.txt", "small\n")
    vault.write("en", "log.txt", "second\n", reason="entry:e1")
    put(vault, "log.txt")
    for call, args in [
        (vault.write, ("en", "log.txt", "new\n")),
        (vault.restore, ("en", "log.txt", 1)),
        (vault.undo, ("en", "e1")),
    ]:
        message = refused(vault, "too_large", call, *args)
        assert "log.txt" in message and "delete it first" in message, message
    vault.delete("en", "log.txt")
    vault.restore("en", "log.txt", 1)
    assert (root(vault) / "log.txt").read_text() == "small\n"


def test_delete_refuses_a_hard_linked_big_file(vault: Vault) -> None:
    path = put(vault, "big.txt")
    os.link(path, root(vault).parent / "elsewhere.txt")
    refused(vault, "forbidden_path", vault.delete, "en", "big.txt")


# -- move ----------------------------------------------------------------------------------


def test_move_of_a_big_text_file_moves_it_as_it_is(vault: Vault) -> None:
    put(vault, "in/big.txt")
    vault.write("en", "in/keep.md", "# Keep\n")
    before, versions = files(vault), version_count(vault)
    moved = vault.move("en", "in/big.txt", "out/deeper/big.log.txt")
    assert moved == {
        "path": "in/big.txt",
        "new_path": "out/deeper/big.log.txt",
        "etag": etag_of(BIG),
        "relinked": [],
    }
    before["out/deeper/big.log.txt"] = before.pop("in/big.txt")
    assert files(vault) == before
    assert version_count(vault) == versions


def test_move_of_a_big_file_checks_if_match(vault: Vault) -> None:
    put(vault, "big.txt")
    stale = etag_of(b"what it was")
    assert "changed" in refused(vault, "conflict", vault.move, "en", "big.txt", "b.txt", stale)
    refused(vault, "conflict", vault.move, "en", "big.txt", "b.txt", if_match="")
    etag = vault.stat("en", "big.txt")["etag"]
    assert vault.move("en", "big.txt", "b.txt", if_match=etag)["etag"] == etag
    assert (root(vault) / "b.txt").read_bytes() == BIG


def test_move_of_a_big_file_never_replaces_one(vault: Vault) -> None:
    put(vault, "big.txt")
    vault.write("en", "there.txt", "mine\n")
    refused(vault, "conflict", vault.move, "en", "big.txt", "there.txt")


def test_move_of_a_big_image_keeps_its_kind(vault: Vault) -> None:
    put(vault, "n.md.assets/photo.png", PNG + BIG)
    refused(vault, "forbidden_path", vault.move, "en", "n.md.assets/photo.png", "photo.txt")
    vault.move("en", "n.md.assets/photo.png", "n.md.assets/p2.png")
    assert (root(vault) / "n.md.assets" / "p2.png").read_bytes() == PNG + BIG


def test_a_big_note_is_not_moved_and_the_refusal_names_it(vault: Vault) -> None:
    put(vault, "notes/big.md", b"# Big\n![x](big.md.assets/x.png)\n" + BIG)
    put(vault, "notes/big.md.assets/x.png", PNG)
    put(vault, "big.txt")
    message = refused(vault, "too_large", vault.move, "en", "notes/big.md", "other/big.md")
    assert "notes/big.md" in message and "note" in message
    refused(vault, "too_large", vault.move, "en", "notes/big.md", "notes/big.txt")
    assert "big.txt" in refused(vault, "too_large", vault.move, "en", "big.txt", "big.md")


def test_a_folder_holding_a_big_file_is_not_moved_as_too_large(vault: Vault) -> None:
    put(vault, "logs/big.txt")
    put(vault, "logs/small.md", b"# Small\n")
    message = refused(vault, "too_large", vault.move, "en", "logs", "archive")
    assert "logs/big.txt" in message


def test_a_big_text_file_with_an_images_folder_is_not_moved(vault: Vault) -> None:
    put(vault, "log.txt")
    put(vault, "log.txt.assets/x.png", PNG)
    assert "log.txt" in refused(vault, "too_large", vault.move, "en", "log.txt", "l2.txt")


def test_moves_under_the_limit_are_unchanged(vault: Vault) -> None:
    vault.write("en", "small.txt", "hi\n")
    moved = vault.move("en", "small.txt", "small2.txt")
    assert moved["etag"] == etag_of(b"hi\n")
    assert [v["op"] for v in vault.history("en", "small2.txt")["versions"]] == ["move"]


# -- through the tools ---------------------------------------------------------------------


async def test_the_tools_stat_move_and_delete_a_big_file(vault: Vault, client: Client) -> None:
    put(vault, "big.txt")
    with pytest.raises(ToolError, match=r"^too_large: "):
        await client.call_tool("read", {"lang": "en", "path": "big.txt"})
    found = (await client.call_tool("stat", {"lang": "en", "path": "big.txt"})).structured_content
    assert found is not None and found["size"] == len(BIG)
    args = {"lang": "en", "path": "big.txt", "new_path": "b.txt", "if_match": found["etag"]}
    await client.call_tool("move", args)
    await client.call_tool("delete", {"lang": "en", "path": "b.txt"})
    assert list(root(vault).iterdir()) == []


# -- grep ----------------------------------------------------------------------------------


def test_grep_names_the_files_too_large_to_read(vault: Vault) -> None:
    """A file past the 8 MiB grep reads was passed over in silence: a person grepping a
    big log for a line got "no match, complete" and trusted it. Now the answer counts
    such files (``unsearched``) and names the first few; a grep they were no part of
    (the glob left them out) and pictures (never text) say nothing of them."""
    from indexer.vault.fsops import MAX_SEARCHED_BYTES

    huge = b"needleword\n" + b"x" * MAX_SEARCHED_BYTES
    put(vault, "logs/huge.md", huge)
    put(vault, "logs/huge.txt", huge)
    put(vault, "a.md.assets/big.png", PNG + b"\0" * MAX_SEARCHED_BYTES)
    put(vault, "small.md", b"needleword here\n")
    found = vault.grep("en", "needleword")
    assert [m["path"] for m in found["matches"]] == ["small.md"] and not found["truncated"]
    assert found["unsearched"] == 1 and found["unsearched_sample"] == ["logs/huge.md"]
    everything = vault.grep("en", "needleword", glob="**")
    assert everything["unsearched"] == 2
    assert everything["unsearched_sample"] == ["logs/huge.md", "logs/huge.txt"]
    assert "unsearched" not in vault.grep("en", "needleword", path="logs", glob="*.txt-none")
    assert "unsearched" not in vault.grep("en", "needleword", glob="*.md")


async def test_grep_over_mcp_names_the_files_too_large_to_read(
    vault: Vault, client: Client
) -> None:
    from indexer.vault.fsops import MAX_SEARCHED_BYTES

    put(vault, "huge.md", b"x" * (MAX_SEARCHED_BYTES + 1))
    found = (await client.call_tool("grep", {"lang": "en", "pattern": "x"})).structured_content
    assert found == {
        "matches": [],
        "truncated": False,
        "unsearched": 1,
        "unsearched_sample": ["huge.md"],
    }
