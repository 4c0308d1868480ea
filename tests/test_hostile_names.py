"""Names made by other programs: not UTF-8, refused by the sandbox, decomposed (NFD), too deep.

Policy (``indexer.vault.names``): a listing (find, grep, search, the watcher, the
start-up reconcile, ``indexer reindex``) returns only paths that every tool accepts, and
skips the others with one warning each; an NFC path reaches the NFD file that exists,
and never creates a composed twin.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import subprocess
import sys
import time
import unicodedata
from collections.abc import AsyncIterator

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.indexer_process import wait_for

from indexer.core import Core
from indexer.daemon import build_core
from indexer.settings import Settings
from indexer.web.mcp import create_server
from shared.workspace import Workspace

NFD_NAME = unicodedata.normalize("NFD", "café.md")
NFC_NAME = unicodedata.normalize("NFC", "café.md")
HOSTILE_NAMES = [
    b"bad\xff\xfe.md",  # not UTF-8
    b"a?b.md",
    b"c:d.md",
    b"e\\f.md",
    b"CON.md",
    b"nul.txt.md",
    b"new\nline.md",
    "\u202eevil.md".encode(),
    "zero\u200bwidth.md".encode(),
    b"trailing.md ",
    b"~draft.md",  # (was listed, and refused by read)
    b"COM0.md",
    "LPT\u00b3.md".encode(),
]


def vault_bytes(ws: Workspace) -> bytes:
    return os.fsencode(ws.vault_dir("en"))


def put(path: bytes, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(text.encode())


def plant_hostile(ws: Workspace) -> None:
    """Every hostile name with a findable word, plus a good note and NFD names."""
    root = vault_bytes(ws)
    for name in HOSTILE_NAMES:
        put(root + b"/" + name, "# hostile\nquince hostile\n")
    deep = b"/".join(b"d" for _ in range(40))
    put(root + b"/" + deep + b"/deep.md", "# deep\nquince deep\n")
    put(root + b"/" + os.fsencode(NFD_NAME), "# Café\nquince nfd\n")
    folder = os.fsencode(unicodedata.normalize("NFD", "résumé"))
    put(root + b"/" + folder + b"/inside.md", "# inside\nquince nfd folder\n")
    put(root + b"/good.md", "# good\nquince good\n")


def core_for(ws: Workspace) -> Core:
    return build_core(Settings(workspace=ws, max_file_bytes=1 << 20))


@contextlib.asynccontextmanager
async def serving(ws: Workspace) -> AsyncIterator[tuple[Core, Client]]:
    """A core with its index reconciled and watching, behind the in-memory client."""
    core = core_for(ws)
    index = core.index
    assert index is not None
    index.start_background()
    try:
        wait_for(lambda: index.ready, 10, what="the start-up reconcile")
        async with Client(create_server(core)) as client:
            yield core, client
    finally:
        index.close()


@pytest.fixture
async def live(ws: Workspace) -> AsyncIterator[tuple[Core, Client]]:
    plant_hostile(ws)
    async with serving(ws) as running:
        yield running


async def call(client: Client, tool: str, **args: object) -> dict:
    result = await client.call_tool(tool, {"lang": "en", **args})
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def listed(client: Client) -> set[str]:
    found = await call(client, "find", pattern="**/*")
    grep = await call(client, "grep", pattern="quince")
    search = await call(client, "search", query="quince", limit=100)
    assert not found["truncated"] and not grep["truncated"]
    return (
        set(found["paths"])
        | {m["path"] for m in grep["matches"]}
        | {r["path"] for r in search["results"]}
    )


async def test_every_listed_path_works_in_every_tool(
    ws: Workspace, live: tuple[Core, Client], caplog: pytest.LogCaptureFixture
) -> None:
    _, client = live
    paths = await listed(client)
    assert paths == {"good.md", NFC_NAME, "résumé/inside.md"}
    for path in sorted(paths):
        read = await call(client, "read", path=path)
        assert "quince" in read["content"]
        assert (await call(client, "stat", path=path))["exists"]
        await call(client, "append", path=path, content="appended\n")
        again = await call(client, "read", path=path)
        await call(client, "write", path=path, content=again["content"], if_match=again["etag"])
        assert (await call(client, "delete", path=path))["deleted"]
        assert not (await call(client, "stat", path=path))["exists"]


async def test_each_skipped_name_is_warned_about_once(
    ws: Workspace, live: tuple[Core, Client], caplog: pytest.LogCaptureFixture
) -> None:
    _, client = live
    with caplog.at_level(logging.WARNING, logger="indexer.vault"):
        await listed(client)
        await listed(client)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("skipped ")]
    assert len(lines) == len(set(lines))
    assert all("\n" not in line for line in lines)


async def test_an_nfd_note_is_changed_in_place_never_doubled(ws: Workspace) -> None:
    root = vault_bytes(ws)
    put(root + b"/" + os.fsencode(NFD_NAME), "# Café\nquince nfd\n")
    put(root + b"/" + os.fsencode(unicodedata.normalize("NFD", "résumé/inside.md")), "# in\n")
    async with serving(ws) as (_, client):
        assert NFC_NAME in (await call(client, "find"))["paths"]
        await nfd_changes(ws, client)


async def nfd_changes(ws: Workspace, client: Client) -> None:
    folder = ws.vault_dir("en")
    nfc_path = os.path.join(folder, NFC_NAME)
    nfd_path = os.path.join(folder, NFD_NAME)
    await call(client, "append", path=NFC_NAME, content="more\n")
    await call(client, "append", path=NFD_NAME, content="again\n")
    assert not os.path.exists(nfc_path) or os.path.samefile(nfc_path, nfd_path)
    assert sorted(os.listdir(folder)).count(NFD_NAME) == 1
    assert NFC_NAME not in os.listdir(folder)
    with open(nfd_path, encoding="utf-8") as f:
        assert f.read().endswith("quince nfd\nmore\nagain\n")
    read = await call(client, "read", path=NFC_NAME)
    await call(client, "write", path=NFC_NAME, content="# Café\nrewritten\n", if_match=read["etag"])
    assert NFC_NAME not in os.listdir(folder) and NFD_NAME in os.listdir(folder)
    await call(client, "write", path="résumé/new.md", content="# new\n")
    assert sorted(os.listdir(folder)).count(unicodedata.normalize("NFD", "résumé")) == 1
    assert "résumé" not in os.listdir(folder)
    assert (await call(client, "delete", path=NFC_NAME))["deleted"]
    assert NFD_NAME not in os.listdir(folder)


PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000")


async def test_the_images_of_an_nfd_note_follow_its_move_and_go_with_its_delete(
    ws: Workspace,
) -> None:
    """A note saved in NFD (a Mac's spelling) whose images the tools put in an NFC
    ``café.md.assets/``: the folder was left behind by a move and a delete (the code
    looked for the note's own spelling plus ``.assets``)."""
    folder = ws.vault_dir("en")
    put(vault_bytes(ws) + b"/" + os.fsencode(NFD_NAME), "# Café\n")
    image = {"content": base64.b64encode(PNG).decode(), "encoding": "base64"}
    async with serving(ws) as (_, client):
        await call(client, "write", path=NFC_NAME + ".assets/cup.png", **image)
        note = "# Café\n![cup](café.md.assets/cup.png)\n"
        await call(client, "write", path=NFC_NAME, content=note)
        assert NFC_NAME + ".assets" in os.listdir(folder)  # made by the tools, in NFC
        await call(client, "move", path=NFC_NAME, new_path="moved/tea.md")
        assert [n for n in os.listdir(folder) if not n.startswith(".")] == ["moved"]
        assert sorted(os.listdir(folder / "moved")) == ["tea.md", "tea.md.assets"]
        assert (folder / "moved/tea.md.assets/cup.png").read_bytes() == PNG
        moved = (await call(client, "read", path="moved/tea.md"))["content"]
        assert "](tea.md.assets/cup.png)" in moved
        await call(client, "move", path="moved/tea.md", new_path=NFC_NAME)
        os.rename(folder / NFC_NAME, os.path.join(folder, NFD_NAME))  # a Mac's sync again
        assert (await call(client, "delete", path=NFC_NAME))["deleted"]
        assert [n for n in os.listdir(folder) if n.startswith("caf")] == []
        versions = await call(client, "history", path=NFC_NAME + ".assets/cup.png")
        assert versions["versions"][0]["op"] == "delete" and versions["versions"][0]["etag"] is None


async def test_an_exact_nfc_name_wins_over_its_nfd_twin(ws: Workspace) -> None:
    root = vault_bytes(ws)
    put(root + b"/" + os.fsencode(NFD_NAME), "decomposed\n")
    put(root + b"/" + os.fsencode(NFC_NAME), "composed\n")
    core = core_for(ws)
    try:
        async with Client(create_server(core)) as client:
            assert (await call(client, "find"))["paths"] == [NFC_NAME]
            assert (await call(client, "read", path=NFD_NAME))["content"] == "composed\n"
    finally:
        assert core.index is not None
        core.index.close()


async def test_a_delete_or_move_that_would_hand_the_name_to_a_twin_is_refused(
    ws: Workspace,
) -> None:
    """Both spellings of ``café.md`` on disk: a ``delete`` of either removed the NFC one
    and answered ``deleted: true``; ``stat`` then found the NFD twin under that name,
    with a text history had no version of (likewise a move, and a folder's twin). Now
    those are refused with ``conflict`` and change nothing; a write, an append or a read
    acts on the file the tools list (the NFC one), as before."""
    root = vault_bytes(ws)
    put(root + b"/" + os.fsencode(NFD_NAME), "decomposed\n")
    put(root + b"/" + os.fsencode(NFC_NAME), "composed\n")
    for form in ("NFC", "NFD"):
        put(root + b"/" + os.fsencode(unicodedata.normalize(form, "résumé/n.md")), f"{form}\n")
    folder = os.fsdecode(root)
    before = sorted(os.listdir(folder))
    async with serving(ws) as (_, client):
        for spelling in (NFC_NAME, NFD_NAME):
            for tool, args in (("delete", {}), ("move", {"new_path": "other.md"})):
                with pytest.raises(ToolError, match=r"^conflict: two entries"):
                    await call(client, tool, path=spelling, **args)
        for tool, args in (("delete", {}), ("move", {"new_path": "elsewhere"})):
            with pytest.raises(ToolError, match=r"^conflict: two entries"):
                await call(client, tool, path=unicodedata.normalize("NFD", "résumé"), **args)
        assert sorted(os.listdir(folder)) == before
        await call(client, "append", path=NFD_NAME, content="more\n")
        assert (await call(client, "read", path=NFC_NAME))["content"] == "composed\nmore\n"
        with open(os.path.join(folder, NFD_NAME), encoding="utf-8") as twin:
            assert twin.read() == "decomposed\n"
        versions = (await call(client, "history", path=NFC_NAME))["versions"]
        assert [v["op"] for v in versions] == ["append", "baseline"]


async def test_a_file_that_is_not_utf8_does_not_stop_the_watcher(ws: Workspace) -> None:
    root = vault_bytes(ws)
    put(root + b"/start.md", "# start\n")
    async with serving(ws) as (_, client):
        put(root + b"/later\xff.md", "# later\nmedlar\n")
        put(root + b"/later-good.md", "# later\nmedlar good\n")
        await until_found(client)


async def until_found(client: Client) -> None:

    async def found() -> list[str]:
        return [r["path"] for r in (await call(client, "search", query="medlar"))["results"]]

    deadline = time.monotonic() + 10
    while await found() != ["later-good.md"]:
        assert time.monotonic() < deadline, "the good note beside a non-UTF-8 one is not indexed"
        await asyncio.sleep(0.05)


def test_reindex_skips_bad_names_and_keeps_the_rest(ws: Workspace) -> None:
    plant_hostile(ws)
    done = subprocess.run(
        [sys.executable, "-m", "indexer", "reindex", "--workspace", str(ws.root)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "indexed 3 notes" in done.stdout
    assert "skipped bad\\xff\\xfe.md: the name is not valid UTF-8" in done.stderr
    # Each name's own line: the log's repeat limit kept five of them, and marked the
    # rest as warned about.
    warned = [line for line in done.stderr.splitlines() if line.startswith("skipped ")]
    assert len(warned) == len(HOSTILE_NAMES) + 1, done.stderr  # (+ the deep folder)
