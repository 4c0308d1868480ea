"""End to end: one rule for what is a note, whichever tool looks. A note is a ``.md``
file (SPEC: "``.md`` stays the note type"; plain text files beside them), anywhere but
below a dot-name: ``find``, ``grep``, ``read`` and ``search`` (MCP and REST) all see it,
and ``history`` records what other programs do to it. A ``.md`` inside a note's
``*.assets/`` folder is such a note (find, grep and read saw it, search never did); a
name that only looks like one (``X.MD``, ``.markdown``, ``.md.bak``, ``.md~``) is an
other file for every tool: listed and read, never searched nor grepped by default."""

from __future__ import annotations

import time
import urllib.parse
from pathlib import Path

import httpx2
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir

OTHER_NAMES = ["X.MD", "y.Md", "z.markdown", "b.md.bak", "c.md~"]


async def _call(server: RunningIndexer, tool: str, **args: object) -> dict:
    async with server.client() as client:
        got = await client.call_tool(tool, {"lang": "en", **args})
    return got.structured_content


def _rest(server: RunningIndexer, path: str) -> httpx2.Response:
    return httpx2.get(server.url.removesuffix("/mcp") + "/api/v1/en" + path, timeout=30)


async def _searched(server: RunningIndexer, word: str, rest: bool = True) -> list[str]:
    """The paths search finds, through MCP and (``rest``) REST alike."""
    paths = [r["path"] for r in (await _call(server, "search", query=word))["results"]]
    if rest:
        assert paths == [r["path"] for r in _rest(server, "/search?q=" + word).json()["results"]]
    return paths


async def test_a_note_inside_a_notes_images_folder_is_a_note_for_every_tool(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    vault = ws / "memory/languages/en/vault"
    (vault / "items/a.md.assets").mkdir(parents=True)
    (vault / "items/a.md").write_text("# A\n\n![shot](a.md.assets/p.png)\n")
    (vault / "items/a.md.assets/x.md").write_text("# X\n\nzqtranscript\n")
    (vault / "items/a.md.assets/p.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    server = start_indexer(ws)
    try:
        note = "items/a.md.assets/x.md"
        assert await _searched(server, "zqtranscript") == [note]
        grep = await _call(server, "grep", pattern="zqtranscript")
        assert [m["path"] for m in grep["matches"]] == [note]
        assert note in (await _call(server, "find"))["paths"]
        assert (await _call(server, "read", path=note))["content"].endswith("zqtranscript\n")
        # another program's edit: the watcher indexes it and history records it
        (vault_dir(server, "en") / note).write_text("# X\n\nzqrevised\n")
        await wait_for_search(server, "zqrevised", [note])
        assert await _searched(server, "zqtranscript") == []
        versions = (await _call(server, "history", path=note))["versions"]
        assert versions and versions[0]["actor"] == "external"
        # it moves and goes with its note
        await _call(server, "move", path="items/a.md", new_path="b.md")
        assert await _searched(server, "zqrevised") == ["b.md.assets/x.md"]
        await _call(server, "delete", path="b.md")
        assert await _searched(server, "zqrevised") == []
        assert not (vault / "b.md.assets").exists()
    finally:
        server.stop()


async def wait_for_search(server: RunningIndexer, word: str, paths: list[str]) -> None:
    deadline = time.monotonic() + 20
    while await _searched(server, word, rest=False) != paths:
        assert time.monotonic() < deadline, f"search never found {word} in {paths}"
        time.sleep(0.05)


async def test_names_that_only_look_like_notes_are_other_files_for_every_tool(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    vault = ws / "memory/languages/en/vault"
    vault.mkdir(parents=True)
    for n, name in enumerate(OTHER_NAMES):
        (vault / name).write_text(f"# {name}\n\nzqother{n}\n")
    (vault / "x.md").mkdir()  # a folder so named holds notes as any folder does
    (vault / "x.md/inner.md").write_text("# Inner\n\nzqinner\n")
    server = start_indexer(ws)
    try:
        notes = (await _call(server, "find"))["paths"]
        every = (await _call(server, "find", pattern="**/*"))["paths"]
        listing = _rest(server, "/folder?path=").json()
        assert notes == ["x.md/inner.md"]
        assert await _searched(server, "zqinner") == ["x.md/inner.md"]
        for n, name in enumerate(OTHER_NAMES):
            assert name in every and name in listing["others"], name
            assert await _searched(server, f"zqother{n}") == [], name
            grep = await _call(server, "grep", pattern=f"zqother{n}")
            assert grep["matches"] == [], name
            anywhere = await _call(server, "grep", pattern=f"zqother{n}", glob="**/*")
            assert [m["path"] for m in anywhere["matches"]] == [name]
            assert (await _call(server, "read", path=name))["content"].startswith("# ")
            assert _rest(server, "/notes/" + urllib.parse.quote(name)).status_code == 200
    finally:
        server.stop()
