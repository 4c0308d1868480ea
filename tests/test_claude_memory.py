"""VaultMemoryTool against a real ``indexer serve``: what the differential suite cannot
show. The vault's extra refusals and the sandbox's hostile paths below ``/memories``,
frontmatter hidden and kept, two backends editing one file, an offline indexer, the
history of a memory file, sync and async from inside an event loop, the README's
tool-use loop replayed from recorded API answers, and a package without the extra."""

from __future__ import annotations

import asyncio
import base64
import itertools
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import fastmcp
import pytest
from anthropic.lib.tools import ToolError
from anthropic.tools import BetaLocalFilesystemMemoryTool
from helpers.anthropic_stub import assistant, recorded_api, tool_use
from helpers.hostile_paths import HOSTILE, lay_traps
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir
from helpers.memory_tool import outcome
from helpers.snapshots import snapshot

from agent_client import AsyncVaultMemoryTool, ClientSettings, VaultMemoryTool
from shared.frontmatter import parse_frontmatter

README = Path(__file__).resolve().parent.parent / "README.md"
NO_MOVE = "the server has no move tool yet"
NO_HISTORY = "the server has no history tool yet"
_folders = itertools.count()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    """This module's indexer, without folder summaries: a summary written into a memory
    folder mid-sequence would change the folders these tests compare byte for byte."""
    running = start_indexer(
        tmp_path_factory.mktemp("module") / "ws", env={"INDEXER_SUMMARIES": "0"}
    )
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def offered(server: RunningIndexer) -> frozenset[str]:
    return frozenset(asyncio.run(_tool_names(server)))


async def _tool_names(server: RunningIndexer) -> set[str]:
    async with fastmcp.Client(server.url) as client:
        return {tool.name for tool in await client.list_tools()}


async def _call(server: RunningIndexer, tool: str, **args: Any) -> dict[str, Any]:
    async with fastmcp.Client(server.url) as client:
        result = await client.call_tool(tool, args)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def call(server: RunningIndexer, tool: str, **args: Any) -> dict[str, Any]:
    return asyncio.run(_call(server, tool, **args))


@pytest.fixture
def memory(server: RunningIndexer) -> Iterator[VaultMemoryTool]:
    """A tool on a fresh folder of the module's vault."""
    folder = f"m{next(_folders):03d}"
    tool = VaultMemoryTool("en", folder=folder, settings=ClientSettings(server.workspace))
    yield tool
    tool.close()


def ok(tool: Any, **inp: Any) -> str:
    text, is_error = outcome(tool, inp)
    assert not is_error, text
    return str(text)


def refused(tool: Any, **inp: Any) -> str:
    text, is_error = outcome(tool, inp)
    assert is_error, text
    return str(text)


# -- the vault's own refusals --------------------------------------------------------------

VAULT_REFUSES = [
    "/memories/.secret.txt",
    "/memories/.git/config.txt",
    "/memories/notes/.obsidian/x.md",
    "/memories/a\tb.txt",
    "/memories/a\x1bb.txt",
    "/memories/a\u202eb.txt",
    "/memories/a\u200bb.txt",
    "/memories/a:b.txt",
    "/memories/a|b.txt",
    "/memories/a?b.txt",
    '/memories/a"b.txt',
    "/memories/a\\b.txt",
    "/memories/CON.txt",
    "/memories/lpt1/x.txt",
    "/memories/a.txt ",
    "/memories/dot./x.txt",
    "/memories/%2e%2e/x.txt",
    "/memories/\uff0e\uff0e/x.txt",
    "/memories/" + "d/" * 40 + "x.txt",
]


@pytest.mark.parametrize("path", VAULT_REFUSES)
def test_names_the_vault_never_stores_are_refused_with_a_code(
    server: RunningIndexer, memory: VaultMemoryTool, path: str
) -> None:
    """Paths the SDK takes but the vault refuses: every command says ``forbidden_path``
    with the path as sent, and nothing changes anywhere."""
    ok(memory, command="create", path="/memories/keep.txt", file_text="kept\n")
    before = snapshot(vault_dir(server, "en"))
    for inp in (
        {"command": "view", "path": path},
        {"command": "create", "path": path, "file_text": "x"},
        {"command": "str_replace", "path": path, "old_str": "a", "new_str": "b"},
        {"command": "insert", "path": path, "insert_line": 0, "insert_text": "x"},
        {"command": "delete", "path": path},
        {"command": "rename", "old_path": "/memories/keep.txt", "new_path": path},
        {"command": "rename", "old_path": path, "new_path": "/memories/new.txt"},
    ):
        text = refused(memory, **inp)
        assert text.startswith(f"forbidden_path: {path}: "), (inp, text)
    assert snapshot(vault_dir(server, "en")) == before


def test_other_file_types_are_refused_by_create(
    server: RunningIndexer, memory: VaultMemoryTool
) -> None:
    before = snapshot(vault_dir(server, "en"))
    for name in ("script.py", "page.html", "no-suffix", "notes.TXT", "x.yml"):
        text = refused(memory, command="create", path=f"/memories/sub/{name}", file_text="x")
        assert text.startswith(f"forbidden_path: /memories/sub/{name}: only .md notes and text")
    assert snapshot(vault_dir(server, "en")) == before
    # a rename to such a name says the same (not "must keep its kind")
    ok(memory, command="create", path="/memories/a.txt", file_text="A\n")
    before = snapshot(vault_dir(server, "en"))
    for name in ("no-suffix", "notes.TXT", "x.yml"):
        new = f"/memories/{name}"
        text = refused(memory, command="rename", old_path="/memories/a.txt", new_path=new)
        assert text.startswith(f"forbidden_path: /memories/a.txt -> {new}: {new}: only .md notes")
    assert snapshot(vault_dir(server, "en")) == before
    ok(memory, command="delete", path="/memories/a.txt")
    # read and listed, though: a person may have put one there
    folder = vault_dir(server, "en") / memory.folder
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "script.py").write_text("print(1)\n")
    (folder / "code").mkdir()
    (folder / "code" / "notes.txt").write_text("n")
    (folder / "code" / "tool.sh").write_text("ls\n")
    view = ok(memory, command="view", path="/memories/script.py")
    assert view.endswith("     1\tprint(1)\n     2\t")
    assert "9B\t/memories/script.py" in ok(memory, command="view", path="/memories")
    # a folder holding such a file is not deleted at all (the SDK would delete it)
    before = snapshot(vault_dir(server, "en"))
    text = refused(memory, command="delete", path="/memories/code")
    assert text.startswith("forbidden_path: /memories/code holds files the vault does not delete")
    assert snapshot(vault_dir(server, "en")) == before


def test_documented_differences_of_names_and_folders(
    server: RunningIndexer, memory: VaultMemoryTool
) -> None:
    """Names are stored in NFC (two spellings of é are one file); a folder holding a
    file no tool can reach (hidden, a name the vault refuses, too deep: made by another
    program) is refused before anything in it is deleted, as the README says; Finder's
    ``.DS_Store`` goes with its folder."""
    ok(memory, command="create", path="/memories/cafe\u0301.txt", file_text="one")
    text = refused(memory, command="create", path="/memories/caf\u00e9.txt", file_text="two")
    assert text == "File /memories/caf\u00e9.txt already exists"
    assert ok(memory, command="view", path="/memories").endswith("3B\t/memories/caf\u00e9.txt")
    root = vault_dir(server, "en") / memory.folder
    deep = "/".join(f"d{i}" for i in range(33))
    unreachable = {
        "hidden": "e/.hidden.txt",
        "icon": "Icon\r",  # macOS's custom folder icon
        "colon": "ratio 3:2.txt",
        "device": "e/CON.txt",
        "space": "x.txt ",
        "deep": f"{deep}/leaf.txt",
    }
    for folder, name in unreachable.items():
        for i in range(3):
            ok(memory, command="create", path=f"/memories/{folder}/e/keep{i}.md", file_text="k")
        (root / folder / name).parent.mkdir(parents=True, exist_ok=True)
        (root / folder / name).write_bytes(b"another program's\n")
    before = snapshot(vault_dir(server, "en"))
    for folder, name in unreachable.items():
        text = refused(memory, command="delete", path=f"/memories/{folder}")
        assert text.startswith(
            f"forbidden_path: /memories/{folder} holds 1 file(s) or folder(s) no tool can reach"
        ), text
        shown = name.replace("\r", "\\u000d")
        assert f"'{shown}'" in text or f"'{deep[:40]}" in text, text
        assert "were deleted" not in text
    assert snapshot(vault_dir(server, "en")) == before  # nothing deleted
    # what Finder leaves in every folder it shows goes with the folder
    ok(memory, command="create", path="/memories/seen/in/finder.md", file_text="f")
    for folder in (root / "seen", root / "seen" / "in"):
        (folder / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    assert (
        ok(memory, command="delete", path="/memories/seen") == "Successfully deleted /memories/seen"
    )
    assert not (root / "seen").exists()
    # emptying the memory folder takes what the vault shows and leaves the rest
    text = memory.clear_all_memory()
    assert text.startswith("Memory cleared, except 6 file(s) or folder(s) no tool can"), text
    assert "'/memories/colon/ratio 3:2.txt'" in text, text
    left = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    assert left == sorted(f"{folder}/{name}" for folder, name in unreachable.items())


# -- the sandbox's hostile paths, below /memories ----------------------------------------------

SECRETS = ("outside secret", "sibling secret", "other lang secret")
CODED = ("forbidden_path: ", "invalid_argument: ", "not_found: ", "unsupported: ")
SDK_TEXTS = (
    "Path ",
    "The path ",
    "File ",
    "Cannot ",
    "The destination ",
    "No replacement",
    "Invalid `insert_line`",
    "NotADirectoryError(20, 'Not a directory')",
    "OSError(22, 'Invalid argument')",
    "OSError(36, 'File name too long')",
    "ValueError('embedded null byte')",
)


def test_hostile_paths_never_reach_outside_the_memory_folder(
    server: RunningIndexer, tmp_path: Path
) -> None:
    """Each path of the sandbox's hostile table, put below ``/memories`` (where traps are
    laid: links out, to a sibling folder sharing the prefix, loops, a FIFO), through
    every command: nothing outside the memory folder changes, no secret is read, and
    every refusal is the SDK's own text or a coded vault refusal."""
    lang = "en-trap"
    vault = vault_dir(server, lang)
    folder = vault / "memories"
    folder.mkdir(parents=True)
    (vault / "memories2").mkdir()
    (vault / "memories2" / "secret.md").write_text("sibling secret\n")
    (vault / "items").mkdir()
    (vault / "items" / "a.md").write_text("---\ntitle: A\n---\nother lang secret\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("outside secret\n")
    lay_traps(folder, outside, vault / "memories2")
    (folder / "items" / "a.md").write_text("# a\nalpha\n")

    def elsewhere() -> dict[str, tuple]:
        found = {**snapshot(vault), **snapshot(outside)}
        mine = str(folder)
        return {k: v for k, v in found.items() if k != mine and not k.startswith(mine + "/")}

    before = elsewhere()
    tool = VaultMemoryTool(lang, settings=ClientSettings(server.workspace))
    try:
        for _, hostile, _ in HOSTILE:
            path = f"/memories/{hostile}"
            for inp in (
                {"command": "view", "path": path},
                {"command": "view", "path": path + "/"},
                {"command": "create", "path": path, "file_text": "pwned"},
                {"command": "str_replace", "path": path, "old_str": "secret", "new_str": "x"},
                {"command": "insert", "path": path, "insert_line": 0, "insert_text": "pwned"},
                {"command": "rename", "old_path": path, "new_path": "/memories/stolen.md"},
                {"command": "rename", "old_path": "/memories/items/a.md", "new_path": path},
                {"command": "delete", "path": path},
            ):
                text, is_error = outcome(tool, inp)
                assert not any(secret in str(text) for secret in SECRETS), (inp, text)
                if is_error:
                    assert str(text).startswith(CODED + SDK_TEXTS), (inp, text)
    finally:
        tool.close()
    assert elsewhere() == before
    assert str(vault / "memories2" / "secret.md") in before
    assert (outside / "secret.md").read_text() == "outside secret\n"


# -- notes: frontmatter hidden and kept --------------------------------------------------------


def test_note_frontmatter_is_hidden_from_the_model_and_kept_on_edits(
    server: RunningIndexer, memory: VaultMemoryTool
) -> None:
    note = vault_dir(server, "en") / memory.folder / "prefs.md"
    ok(memory, command="create", path="/memories/prefs.md", file_text="# Prefs\n- tea")
    meta, body = parse_frontmatter(note.read_text())
    assert (
        meta["title"] == "Prefs" and meta["trailing_newlines"] == 0 and body == "# Prefs\n- tea\n"
    )
    assert {"id", "created", "updated"} <= set(meta)
    assert ok(memory, command="view", path="/memories/prefs.md") == (
        "Here's the content of /memories/prefs.md with line numbers:\n"
        "     1\t# Prefs\n     2\t- tea"
    )
    # A person adds tags and keys of their own (a date among them) in an editor.
    text = note.read_text().replace(
        "title: Prefs\n", "title: Prefs\ntags: [drinks]\nmood: calm\ndue: 2024-05-01\n"
    )
    note.write_text(text)
    answer = ok(
        memory,
        command="str_replace",
        path="/memories/prefs.md",
        old_str="tea",
        new_str="tea\n- oat milk",
    )
    assert answer.endswith("     1\t# Prefs\n     2\t- tea\n     3\t- oat milk")
    ok(memory, command="insert", path="/memories/prefs.md", insert_line=1, insert_text="## Drinks")
    after, body = parse_frontmatter(note.read_text())
    assert (after["id"], after["created"]) == (meta["id"], meta["created"])
    assert after["tags"] == ["drinks"] and after["mood"] == "calm"
    assert after["due"] == date(2024, 5, 1)  # a date still, not the text '2024-05-01'
    assert "trailing_newlines" not in after  # insert ends the text with a newline
    assert body == "# Prefs\n## Drinks\n- tea\n- oat milk\n"
    assert ok(memory, command="view", path="/memories/prefs.md", view_range=[2, 2]).endswith(
        "\n     2\t## Drinks"
    )
    size = len(body.encode())
    assert f"{size}B\t/memories/prefs.md" in ok(memory, command="view", path="/memories")
    # the model's memory is searchable like any note (and text files too)
    ok(memory, command="create", path="/memories/facts.json", file_text='{"city": "Reykjavik"}')
    hits = call(server, "search", lang="en", query="oat milk", path=memory.folder)
    assert [h["path"] for h in hits["results"]] == [f"{memory.folder}/prefs.md"]
    hits = call(server, "search", lang="en", query="Reykjavik", path=memory.folder)
    assert [(h["path"], h["title"]) for h in hits["results"]] == [
        (f"{memory.folder}/facts.json", "facts.json")
    ]


def test_a_note_whose_block_cannot_be_read_is_shown_whole_and_not_edited(
    server: RunningIndexer, memory: VaultMemoryTool
) -> None:
    """A repeated key made the block unreadable: the model saw the whole file and an
    edit wrote a second block on top (the old one, tags and all, became body text)."""
    note = vault_dir(server, "en") / memory.folder / "prefs.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    broken = "---\nid: KEEP\ntitle: Prefs\ntags: [a]\ntags: [b]\n---\n# Prefs\n- tea\n"
    note.write_text(broken)
    assert "     5\ttags: [b]" in ok(memory, command="view", path="/memories/prefs.md")
    for edit in (
        {"command": "str_replace", "old_str": "- tea", "new_str": "- tea\n- oat milk"},
        {"command": "insert", "insert_line": 1, "insert_text": "## Drinks"},
    ):
        said = refused(memory, path="/memories/prefs.md", **edit)
        assert "frontmatter block cannot be read" in said and "'tags'" in said, said
    assert note.read_text() == broken


def test_carriage_returns_in_a_note_become_line_feeds(memory: VaultMemoryTool) -> None:
    """Documented: the vault stores notes with LF; a .txt keeps its CRs."""
    ok(memory, command="create", path="/memories/n.md", file_text="a\r\nb\rc")
    ok(memory, command="create", path="/memories/n.txt", file_text="a\r\nb\rc")
    assert ok(memory, command="view", path="/memories/n.md").endswith(
        "     1\ta\n     2\tb\n     3\tc"
    )
    assert ok(memory, command="view", path="/memories/n.txt").endswith("     1\ta\r\n     2\tb\rc")


def test_create_without_text_answers_as_the_sdk_and_leaves_nothing(
    server: RunningIndexer, memory: VaultMemoryTool, tmp_path: Path
) -> None:
    sdk = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path))
    for inp in (
        {"command": "create", "path": "/memories/v.txt"},
        {"command": "create", "path": "/memories/w.txt", "file_text": "\ud800"},
    ):
        assert outcome(memory, inp) == outcome(sdk, inp)
    for inp in (
        {"command": "create", "path": "/memories/x.txt", "file_text": "x"},
        {"command": "str_replace", "path": "/memories/x.txt", "old_str": "x", "new_str": "\udc80"},
        {"command": "insert", "path": "/memories/x.txt", "insert_line": 0, "insert_text": "\ud800"},
        {"command": "view", "path": "/memories/x.txt"},
    ):
        assert outcome(memory, inp) == outcome(sdk, inp)
    assert (tmp_path / "memories" / "v.txt").read_text() == ""  # the SDK's leftovers
    assert (tmp_path / "memories" / "w.txt").read_text() == ""
    assert sorted(p.name for p in (vault_dir(server, "en") / memory.folder).iterdir()) == ["x.txt"]
    # a path UTF-8 cannot hold: the SDK's error names its own folder; ours is a refusal
    text = refused(memory, command="view", path="/memories/\ud800.md")
    assert (
        text
        == "forbidden_path: /memories/\ufffd.md: the path is not valid UTF-8 (a lone surrogate)"
    )


# -- concurrency ----------------------------------------------------------------------------


def test_two_backends_editing_one_file_lose_no_edit(server: RunningIndexer) -> None:
    """Two tools (two sessions) on one folder replace different lines of one note at
    the same time: every edit reported done is in the file, and none is lost."""
    settings = ClientSettings(server.workspace)
    first = VaultMemoryTool("en", folder="m-race", settings=settings)
    second = VaultMemoryTool("en", folder="m-race", settings=settings)
    slots = [f"slot-{i:02d}" for i in range(24)]
    ok(first, command="create", path="/memories/shared.md", file_text="\n".join(slots) + "\n")
    done: list[str] = []
    errors: list[str] = []

    def edit(tool: VaultMemoryTool, mine: list[str], who: str) -> None:
        for slot in mine:
            text, is_error = outcome(
                tool,
                {
                    "command": "str_replace",
                    "path": "/memories/shared.md",
                    "old_str": slot,
                    "new_str": f"{who}-{slot}",
                },
            )
            (errors if is_error else done).append(str(text) if is_error else f"{who}-{slot}")

    threads = [
        threading.Thread(target=edit, args=(first, slots[0::2], "A")),
        threading.Thread(target=edit, args=(second, slots[1::2], "B")),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    try:
        final = ok(first, command="view", path="/memories/shared.md")
        assert all(f"\t{edited}\n" in final + "\n" for edited in done), final
        assert all(error.startswith("conflict: ") for error in errors), errors
        assert len(done) + len(errors) == len(slots) and len(done) >= len(slots) - 2, errors
    finally:
        first.close()
        second.close()


# -- an offline indexer ------------------------------------------------------------------------


def test_offline_indexer_is_a_clear_error_and_nothing_is_lost(
    indexer_server: RunningIndexer,
) -> None:
    workspace = indexer_server.workspace
    tool = VaultMemoryTool("en", settings=ClientSettings(workspace, connect_timeout=1.0))
    try:
        ok(tool, command="create", path="/memories/keep.md", file_text="# Keep\nme\n")
        ok(tool, command="create", path="/memories/d/x.txt", file_text="x")
        folder = workspace / "memory" / "languages" / "en" / "vault"
        indexer_server.stop()
        before = snapshot(folder)
        for inp in (
            {"command": "view", "path": "/memories"},
            {"command": "view", "path": "/memories/keep.md"},
            {"command": "create", "path": "/memories/new.md", "file_text": "x"},
            {
                "command": "str_replace",
                "path": "/memories/keep.md",
                "old_str": "me",
                "new_str": "you",
            },
            {
                "command": "insert",
                "path": "/memories/keep.md",
                "insert_line": 0,
                "insert_text": "x",
            },
            {"command": "delete", "path": "/memories/d"},
            {"command": "rename", "old_path": "/memories/keep.md", "new_path": "/memories/k.md"},
        ):
            text = refused(tool, **inp)
            assert text.startswith(
                "indexer_offline: the memory store (the vault indexer) is offline; "
                "nothing was changed. Try again later."
            ), text
            assert str(workspace) not in text  # the model is told no host path
        assert refused(tool, command="view", path="/tmp").startswith("Path must start with")
        assert snapshot(folder) == before
        restarted = start_indexer(workspace)
        try:
            assert ok(tool, command="view", path="/memories/keep.md").endswith(
                "     2\tme\n     3\t"
            )
            ok(tool, command="str_replace", path="/memories/keep.md", old_str="me", new_str="you")
        finally:
            restarted.stop()
    finally:
        tool.close()


# -- history -----------------------------------------------------------------------------------


def test_each_command_is_a_version_in_the_history(
    server: RunningIndexer, offered: frozenset[str], memory: VaultMemoryTool
) -> None:
    if "history" not in offered:
        pytest.skip(NO_HISTORY)
    path = f"{memory.folder}/log.md"
    etags = []
    for inp in (
        {"command": "create", "path": "/memories/log.md", "file_text": "one\n"},
        {"command": "str_replace", "path": "/memories/log.md", "old_str": "one", "new_str": "two"},
        {"command": "insert", "path": "/memories/log.md", "insert_line": 1, "insert_text": "three"},
        {
            "command": "str_replace",
            "path": "/memories/log.md",
            "old_str": "three",
            "new_str": "four",
        },
    ):
        ok(memory, **inp)
        etags.append(call(server, "stat", lang="en", path=path)["etag"])
    versions = call(server, "history", lang="en", path=path)["versions"]
    seen = [v["etag"] for v in versions]  # newest first
    positions = [seen.index(etag) for etag in etags]
    assert positions == sorted(positions, reverse=True), (etags, seen)
    reasons = [versions[p]["reason"] for p in positions]  # each says which command made it
    assert reasons == [
        f"memory_tool:{c}" for c in ("create", "str_replace", "insert", "str_replace")
    ]
    ok(memory, command="rename", old_path="/memories/log.md", new_path="/memories/log2.md")
    ok(memory, command="delete", path="/memories/log2.md")
    newest = call(server, "history", lang="en", path=f"{memory.folder}/log2.md")["versions"]
    assert [v["reason"] for v in newest[:2]] == ["memory_tool:delete", "memory_tool:rename"]


def test_rename_onto_a_name_whose_images_folder_exists_says_so(
    memory: VaultMemoryTool, server: RunningIndexer
) -> None:
    """``b.md`` is free but ``b.md.assets/`` is taken: the answer said "The destination
    /memories/b.md already exists", which is not true."""
    ok(memory, command="create", path="/memories/a.md", file_text="a\n")
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(64))).decode()
    for image in ("a.md.assets/one.png", "b.md.assets/two.png"):
        path = f"{memory.folder}/{image}"
        call(server, "write", lang="en", path=path, content=png, encoding="base64")
    text = refused(memory, command="rename", old_path="/memories/a.md", new_path="/memories/b.md")
    assert text.startswith("conflict: /memories/a.md -> /memories/b.md: "), text
    assert "/memories/b.md.assets already exists" in text and "destination" not in text
    ok(memory, command="create", path="/memories/b.md", file_text="b\n")
    text = refused(memory, command="rename", old_path="/memories/a.md", new_path="/memories/b.md")
    assert text == "The destination /memories/b.md already exists"


def test_rename_takes_the_links_to_the_file_along(memory: VaultMemoryTool) -> None:
    """Unlike the SDK's tool (README: the differences), a ``rename`` is the vault's
    ``move``: links to the file in other notes follow it, and a note moved to another
    folder keeps its relative links working; ``view`` shows the text as it now is."""
    ok(memory, command="create", path="/memories/a.md", file_text="See [b](b.md) and [[b]].\n")
    ok(memory, command="create", path="/memories/b.md", file_text="B, linking [a](a.md).\n")
    ok(memory, command="rename", old_path="/memories/b.md", new_path="/memories/c.md")
    assert "See [b](c.md) and [[c]]." in ok(memory, command="view", path="/memories/a.md")
    ok(memory, command="rename", old_path="/memories/c.md", new_path="/memories/sub/c.md")
    assert "B, linking [a](../a.md)." in ok(memory, command="view", path="/memories/sub/c.md")
    assert "[b](sub/c.md)" in ok(memory, command="view", path="/memories/a.md")
    text = refused(
        memory, command="str_replace", path="/memories/a.md", old_str="[b](b.md)", new_str="b"
    )
    assert "did not appear verbatim" in text


def test_text_files_inside_an_images_folder_are_refused(
    memory: VaultMemoryTool, server: RunningIndexer
) -> None:
    """They were written and listed but never searched (the index skips *.assets/)."""
    ok(memory, command="create", path="/memories/n.md", file_text="wombat memory\n")
    before = snapshot(vault_dir(server, "en"))
    for command in (
        {"command": "create", "path": "/memories/b.md.assets/inner.md", "file_text": "x"},
        {"command": "create", "path": "/memories/b.md.assets/inner.txt", "file_text": "x"},
        {
            "command": "rename",
            "old_path": "/memories/n.md",
            "new_path": "/memories/p.md.assets/n.md",
        },
    ):
        text = refused(memory, **command)
        assert "a *.assets/ folder holds a note's images only" in text, text
    assert snapshot(vault_dir(server, "en")) == before


@pytest.mark.parametrize(
    "folder",
    [
        *("..", "a/../b", ".hidden", "notes/.git", "memories.assets", "a\\b", "/".join("d" * 32)),
        *("a:b", "a?b", "CON", "con/x", "x.", "%2e%2e", "zw\u200bsp", "\u202emem", "\u2800"),
        *("~", "~mem", "~/mem", "./~x"),
        "d" * 256,
    ],
)
def test_a_folder_the_vault_refuses_is_refused_at_once(folder: str, tmp_path: Path) -> None:
    """Every command failed with forbidden_path, or answered an empty listing (a folder
    too deep for a file): said when the tool is made."""
    with pytest.raises(ValueError, match="memory folder"):
        VaultMemoryTool("en", folder=folder, settings=ClientSettings(tmp_path))
    assert VaultMemoryTool("en", folder="/".join("d" * 31), settings=ClientSettings(tmp_path))


def test_a_folder_named_like_a_word_is_not_replaced_in_prose(server: RunningIndexer) -> None:
    """With folder "notes", "only .md notes and text files" read "only .md /memories and
    text files": the folder is the model's /memories where it is a path only."""
    tool = VaultMemoryTool("en", folder="notes", settings=ClientSettings(server.workspace))
    text = refused(tool, command="create", path="/memories/x.exe", file_text="x")
    assert "only .md notes and text files" in text and "/memories and" not in text, text
    ok(tool, command="create", path="/memories/a.md", file_text="a\n")
    text = refused(tool, command="rename", old_path="/memories/a.md", new_path="/memories/b.exe")
    assert "notes/" not in text, text


def test_a_folder_in_nfd_is_the_vaults_nfc_folder(server: RunningIndexer) -> None:
    """A folder (or a subfolder the model names) in decomposed Unicode, as macOS writes
    names: view cut one character too many ('/memories/.md: hidden files ...')."""
    settings = ClientSettings(server.workspace)
    tool = VaultMemoryTool("en", folder="me\u0301mo-nfd", settings=settings)
    ok(tool, command="create", path="/memories/cafe\u0301/x.md", file_text="x\n")
    for path in ("/memories", "/memories/cafe\u0301", "/memories/caf\u00e9"):
        assert "x.md" in ok(tool, command="view", path=path), path


def test_rename_says_when_the_server_cannot_move(
    server: RunningIndexer, offered: frozenset[str], memory: VaultMemoryTool
) -> None:
    ok(memory, command="create", path="/memories/a.txt", file_text="a")
    rename = {"command": "rename", "old_path": "/memories/a.txt", "new_path": "/memories/b/a.txt"}
    if "move" in offered:
        assert ok(memory, **rename) == "Successfully renamed /memories/a.txt to /memories/b/a.txt"
    else:
        before = snapshot(vault_dir(server, "en"))
        text = refused(memory, **rename)
        assert text.startswith("unsupported: this indexer has no `move` tool yet"), text
        assert snapshot(vault_dir(server, "en")) == before


# -- sync and async ----------------------------------------------------------------------------

SEQUENCE = [
    {"command": "create", "path": "/memories/a.md", "file_text": "alpha\nbeta"},
    {"command": "str_replace", "path": "/memories/a.md", "old_str": "beta", "new_str": "gamma"},
    {"command": "insert", "path": "/memories/a.md", "insert_line": 0, "insert_text": "top"},
    {"command": "view", "path": "/memories"},
    {"command": "view", "path": "/memories/a.md", "view_range": [2, -1]},
    {"command": "delete", "path": "/memories/missing"},
]


async def test_sync_and_async_tools_answer_alike_inside_an_event_loop(
    server: RunningIndexer,
) -> None:
    """The sync tool called from a coroutine (its own loop thread: no deadlock) and the
    async tool awaited on this loop give the same answers."""
    settings = ClientSettings(server.workspace)
    sync_tool = VaultMemoryTool("en", folder="m-sync", settings=settings)
    async with AsyncVaultMemoryTool("en", folder="m-async", settings=settings) as async_tool:
        for inp in SEQUENCE:
            expected = outcome(sync_tool, inp)
            try:
                got = await async_tool.call(inp), False
            except ToolError as err:
                got = err.content, True
            assert got == expected
    sync_tool.close()
    assert outcome(sync_tool, SEQUENCE[3])[0].startswith("Here're")  # reopens after close


def test_async_tool_works_across_event_loops(server: RunningIndexer) -> None:
    """A new event loop (``asyncio.run`` again) gets a new session."""
    tool = AsyncVaultMemoryTool("en", folder="m-loops", settings=ClientSettings(server.workspace))

    async def run(inp: dict[str, Any]) -> Any:
        async with tool:
            return await tool.call(inp)

    assert asyncio.run(run(SEQUENCE[0])) == "File created successfully at: /memories/a.md"
    assert asyncio.run(run(SEQUENCE[1])).startswith("The memory file has been edited.")


# -- the README's tool-use loop ------------------------------------------------------------------


def readme_example() -> str:
    section = README.read_text(encoding="utf-8").split("## Claude's memory tool on a vault\n")[1]
    block = section.split("\n## ")[0].split("```python\n")[1].split("```")[0]
    return block


RECORDED = [
    assistant(
        "msg_1",
        {"type": "text", "text": "Let me look at my memory first."},
        tool_use("toolu_1", command="view", path="/memories"),
    ),
    assistant(
        "msg_2",
        tool_use(
            "toolu_2",
            command="create",
            path="/memories/preferences.md",
            file_text="# Preferences\n- drinks coffee",
        ),
    ),
    assistant(
        "msg_3",
        tool_use(
            "toolu_3",
            command="str_replace",
            path="/memories/preferences.md",
            old_str="milk",
            new_str="oat milk",
        ),
        tool_use(
            "toolu_4",
            command="str_replace",
            path="/memories/preferences.md",
            old_str="coffee",
            new_str="tea, not coffee",
        ),
    ),
    assistant("msg_4", tool_use("toolu_5", command="view", path="/memories/preferences.md")),
    assistant("msg_5", {"type": "text", "text": "Noted: tea, not coffee."}),
]


def test_the_readme_loop_runs_with_recorded_answers(server: RunningIndexer, tmp_path: Path) -> None:
    """The README's example, unchanged, in a fresh interpreter: the real SDK's tool
    runner talks to a recorded API; the tool results it sends back are what the SDK's
    own memory tool answers to the same commands, and the note is in the vault."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "AGENT_"))}
    with recorded_api(RECORDED) as api:
        env.update(
            ANTHROPIC_BASE_URL=api.url,
            ANTHROPIC_API_KEY="recorded",
            AGENT_CLIENT_WORKSPACE=str(server.workspace),
        )
        proc = subprocess.run(
            [sys.executable, "-W", "error", "-c", readme_example()],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "Claude: Let me look at my memory first.",
        "memory: view /memories",
        "memory: create /memories/preferences.md",
        "memory: str_replace /memories/preferences.md",
        "memory: str_replace /memories/preferences.md",
        "memory: view /memories/preferences.md",
        "Claude: Noted: tea, not coffee.",
    ]
    sdk = BetaLocalFilesystemMemoryTool(base_path=str(tmp_path / "sdk"))
    expected = []
    for reply in RECORDED:
        for block in reply["content"]:
            if block["type"] == "tool_use":
                content, is_error = outcome(sdk, block["input"])
                expected.append((block["id"], content, is_error))
    got = [(r["tool_use_id"], r["content"], r.get("is_error", False)) for r in api.tool_results()]
    assert got == expected
    assert got[2][2] is True and "did not appear verbatim" in got[2][1]
    note = (vault_dir(server, "en") / "memories" / "preferences.md").read_text()
    assert parse_frontmatter(note)[1] == "# Preferences\n- drinks tea, not coffee\n"


async def test_the_async_tool_runs_in_the_sdks_async_tool_runner(server: RunningIndexer) -> None:
    """``AsyncAnthropic``'s tool runner awaits the async tool on its own loop."""
    import anthropic

    replies = [
        assistant("m1", tool_use("t1", command="create", path="/memories/a.txt", file_text="hi")),
        assistant("m2", tool_use("t2", command="view", path="/memories")),
        assistant("m3", {"type": "text", "text": "done"}),
    ]
    settings = ClientSettings(server.workspace)
    with recorded_api(replies) as api:
        client = anthropic.AsyncAnthropic(api_key="recorded", base_url=api.url, max_retries=0)
        async with AsyncVaultMemoryTool("en", folder="m-runner", settings=settings) as memory:
            runner = client.beta.messages.tool_runner(
                model="claude-sonnet-5-5",
                max_tokens=100,
                messages=[{"role": "user", "content": "remember hi"}],
                tools=[memory],
            )
            kinds = [[block.type for block in message.content] async for message in runner]
        await client.close()
    assert kinds == [["tool_use"], ["tool_use"], ["text"]]
    assert [r["content"] for r in api.tool_results()] == [
        "File created successfully at: /memories/a.txt",
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden "
        "items:\n4K\t/memories\n2B\t/memories/a.txt",
    ]


# -- the package without the extra -------------------------------------------------------------

BLOCK_ANTHROPIC = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "anthropic" or name.startswith("anthropic."):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None
sys.meta_path.insert(0, Block())
"""


def test_without_the_extra_the_package_works_and_says_what_is_missing() -> None:
    code = (
        BLOCK_ANTHROPIC
        + """
import agent_client, agent_client.cli, agent_client.hooks, agent_client.writer
assert "anthropic" not in sys.modules
assert "VaultMemoryTool" not in agent_client.__all__
namespace = {}
exec("from agent_client import *", namespace)
assert "MemoryWriter" in namespace and "VaultMemoryTool" not in namespace
try:
    agent_client.VaultMemoryTool
except ImportError as err:
    print(err)
"""
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "install vault-memory with its claude extra" in proc.stdout
    assert "pip install 'anthropic>=2.14.0'" in proc.stdout


def test_with_the_extra_anthropic_is_imported_only_when_the_tool_is_used() -> None:
    code = """
import sys
import agent_client, agent_client.cli
assert "anthropic" not in sys.modules
assert {"VaultMemoryTool", "AsyncVaultMemoryTool"} <= set(agent_client.__all__)
from agent_client import VaultMemoryTool
from anthropic.tools import BetaAbstractMemoryTool
assert issubclass(VaultMemoryTool, BetaAbstractMemoryTool)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
