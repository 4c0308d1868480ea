"""Every tool through fastmcp's in-memory client: results, and refusals that change nothing."""

from __future__ import annotations

import base64
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from helpers.snapshots import snapshot

from indexer.core import Core
from indexer.settings import Settings, default_prompts_dir
from indexer.vault.body_sizes import BodySizes
from indexer.vault.globs import compile_glob
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from indexer.web.mcp import create_server, refusals
from shared.errors import VaultError
from shared.workspace import Workspace

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[Client]:
    ws = Workspace(tmp_path / "ws")
    settings = Settings(workspace=ws, max_file_bytes=64 * 1024)
    vault = Vault(Sandbox(ws), max_file_bytes=settings.max_file_bytes)
    async with Client(create_server(Core(settings, vault))) as c:
        yield c


async def call(client: Client, tool: str, **args) -> dict:
    result = await client.call_tool(tool, args)
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def refused(client: Client, tool: str, code: str, **args) -> str:
    with pytest.raises(ToolError) as info:
        await client.call_tool(tool, args)
    assert str(info.value).startswith(code + ": "), str(info.value)
    return str(info.value)


def vault_dir(tmp_path: Path, lang: str = "en") -> Path:
    return tmp_path / "ws" / "memory" / "languages" / lang / "vault"


async def test_tool_list_matches_the_spec(client: Client) -> None:
    tools = {t.name: t for t in await client.list_tools()}
    params = {name: set(t.input_schema["properties"]) for name, t in tools.items()}
    assert params == {
        "read": {"lang", "path", "offset", "limit", "version"},
        "write": {"lang", "path", "content", "encoding", "if_match", "reason"},
        "stat": {"lang", "path"},
        "append": {"lang", "path", "content", "create", "reason"},
        "find": {"lang", "pattern", "path", "limit", "dirs", "sizes", "after"},
        "grep": {"lang", "pattern", "path", "glob", "fixed", "ignore_case", "limit"},
        "delete": {"lang", "path", "reason"},
        "status": set(),
        "history": {"lang", "path", "limit"},
        "diff": {"lang", "path", "from_version", "to_version"},
        "restore": {"lang", "path", "version", "if_match", "reason"},
        "move": {"lang", "path", "new_path", "if_match", "reason"},
        "undo": {"lang", "entry_id", "dry_run"},
    }
    # MCP's hints: a tool not read-only is taken as destructive unless it says otherwise
    hints = {
        name: (t.annotations.read_only_hint, t.annotations.destructive_hint)
        for name, t in tools.items()
        if t.annotations is not None
    }
    assert set(hints) == set(tools)
    assert hints["append"] == (None, False)
    assert {name for name, (_, destroys) in hints.items() if destroys} == {
        "write",
        "delete",
        "restore",
        "move",
        "undo",
    }


async def test_write_read_stat_round_trip(client: Client, tmp_path: Path) -> None:
    written = await call(client, "write", lang="en", path="items/go.md", content="# Go\nwent\n")
    assert written["created"] is True and written["path"] == "items/go.md"
    read = await call(client, "read", lang="en", path="items/go.md")
    assert read["etag"] == written["etag"] and read["size"] == written["size"]
    assert read["content"].startswith("---\nid: ") and read["content"].endswith("# Go\nwent\n")
    assert (vault_dir(tmp_path) / "items/go.md").read_text() == read["content"]
    st = await call(client, "stat", lang="en", path="items/go.md")
    assert st == {
        "path": "items/go.md",
        "exists": True,
        "type": "file",
        "size": read["size"],
        "mtime": read["mtime"],
        "etag": read["etag"],
    }
    assert (await call(client, "stat", lang="en", path="items"))["type"] == "dir"
    missing = await call(client, "stat", lang="en", path="items/nope.md")
    assert missing["exists"] is False and missing["type"] is None
    again = await call(client, "write", lang="en", path="items/go.md", content=read["content"])
    assert again["created"] is False


async def test_read_lines_with_offset_and_limit(client: Client) -> None:
    await call(client, "write", lang="en", path="n.md", content="---\ntitle: n\n---\nl1\nl2\nl3\n")
    whole = await call(client, "read", lang="en", path="n.md")
    lines = whole["content"].splitlines(keepends=True)
    part = await call(client, "read", lang="en", path="n.md", offset=2, limit=2)
    assert part["content"] == "".join(lines[2:4])
    assert part["etag"] == whole["etag"]


async def test_if_match_protects_against_lost_updates(client: Client, tmp_path: Path) -> None:
    first = await call(client, "write", lang="en", path="a.md", content="# A\n", if_match="")
    await refused(client, "write", "conflict", lang="en", path="a.md", content="x", if_match="")
    ok = await call(
        client, "write", lang="en", path="a.md", content="# A\n2\n", if_match=first["etag"]
    )
    before = snapshot(tmp_path)
    await refused(
        client,
        "write",
        "conflict",
        lang="en",
        path="a.md",
        content="# lost\n",
        if_match=first["etag"],
    )
    await refused(
        client, "write", "conflict", lang="en", path="b.md", content="# B\n", if_match=ok["etag"]
    )
    assert snapshot(tmp_path) == before


async def test_if_match_star_writes_only_over_a_file_that_exists(
    client: Client, tmp_path: Path
) -> None:
    """``if_match="*"`` (REST's ``If-Match: *``, whose JSON body is this argument) was
    compared as an etag: "changed since it was read" of a file never read. It means
    "must exist": refused for a missing file, any content otherwise."""
    before = snapshot(tmp_path)
    message = await refused(
        client, "write", "conflict", lang="en", path="a.md", content="# A\n", if_match="*"
    )
    assert message == "conflict: the file does not exist (if_match='*' means it must)"
    assert snapshot(tmp_path) == before
    await call(client, "write", lang="en", path="a.md", content="# A\n")
    (vault_dir(tmp_path) / "a.md").write_text("# A\nedited in an editor\n")
    written = await call(client, "write", lang="en", path="a.md", content="# B\n", if_match="*")
    assert written["created"] is False
    assert (vault_dir(tmp_path) / "a.md").read_text().endswith("# B\n")


async def test_append_and_create_flag(client: Client, tmp_path: Path) -> None:
    await refused(
        client, "append", "not_found", lang="en", path="log.md", content="x", create=False
    )
    first = await call(client, "append", lang="en", path="log.md", content="one\n")
    second = await call(client, "append", lang="en", path="log.md", content="two\n")
    assert second["size"] == first["size"] + 4 and second["etag"] != first["etag"]
    assert (vault_dir(tmp_path) / "log.md").read_text() == "one\ntwo\n"  # (as sent)
    first = await call(client, "append", lang="en", path="log.txt", content="one\r\n")
    await call(client, "append", lang="en", path="log.txt", content="two\r\n")
    assert (vault_dir(tmp_path) / "log.txt").read_bytes() == b"one\r\ntwo\r\n"  # as sent


async def test_binary_asset_write_and_read(client: Client, tmp_path: Path) -> None:
    data = base64.b64encode(PNG).decode()
    out = await call(
        client, "write", lang="en", path="items/a.md.assets/p.png", content=data, encoding="base64"
    )
    assert out["size"] == len(PNG)
    assert (vault_dir(tmp_path) / "items/a.md.assets/p.png").read_bytes() == PNG
    read = await call(client, "read", lang="en", path="items/a.md.assets/p.png")
    assert read["encoding"] == "base64" and base64.b64decode(read["content"]) == PNG


async def test_find_and_grep(client: Client) -> None:
    for i in range(5):
        await call(client, "write", lang="en", path=f"items/n{i}.md", content=f"# N{i}\nfoo {i}\n")
    await call(client, "write", lang="en", path="events/2026/11/29.md", content="# day\nfoo\n")
    found = await call(client, "find", lang="en")
    assert found["paths"] == ["events/2026/11/29.md"] + [f"items/n{i}.md" for i in range(5)]
    assert (await call(client, "find", lang="en", pattern="n[0-2].md", path="items"))["paths"] == [
        "items/n0.md",
        "items/n1.md",
        "items/n2.md",
    ]
    limited = await call(client, "find", lang="en", limit=2)
    assert limited == {"paths": ["events/2026/11/29.md", "items/n0.md"], "truncated": True}
    hits = await call(client, "grep", lang="en", pattern=r"foo [13]$")
    assert [(m["path"], m["text"]) for m in hits["matches"]] == [
        ("items/n1.md", "foo 1"),
        ("items/n3.md", "foo 3"),
    ]
    assert hits["matches"][0]["line"] == 8
    fixed = await call(client, "grep", lang="en", pattern="FOO (", fixed=True, ignore_case=True)
    assert fixed["matches"] == []
    ci = await call(client, "grep", lang="en", pattern="FOO", ignore_case=True, limit=3)
    assert len(ci["matches"]) == 3 and ci["truncated"] is True
    assert (await call(client, "find", lang="zz"))["paths"] == []


async def test_find_pages_on_after_the_last_path(client: Client) -> None:
    """An agent listing a folder past ``limit`` (at most 10,000) had no next page: REST's
    cursor, over MCP. Every file once, in order, with files added on both sides of it."""
    for i in range(7):
        await call(client, "write", lang="en", path=f"items/n{i}.md", content=f"# N{i}\n")
    pages: list[list[str]] = []
    after = None
    while True:
        page = await call(client, "find", lang="en", path="items", limit=3, after=after)
        pages.append(page["paths"])
        if not page["truncated"]:
            break
        after = page["paths"][-1]
        if len(pages) == 1:  # (one before the cursor, one after it: only the later listed)
            await call(client, "write", lang="en", path="items/n00.md", content="# early\n")
            await call(client, "write", lang="en", path="items/n9.md", content="# late\n")
    listed = [path for page in pages for path in page]
    assert listed == [f"items/n{i}.md" for i in (0, 1, 2, 3, 4, 5, 6, 9)], pages
    for bad in ("", "../x.md", "other/n1.md"):
        text = await refused(client, "find", "invalid_argument", lang="en", path="items", after=bad)
        assert "after" in text


async def test_find_and_grep_skip_dot_files(client: Client, tmp_path: Path) -> None:
    await call(client, "write", lang="en", path="a.md", content="# a\nneedle\n")
    hidden = vault_dir(tmp_path) / ".obsidian"
    hidden.mkdir()
    (hidden / "x.md").write_text("needle\n")
    (vault_dir(tmp_path) / ".h.md").write_text("needle\n")
    assert (await call(client, "find", lang="en"))["paths"] == ["a.md"]
    assert [
        m["path"] for m in (await call(client, "grep", lang="en", pattern="needle"))["matches"]
    ] == ["a.md"]


async def test_grep_is_linear_time_on_catastrophic_patterns(client: Client) -> None:
    await call(client, "write", lang="en", path="a.md", content="a" * 50_000 + "!\n")
    started = time.monotonic()
    for pattern in ("(a+)+$", "(a|aa)+$", "(a*)*b", "^(([a-z])+.)+[A-Z]([a-z])+$"):
        await call(client, "grep", lang="en", pattern=pattern)
    assert time.monotonic() - started < 5


async def test_delete_takes_assets_and_keeps_non_empty_folders(
    client: Client, tmp_path: Path
) -> None:
    await call(client, "write", lang="en", path="items/a.md", content="# a\n")
    await call(
        client,
        "write",
        lang="en",
        path="items/a.md.assets/p.png",
        content=base64.b64encode(PNG).decode(),
        encoding="base64",
    )
    await refused(client, "delete", "invalid_argument", lang="en", path="items")
    assert await call(client, "delete", lang="en", path="items/a.md") == {
        "path": "items/a.md",
        "deleted": True,
    }
    assert not (vault_dir(tmp_path) / "items/a.md.assets").exists()
    await call(client, "delete", lang="en", path="items")
    assert not (vault_dir(tmp_path) / "items").exists()
    await refused(client, "delete", "not_found", lang="en", path="items/a.md")


REFUSALS = [
    ("read", "invalid_lang", {"lang": "English", "path": "a.md"}),
    ("read", "forbidden_path", {"lang": "en", "path": "../vault2/a.md"}),
    ("read", "not_found", {"lang": "en", "path": "nope.md"}),
    ("read", "invalid_argument", {"lang": "en", "path": "a.md", "offset": -1}),
    ("read", "invalid_argument", {"lang": "en", "path": "a.md", "limit": "3"}),
    ("read", "invalid_argument", {"lang": "en"}),
    ("read", "invalid_argument", {"lang": "en", "path": "a.md", "extra": 1}),
    ("write", "forbidden_path", {"lang": "en", "path": "x.py", "content": "x"}),
    ("write", "forbidden_path", {"lang": "en", "path": "x", "content": "x"}),
    ("write", "forbidden_path", {"lang": "en", "path": "x.TXT", "content": "x"}),
    ("write", "forbidden_path", {"lang": "en", "path": "x.yml", "content": "x"}),
    (
        "write",
        "forbidden_path",
        {"lang": "en", "path": "x.png", "content": "iVBORw==", "encoding": "base64"},
    ),
    (
        "write",
        "forbidden_path",
        {"lang": "en", "path": "a.md.assets/x.md", "content": "x", "encoding": "base64"},
    ),
    (
        "write",
        "invalid_argument",
        {"lang": "en", "path": "a.md.assets/x.png", "content": "not base64!", "encoding": "base64"},
    ),
    (
        "write",
        "invalid_argument",
        {
            "lang": "en",
            "path": "a.md.assets/x.png",
            "content": base64.b64encode(b"GIF89a").decode(),
            "encoding": "base64",
        },
    ),
    (
        "write",
        "invalid_argument",
        {"lang": "en", "path": "b.md", "content": "x", "encoding": "latin-1"},
    ),
    (
        "write",
        "invalid_frontmatter",
        {"lang": "en", "path": "b.md", "content": "---\nid: 1\nid: 2\n---\n"},
    ),
    ("write", "invalid_frontmatter", {"lang": "en", "path": "b.md", "content": "---\n[\n---\n"}),
    ("write", "too_large", {"lang": "en", "path": "b.md", "content": "x" * 70_000}),
    ("write", "conflict", {"lang": "en", "path": "a.md", "content": "x", "if_match": "0" * 32}),
    ("stat", "forbidden_path", {"lang": "en", "path": "/etc/passwd"}),
    ("append", "forbidden_path", {"lang": "en", "path": "a.html", "content": "x"}),
    ("append", "invalid_argument", {"lang": "en", "path": "a.md", "content": ""}),
    ("append", "too_large", {"lang": "en", "path": "a.md", "content": "x" * 70_000}),
    ("find", "invalid_argument", {"lang": "en", "limit": 0}),
    ("find", "not_found", {"lang": "en", "path": "nowhere"}),
    ("find", "invalid_argument", {"lang": "en", "path": "a.md"}),
    ("grep", "invalid_argument", {"lang": "en", "pattern": "("}),
    ("grep", "invalid_argument", {"lang": "en", "pattern": ""}),
    ("grep", "invalid_argument", {"lang": "en", "pattern": "x" * 3000}),
    ("grep", "invalid_argument", {"lang": "en", "pattern": "x", "limit": 10**6}),
    ("delete", "not_found", {"lang": "en", "path": "nope.md"}),
    ("delete", "forbidden_path", {"lang": "en", "path": "../../ja/vault/a.md"}),
]


@pytest.mark.parametrize(("tool", "code", "args"), REFUSALS)
async def test_refusals_change_nothing(
    client: Client, tmp_path: Path, tool: str, code: str, args: dict
) -> None:
    await call(client, "write", lang="en", path="a.md", content="# a\n")
    before = snapshot(tmp_path)
    message = await refused(client, tool, code, **args)
    assert str(tmp_path) not in message
    assert snapshot(tmp_path) == before


def test_unexpected_errors_are_masked() -> None:
    @refusals
    def broken() -> dict:
        raise PermissionError("/very/secret/host/path")

    with pytest.raises(Exception) as info:
        broken()
    assert str(info.value).startswith("internal: ")
    assert "/very/secret" not in str(info.value)


async def test_status(client: Client) -> None:
    await call(client, "write", lang="ja", path="a.md", content="# 日本\n")
    status = await call(client, "status")
    assert status["langs"] == {"ja": 1} and status["version"]
    assert set(status) >= {"version", "workspace", "langs", "index_ready"}


async def test_prompts_and_resources_are_served(client: Client) -> None:
    root = default_prompts_dir()
    names = {p.name for p in await client.list_prompts()}
    expected = {p.stem for p in root.glob("*.md")}
    assert expected >= {"mem_entry_spec", "envelope_spec", "vault_spec"}
    assert names == expected
    prompt = await client.get_prompt("vault_spec")
    assert prompt.messages[0].content.text == (root / "vault_spec.md").read_text()
    uris = {str(r.uri) for r in await client.list_resources()}
    assert {f"vault://prompts/{n}" for n in expected} <= uris
    text = await client.read_resource("vault://prompts/mem_entry_spec")
    assert text[0].text == (root / "mem_entry_spec.md").read_text()


# -- red-team fixes: globs, append-create, images, grep budget, listeners ----------------------


async def test_glob_patterns_run_in_linear_time(client: Client) -> None:
    await call(client, "write", lang="en", path="items/" + "a" * 60 + ".md", content="# a\n")
    started = time.process_time()  # (the server is in this process; CPU time, as wall
    # time under CPU contention is many times it)
    for pattern in ("*a" * 7 + "b", "*a" * 40 + "b", "**/" * 30 + "*a" * 20 + "b", "*" * 400):
        out = await call(client, "find", lang="en", pattern=pattern, path="items")
        assert out["paths"] == ([] if pattern.endswith("b") else ["items/" + "a" * 60 + ".md"])
        hits = await call(client, "grep", lang="en", pattern="^# a$", glob=pattern)
        assert len(hits["matches"]) == (0 if pattern.endswith("b") else 1)
    assert time.process_time() - started < 1


def test_glob_semantics() -> None:
    from indexer.vault.globs import compile_glob

    cases = {
        "**/*.md": (["a.md", "x/y/a.md"], ["a.txt", ".md/x"]),
        "*.md": (["a.md"], ["x/a.md"]),
        "x/**": (["x/a", "x/a/b"], ["y/a"]),
        "***/a.md": (["a.md", "p/q/a.md"], ["pa.md/b"]),
        "n[0-2].md": (["n0.md", "n2.md"], ["n3.md"]),
        "n[!0-2].md": (["n3.md"], ["n1.md"]),
        "?.md": (["a.md"], ["ab.md", "/.md"]),
        "a+(b).md": (["a+(b).md"], ["aab.md"]),
        "[.md": (["[.md"], ["a.md"]),
    }
    for pattern, (good, bad) in cases.items():
        regex = compile_glob(pattern)
        assert all(regex.fullmatch(p) for p in good), pattern
        assert not any(regex.fullmatch(p) for p in bad), pattern


async def test_append_that_creates_a_note_normalizes_it(client: Client, tmp_path: Path) -> None:
    orig = await call(client, "write", lang="en", path="items/orig.md", content="# Orig\n")
    text = (await call(client, "read", lang="en", path="items/orig.md"))["content"]
    assert orig["created"]
    before = snapshot(tmp_path)
    clone = "---\nid: X\ncreated: not-a-date\nid: dup\n---\n# Clone\n"
    await refused(client, "append", "invalid_frontmatter", lang="en", path="c.md", content=clone)
    bad_yaml = "---\nx: [\n---\n# p\n"
    await refused(client, "append", "invalid_frontmatter", lang="en", path="p.md", content=bad_yaml)
    assert snapshot(tmp_path) == before
    out = await call(
        client, "append", lang="en", path="new/n.md", content="---\ntags: a, b\n---\nx"
    )
    made = (vault_dir(tmp_path) / "new/n.md").read_text()
    assert made.startswith("---\nid: ") and "\ntags: [a, b]\n" in made and "\ncreated: " in made
    assert out["size"] == len(made.encode())
    # An append to an existing note stays a raw append, even of a frontmatter-like block.
    await call(client, "append", lang="en", path="items/orig.md", content="\n---\nid: Y\n---\n")
    assert (vault_dir(tmp_path) / "items/orig.md").read_text() == text + "\n---\nid: Y\n---\n"


IMAGES = {
    "p.webp": (b"RIFF\x10\x00\x00\x00WEBPVP8 " + b"\x00" * 8, b"RIFF\x10\x00\x00\x00WAVEfmt "),
    "p.avif": (
        b"\x00\x00\x00\x1cftypavif\x00\x00\x00\x00avifmif1miaf",
        b"\x00\x00\x00\x00\x00\x00\x00\x00",
    ),
    "q.avif": (
        b"\x00\x00\x00\x14ftypmif1\x00\x00\x00\x00avif",
        b"\x00\x00\x00\x14ftypmp42" + b"\0" * 8,
    ),
    "p.gif": (b"GIF89a" + b"\x00" * 8, b"GIF00a"),
}


async def test_image_types_are_checked_by_their_magic(client: Client, tmp_path: Path) -> None:
    for name, (good, bad) in IMAGES.items():
        path = f"a.md.assets/{name}"
        await refused(
            client,
            "write",
            "invalid_argument",
            lang="en",
            path=path,
            content=base64.b64encode(bad).decode(),
            encoding="base64",
        )
        out = await call(
            client,
            "write",
            lang="en",
            path=path,
            content=base64.b64encode(good).decode(),
            encoding="base64",
        )
        assert out["size"] == len(good)


def _plain_vault(tmp_path: Path) -> Vault:
    return Vault(Sandbox(Workspace(tmp_path / "ws")), max_file_bytes=1 << 20)


def test_grep_stops_at_its_budget(tmp_path: Path) -> None:
    vault = _plain_vault(tmp_path)
    for i in range(20):
        vault.write("en", f"n{i:02}.md", "# n\n" + "filler\n" * 100 + "needle\n")
    assert len(vault.grep("en", "needle")["matches"]) == 20
    vault.grep_max_bytes = 5_000
    out = vault.grep("en", "needle")
    assert out["truncated"] is True and 0 < len(out["matches"]) < 20
    vault.grep_max_bytes, vault.grep_max_seconds = 1 << 30, 0.0
    assert vault.grep("en", "needle") == {"matches": [], "truncated": True}


def test_grep_refuses_patterns_too_big_for_a_fast_scan(tmp_path: Path) -> None:
    vault = _plain_vault(tmp_path)
    vault.write("en", "big.md", "é" * 100_000 + "日本" * 50_000)
    started = time.process_time()  # (CPU time: at load 24 the wall time passed 5 s)
    for pattern in ("[\\p{L}\\p{N}]{500}x", "[\\p{L}\\p{N}]{200}x", ".{1000}.{1000}x"):
        with pytest.raises(VaultError) as info:
            vault.grep("en", pattern, ignore_case=True)
        assert info.value.code == "invalid_argument"
    assert vault.grep("en", "[\\p{L}\\p{N}]{7}!", ignore_case=True)["matches"] == []
    assert vault.grep("en", "((((a*)*)*)*)*!")["matches"] == []
    assert vault.grep("en", ".{1000}.{200}!", ignore_case=True)["matches"] == []
    assert time.process_time() - started < 5  # was 36 s for one of them


def test_a_failing_listener_does_not_fail_the_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    vault = _plain_vault(tmp_path)

    def broken(lang: str, rel: str) -> None:
        raise RuntimeError("index is down")

    vault.listeners.append(broken)
    assert vault.write("en", "a.md", "# a\n")["created"] is True
    assert vault.append("en", "a.md", "more\n")["size"] > 0
    assert vault.delete("en", "a.md")["deleted"] is True
    assert caplog.text.count("change listener failed") == 3


def test_locks_are_shared_by_names_that_differ_in_case(tmp_path: Path) -> None:
    vault = _plain_vault(tmp_path)
    upper = vault.sandbox.resolve("en", "Items/A.md")
    assert vault._lock(upper) is vault._lock(vault.sandbox.resolve("en", "items/a.md"))


async def test_harmless_spellings_of_a_path_are_normalized(client: Client) -> None:
    written = await call(client, "write", lang="en", path="./items//a.md", content="# a\n")
    assert written["path"] == "items/a.md"
    read = await call(client, "read", lang="en", path="items/./a.md")
    assert read["path"] == "items/a.md" and read["content"].endswith("# a\n")
    appended = await call(client, "append", lang="en", path="./items/a.md", content="more\n")
    assert appended["path"] == "items/a.md"
    found = await call(client, "find", lang="en", path="./items/")
    assert found["paths"] == ["items/a.md"]
    assert (await call(client, "stat", lang="en", path="items//a.md"))["path"] == "items/a.md"
    assert (await call(client, "delete", lang="en", path=".//items/a.md"))["path"] == "items/a.md"


TEXT_TYPES = ("txt", "xml", "json", "yaml", "csv")


async def test_text_files_are_written_exactly_without_frontmatter(
    client: Client, tmp_path: Path
) -> None:
    """Claude's memory files: written, read, appended and deleted as sent (CRs, no final
    newline, a ``---`` block: nothing is normalized)."""
    for suffix in TEXT_TYPES:
        path = f"memories/notes.{suffix}"
        text = "---\ntitle: kept as text\n---\r\nline\n\n\nno final newline"
        written = await call(client, "write", lang="en", path=path, content=text, if_match="")
        assert written["size"] == len(text.encode())
        assert (vault_dir(tmp_path) / path).read_bytes() == text.encode()
        read = await call(client, "read", lang="en", path=path)
        assert read["content"] == text and read["etag"] == written["etag"]
        again = await call(
            client, "write", lang="en", path=path, content="é\n", if_match=written["etag"]
        )
        assert again["created"] is False and again["size"] == 3
        await call(client, "append", lang="en", path=path, content="more")
        assert (vault_dir(tmp_path) / path).read_text() == "é\nmore"
        assert (await call(client, "delete", lang="en", path=path))["deleted"] is True
        assert not (vault_dir(tmp_path) / path).exists()
    created = await call(client, "append", lang="en", path="m/new.txt", content="---\nx: 1\n---\n")
    assert (vault_dir(tmp_path) / "m/new.txt").read_text() == "---\nx: 1\n---\n"
    assert created["size"] == 13


async def test_other_file_types_stay_refused(client: Client, tmp_path: Path) -> None:
    (vault_dir(tmp_path) / "m").mkdir(parents=True)
    (vault_dir(tmp_path) / "m/script.py").write_text("print(1)\n")
    before = snapshot(tmp_path)
    for path in ("m/a.py", "m/a.html", "m/a.svg", "m/a", "m/a.yml", "m/a.TXT", "m/a.txt.exe"):
        await refused(client, "write", "forbidden_path", lang="en", path=path, content="x")
        await refused(client, "append", "forbidden_path", lang="en", path=path, content="x")
    await refused(client, "delete", "forbidden_path", lang="en", path="m/script.py")
    assert snapshot(tmp_path) == before
    assert (await call(client, "read", lang="en", path="m/script.py"))["content"] == "print(1)\n"


async def test_find_and_grep_list_text_files_with_an_explicit_glob(client: Client) -> None:
    await call(client, "write", lang="en", path="memories/a.md", content="# a\nneedle\n")
    await call(client, "write", lang="en", path="memories/b.txt", content="needle\n")
    await call(client, "write", lang="en", path="memories/c/d.json", content='"needle"')
    assert (await call(client, "find", lang="en"))["paths"] == ["memories/a.md"]
    found = await call(client, "find", lang="en", pattern="**", path="memories")
    assert found["paths"] == ["memories/a.md", "memories/b.txt", "memories/c/d.json"]
    txt = await call(client, "find", lang="en", pattern="**/*.txt")
    assert txt["paths"] == ["memories/b.txt"]
    hits = await call(client, "grep", lang="en", pattern="needle", glob="**/*.json")
    assert [(m["path"], m["line"]) for m in hits["matches"]] == [("memories/c/d.json", 1)]
    default = await call(client, "grep", lang="en", pattern="needle")
    assert [m["path"] for m in default["matches"]] == ["memories/a.md"]


async def test_find_with_sizes_gives_files_sizes_and_notes_bodies(
    client: Client, tmp_path: Path
) -> None:
    """``sizes``: each file's bytes, and each UTF-8 note's body as the memory tool shows it
    (``shared.memory_view``), read now: a note edited by another program a moment ago is
    measured as it is. A note over the size limit or not UTF-8 has its size only."""
    await call(client, "write", lang="en", path="m/a.md", content="---\nmood: calm\n---\nhé\n")
    await call(client, "write", lang="en", path="m/b.txt", content="---\nx: 1\n---\ntext")
    root = vault_dir(tmp_path)
    (root / "m/sub").mkdir()
    (root / "m/sub/crlf.md").write_bytes(b"# Hand\r\nwritten\r\n")
    (root / "m/sub/count.md").write_text("---\ntrailing_newlines: 3\n---\nthree\n")
    (root / "m/sub/bytes.md").write_bytes(b"---\ntitle: x\n---\n\xff\xfe")
    (root / "m/sub/big.md").write_text("---\ntitle: x\n---\n" + "x" * 70_000)
    found = await call(client, "find", lang="en", pattern="**", path="m", dirs=True, sizes=True)
    files = [p for p in found["paths"] if not p.endswith("/")]
    on_disk = {p: (root / p).stat().st_size for p in files}
    assert found["sizes"] == on_disk
    assert found["body_sizes"] == {"m/a.md": 4, "m/sub/count.md": 8, "m/sub/crlf.md": 17}
    (root / "m/a.md").write_text("---\ntitle: a\n---\nlonger now\n")  # not indexed yet
    again = await call(client, "find", lang="en", pattern="*.md", path="m", sizes=True)
    assert again["sizes"] == {"m/a.md": 28} and again["body_sizes"] == {"m/a.md": 11}
    plain = await call(client, "find", lang="en", pattern="**", path="m")
    assert "sizes" not in plain and "body_sizes" not in plain


# About 64 KiB of YAML (the largest block there may be): ~0.1 s of CPU to parse.
HEAVY_NOTE = "---\nheavy: [" + "1," * 32_000 + "1]\n---\nbody\n"


def test_find_sizes_parses_within_its_budget(tmp_path: Path) -> None:
    """``find(sizes=true)`` measures notes' bodies (a YAML parse each) for
    ``find_sizes_max_seconds`` at most, however many heavy blocks other programs wrote:
    the notes left have no size at all (the caller measures them itself); other files
    and a note too large to read, which need no parse, keep their sizes."""
    vault = _plain_vault(tmp_path)
    folder = vault_dir(tmp_path) / "m"
    folder.mkdir(parents=True)
    for i in range(30):
        (folder / f"n{i:02}.md").write_text(HEAVY_NOTE)
    (folder / "t.txt").write_text("text")
    (folder / "big.md").write_text("x" * ((1 << 20) + 1))
    vault.find_sizes_max_seconds = 0.0
    found = vault.find("en", "*", "m", sizes=True)
    assert len(found["paths"]) == 32
    assert found["sizes"] == {"m/t.txt": 4, "m/big.md": (1 << 20) + 1}
    assert found["body_sizes"] == {}
    vault.find_sizes_max_seconds = 0.3
    started = time.thread_time()
    found = vault.find("en", "*", "m", sizes=True)
    assert time.thread_time() - started < 2.0  # every note parsed: ~3.4 s
    bodies = found["body_sizes"]
    assert bodies and set(bodies.values()) == {len("body\n")}
    assert {p: found["sizes"][p] for p in bodies} == {p: len(HEAVY_NOTE) for p in bodies}


def test_find_sizes_keeps_bodies_measured_until_the_file_changes(tmp_path: Path) -> None:
    """A note's body measured once is known while its file is unchanged (no parse, so
    even with no time left); an edit made outside the tools, of the same size too, is
    measured again. A file changed less than ``settled_ns`` ago is not kept (a second
    change within the clock's tick could leave its stat as it was); the kept bodies are
    bounded."""
    vault = _plain_vault(tmp_path)
    vault.body_sizes = BodySizes(settled_ns=0)
    folder = vault_dir(tmp_path) / "m"
    folder.mkdir(parents=True)
    (folder / "a.md").write_text("---\ntrailing_newlines: 2\n---\nab\n")
    (folder / "b.md").write_text(HEAVY_NOTE)
    first = vault.find("en", "*", "m", sizes=True)
    assert first["body_sizes"] == {"m/a.md": 4, "m/b.md": 5}
    vault.find_sizes_max_seconds = 0.0
    assert vault.find("en", "*", "m", sizes=True) == first
    (folder / "a.md").write_text("---\ntrailing_newlines: 3\n---\nab\n")  # same size
    again = vault.find("en", "*", "m", sizes=True)
    assert again["sizes"] == {"m/b.md": len(HEAVY_NOTE)}
    assert again["body_sizes"] == {"m/b.md": 5}
    vault.find_sizes_max_seconds = 60.0
    assert vault.find("en", "*", "m", sizes=True)["body_sizes"] == {"m/a.md": 5, "m/b.md": 5}

    vault.body_sizes = BodySizes(settled_ns=3600 * 10**9)  # both written within the hour
    assert vault.find("en", "*", "m", sizes=True)["body_sizes"] == {"m/a.md": 5, "m/b.md": 5}
    vault.find_sizes_max_seconds = 0.0
    assert vault.find("en", "*", "m", sizes=True)["body_sizes"] == {}

    vault.body_sizes = BodySizes(max_entries=1, settled_ns=0)
    vault.find_sizes_max_seconds = 60.0
    vault.find("en", "*", "m", sizes=True)
    vault.find_sizes_max_seconds = 0.0
    assert len(vault.find("en", "*", "m", sizes=True)["body_sizes"]) == 1


async def test_find_lists_folders_with_dirs(client: Client, tmp_path: Path) -> None:
    """``dirs``: folders too (empty ones included), with a trailing '/', hidden skipped."""
    await call(client, "write", lang="en", path="m/a.txt", content="a")
    await call(client, "write", lang="en", path="m/sub/b.txt", content="b")
    await call(client, "write", lang="en", path="m/sub/deep/c.txt", content="c")
    (vault_dir(tmp_path) / "m/empty").mkdir()
    (vault_dir(tmp_path) / "m/.hidden").mkdir()
    (vault_dir(tmp_path) / "m/sub/.h").mkdir()
    everything = await call(client, "find", lang="en", pattern="**", path="m", dirs=True)
    assert sorted(everything["paths"]) == [
        "m/a.txt",
        "m/empty/",
        "m/sub/",
        "m/sub/b.txt",
        "m/sub/deep/",
        "m/sub/deep/c.txt",
    ]
    top = await call(client, "find", lang="en", pattern="*", path="m", dirs=True)
    assert sorted(top["paths"]) == ["m/a.txt", "m/empty/", "m/sub/"]
    assert (await call(client, "find", lang="en", pattern="*", path="m"))["paths"] == ["m/a.txt"]
    two = await call(client, "find", lang="en", pattern="*/*", path="m", dirs=True)
    assert sorted(two["paths"]) == ["m/sub/b.txt", "m/sub/deep/"]
    limited = await call(client, "find", lang="en", pattern="**", path="m", dirs=True, limit=2)
    assert len(limited["paths"]) == 2 and limited["truncated"] is True
    await call(client, "delete", lang="en", path="m/empty")
    assert not (vault_dir(tmp_path) / "m/empty").exists()


async def test_find_with_dirs_counts_what_no_tool_can_reach(client: Client, tmp_path: Path) -> None:
    """``dirs``: ``unlisted`` counts the entries below ``path`` the walk leaves out (a
    folder that lists empty may not be), whatever the pattern; not a folder's summary or
    Finder's ``.DS_Store``, which its delete takes with it."""
    await call(client, "write", lang="en", path="m/a.txt", content="a")
    m = vault_dir(tmp_path) / "m"
    (m / ".hidden").mkdir()
    (m / ".hidden" / "x.md").write_text("x")  # inside a left-out folder: not walked
    (m / "sub").mkdir()
    (m / "sub" / "ratio 3:2.md").write_text("x")
    (m / "sub" / "Icon\r").write_text("")
    (m / "sub" / "link.md").symlink_to(m / "a.txt")
    os.mkfifo(m / "sub" / "pipe.txt")
    (m / "sub" / ".overview.md").write_text("# sub\n")
    (m / "sub" / ".DS_Store").write_bytes(b"\0")
    top = await call(client, "find", lang="en", pattern="*.md", path="m", dirs=True)
    assert top["paths"] == [] and top["unlisted"] == 1  # (as far as the walk goes)
    found = await call(client, "find", lang="en", pattern="**/*.md", path="m", dirs=True)
    assert found["paths"] == []
    assert found["unlisted"] == 5
    assert sorted(found["unlisted_sample"]) == [
        "m/.hidden",
        "m/sub/Icon\\u000d",
        "m/sub/link.md",
        "m/sub/pipe.txt",
        "m/sub/ratio 3:2.md",
    ]
    assert "unlisted" not in await call(client, "find", lang="en", path="m")  # (the SPEC's shape)
    for name in ("ratio 3:2.md", "Icon\r", "link.md", "pipe.txt"):
        (m / "sub" / name).unlink()
    assert (await call(client, "find", lang="en", pattern="**", path="m/sub", dirs=True))[
        "unlisted"
    ] == 0
    # the folder's summary and .DS_Store go with it; another dot-file keeps it
    await call(client, "delete", lang="en", path="m/sub")
    assert not (m / "sub").exists()
    (m / "kept").mkdir()
    (m / "kept" / ".private").write_text("x")
    await refused(client, "delete", "invalid_argument", lang="en", path="m/kept")
    assert (m / "kept" / ".private").exists()


async def test_a_glob_without_double_stars_walks_only_as_deep_as_it_reaches(
    client: Client, tmp_path: Path
) -> None:
    """``*.md`` walked the whole vault to list its top level (a memory listing of a
    large tree walked it all twice): a glob that cannot match deeper is not walked
    deeper, and lists exactly what the whole walk would."""
    for rel in ("a.md", "x/b.md", "x/y/c.md", "x/y/z/d.md", "w/e.txt", "w/v/f.md"):
        await call(client, "write", lang="en", path=rel, content="# t\n")
    (vault_dir(tmp_path) / "x/y/z/.hidden").write_text("deep")
    everything = (await call(client, "find", lang="en", pattern="**", dirs=True))["paths"]
    for pattern in ("*", "*.md", "*/*", "x/*", "*/*.md", "x/y/*", "*/*/*", "?/*/*/*", "*/[vy]/*"):
        found = await call(client, "find", lang="en", pattern=pattern, dirs=True)
        regex = compile_glob(pattern)
        assert found["paths"] == [p for p in everything if regex.fullmatch(p.rstrip("/"))], pattern
        assert found["unlisted"] == (1 if pattern in ("?/*/*/*", "*/[vy]/*") else 0), pattern
        plain = await call(client, "find", lang="en", pattern=pattern)
        assert plain["paths"] == [p for p in found["paths"] if not p.endswith("/")]
    greps = await call(client, "grep", lang="en", pattern="t", glob="*/*.md")
    assert {m["path"] for m in greps["matches"]} == {"x/b.md"}


async def test_find_with_dirs_counts_a_ds_store_or_summary_that_is_no_file(
    client: Client, tmp_path: Path
) -> None:
    """A ``.DS_Store`` or ``.overview.md`` that is a folder, a link or a FIFO is not what
    a folder's delete takes with it (it takes regular files only): ``unlisted`` counts
    it, or the memory tool's delete passes its check and fails 'not empty' once the
    folder's visible files are gone."""
    await call(client, "write", lang="en", path="m/a.txt", content="a")
    m = vault_dir(tmp_path) / "m"
    for name, make in {
        "dir": lambda p: p.mkdir(),
        "link": lambda p: p.symlink_to(m / "a.txt"),
        "fifo": os.mkfifo,
    }.items():
        for own in (".DS_Store", ".overview.md"):
            (m / name / own.strip(".")).mkdir(parents=True)
            make(m / name / own.strip(".") / own)
    found = await call(client, "find", lang="en", pattern="**", path="m", dirs=True)
    assert found["unlisted"] == 6
    for folder in ("m/dir/DS_Store", "m/link/overview.md"):
        await refused(client, "delete", "invalid_argument", lang="en", path=folder)


async def test_find_with_dirs_shows_a_left_out_twin_apart_from_the_name_listed(
    client: Client, tmp_path: Path
) -> None:
    """A second spelling of a listed name (NFD beside NFC) is left out; its sample must
    not read exactly as the name listed beside it (the memory tool's refusal named
    'café.txt' while café.txt was there to see, and deletable)."""
    await call(client, "write", lang="en", path="m/caf\u00e9.txt", content="a")
    (vault_dir(tmp_path) / "m" / "cafe\u0301.txt").write_text("another program's")
    found = await call(client, "find", lang="en", pattern="**", path="m", dirs=True)
    assert found["paths"] == ["m/caf\u00e9.txt"]
    assert found["unlisted"] == 1
    assert found["unlisted_sample"] == ["m/cafe\\u0301.txt"]
