"""Other programs saving into a served vault, each their own way: vim (rename over, a
swap file, a backup), ``sed -i`` (a temp file renamed over), a case-only rename, a note
replaced by a link out of the vault, a folder replaced by a note of its name. After each,
search, grep, find, read (MCP and REST) and history agree with the disk within seconds.

Names in several scripts (Chinese, Arabic, emoji, a decomposed é); each test has a lang
of its own on the module's one server."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
import unicodedata
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.indexer_process import RunningIndexer, vault_dir

DEADLINE = 15.0


async def data(client: Client, tool: str, **args: object) -> dict:
    result = await client.call_tool(tool, args)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def views(server: RunningIndexer, c: Client, lang: str, rel: str, word: str) -> dict:
    """What each way in says of ``rel`` and ``word``."""
    folder = rel.rpartition("/")[0]
    searched = await data(c, "search", lang=lang, query=word, limit=50)
    try:  # (the folder may be a file now)
        grepped = await data(c, "grep", lang=lang, pattern=word, fixed=True, path=folder)
    except ToolError:
        grepped = {"matches": []}
    listed = await data(c, "find", lang=lang, pattern="**/*.md")
    try:
        content: str | None = (await data(c, "read", lang=lang, path=rel))["content"]
    except ToolError:
        content = None
    base = server.url.rsplit("/mcp", 1)[0]
    async with httpx2.AsyncClient(base_url=base) as http:
        rest = await http.get(f"/api/v1/{lang}/notes/{quote(rel)}")
        rest_search = await http.get(f"/api/v1/{lang}/search", params={"q": word})
    return {
        "search": rel in [hit["path"] for hit in searched["results"]],
        "grep": rel in [m["path"] for m in grepped["matches"]],
        "find": rel in listed["paths"],
        "read": content,
        "rest": rest.json()["content"] if rest.status_code == 200 else None,
        "rest_search": rel in [hit["path"] for hit in rest_search.json()["results"]],
    }


async def agree(
    server: RunningIndexer, c: Client, lang: str, rel: str, word: str, text: str | None
) -> None:
    """Wait until every way in says ``rel`` holds ``text`` (None: no such note)."""
    there = text is not None
    want = {k: there for k in ("search", "grep", "find", "rest_search")}
    want |= {"read": text, "rest": text}
    deadline = time.monotonic() + DEADLINE
    while (seen := await views(server, c, lang, rel, word)) != want:
        if time.monotonic() > deadline:
            raise AssertionError(f"{rel}: {seen} != {want}")
        await asyncio.sleep(0.05)


def vim(path: Path, command: str, *settings: str) -> None:
    """Edit ``path`` with a real vim (no vimrc), then save and quit."""
    args = ["vim", "-Es", "-u", "NONE", "-i", "NONE", "-N"]
    for setting in settings:
        args += ["-c", setting]
    subprocess.run([*args, "-c", command, "-c", "wq", str(path)], check=True, timeout=30)


async def ops(c: Client, lang: str, rel: str) -> list[tuple[str, str]]:
    versions = (await data(c, "history", lang=lang, path=rel))["versions"]
    return [(v["op"], v["actor"]) for v in versions]


@pytest.mark.skipif(shutil.which("vim") is None, reason="vim is not installed")
async def test_vim_saves_by_rename_with_a_swap_file_and_a_backup(server: RunningIndexer) -> None:
    lang = "vi"
    rel = "笔记/ملاحظة 🎉.md"
    note = vault_dir(server, lang) / rel
    note.parent.mkdir(parents=True)
    note.write_text("北京 first\n", encoding="utf-8")
    async with server.client() as c:
        await agree(server, c, lang, rel, "first", "北京 first\n")
        vim(note, "%s/first/second/", "set backupcopy=no", "set swapfile", "set directory=.")
        await agree(server, c, lang, rel, "second", "北京 second\n")
        vim(note, "%s/second/third/", "set backupcopy=no", "set backup", "set backupdir=.")
        await agree(server, c, lang, rel, "third", "北京 third\n")
        assert (await ops(c, lang, rel))[:2] == [("edit", "external")] * 2
        diff = (await data(c, "diff", lang=lang, path=rel, from_version=1))["diff"]
        assert "-北京 first" in diff and "+北京 third" in diff


async def test_sed_in_place_on_a_decomposed_name(server: RunningIndexer) -> None:
    lang = "se"
    on_disk = unicodedata.normalize("NFD", "café/résumé.md")
    rel = unicodedata.normalize("NFC", on_disk)
    note = vault_dir(server, lang) / on_disk
    note.parent.mkdir(parents=True)
    note.write_text("old words\n", encoding="utf-8")
    async with server.client() as c:
        await agree(server, c, lang, rel, "old", "old words\n")
        subprocess.run(["sed", "-i", "s/old/new/", str(note)], check=True)
        await agree(server, c, lang, rel, "new", "new words\n")
        assert (await ops(c, lang, rel))[0] == ("edit", "external")


async def test_a_case_only_rename_moves_the_note(server: RunningIndexer) -> None:
    lang = "cr"
    folder = vault_dir(server, lang) / "Notes"
    folder.mkdir(parents=True)
    (folder / "Note.md").write_text("casing matters\n", encoding="utf-8")
    async with server.client() as c:
        await agree(server, c, lang, "Notes/Note.md", "casing", "casing matters\n")
        os.rename(folder / "Note.md", folder / "note.md")
        await agree(server, c, lang, "Notes/note.md", "casing", "casing matters\n")
        await agree(server, c, lang, "Notes/Note.md", "casing", None)
        os.rename(folder, folder.with_name("notes"))
        await agree(server, c, lang, "notes/note.md", "casing", "casing matters\n")
        await agree(server, c, lang, "Notes/note.md", "casing", None)
        moved = (await data(c, "history", lang=lang, path="Notes/note.md"))["versions"]
        assert moved[0]["op"] == "delete" and moved[0]["moved_to"] == "notes/note.md"


async def test_a_note_replaced_by_a_link_out_and_a_folder_by_a_note(
    server: RunningIndexer, tmp_path: Path
) -> None:
    lang = "ln"
    vault = vault_dir(server, lang)
    (vault / "d.md").mkdir(parents=True)
    (vault / "d.md" / "inner.md").write_text("inner words\n", encoding="utf-8")
    (vault / "n.md").write_text("plain words\n", encoding="utf-8")
    secret = tmp_path / "secret.md"
    secret.write_text("secret words\n", encoding="utf-8")
    async with server.client() as c:
        await agree(server, c, lang, "d.md/inner.md", "inner", "inner words\n")
        await agree(server, c, lang, "n.md", "plain", "plain words\n")
        link = vault / ".n.md.tmp"
        os.symlink(secret, link)
        os.replace(link, vault / "n.md")  # (atomic: the note becomes a link out)
        shutil.rmtree(vault / "d.md")
        (vault / "d.md").write_text("a note now\n", encoding="utf-8")
        await agree(server, c, lang, "n.md", "plain", None)
        await agree(server, c, lang, "d.md/inner.md", "inner", None)
        await agree(server, c, lang, "d.md", "note", "a note now\n")
        await agree(server, c, lang, "n.md", "secret", None)
        assert (await ops(c, lang, "n.md"))[0] == ("delete", "external")
