"""History and undo from the agent client's side, end to end: a real ``indexer serve``,
real files, the Memory Writer (the LLM path through the ``llm_stub``, the deterministic
fallback), and ``agent-client history`` / ``undo`` run in process through ``main``.

What they prove: every version the writer makes carries ``entry:<id> <title>``; undo of
an entry gives back the exact bytes of every file (and no folder left behind), after an
LLM merge, and after a failed LLM merge rolled back by the server's undo and merged by
the fallback; an edit made since makes undo refuse and change nothing.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import itertools
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers.history import (
    check_history_consistent,
    edit_outside,
    entry_reason,
    history_store,
    history_versions,
    vault_file,
)
from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.llm_stub import (
    LLMStub,
    final,
    last_tool_result,
    running_llm_stub,
    say,
    tool_call,
)
from helpers.snapshots import snapshot

from agent_client.cli import main
from agent_client.connection import mcp_vault_connection
from agent_client.events import event_section
from agent_client.merge.paths import note_path_for
from agent_client.notices import CollectingNoticeSink, SystemNotice
from agent_client.settings import ClientSettings, LLMSettings
from agent_client.writer import MemoryWriter
from shared.models import DeleteAction, EditAction, MemoryEntry

T0 = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)
GIF = b"GIF89a" + b"\x01\x00\x01\x00\x00\x00\x00;"
SALES = "---\ntitle: Chart\n---\n# Sales\n\n- Q2: flat\n"
_langs = itertools.count()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    """One server for the module; no folder summaries, so that every file and version
    in a vault is one the tests made."""
    running = start_indexer(
        tmp_path_factory.mktemp("history") / "ws", env={"INDEXER_SUMMARIES": "0"}
    )
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        yield running


@pytest.fixture
def lang() -> str:
    return f"en-h{next(_langs):03d}"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI reads its settings from the environment; keep the host's out of it.
    for name in ("VAULT_LLM_MODEL", "AGENT_CLIENT_WORKSPACE", "AGENT_CLIENT_LANG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENT_CLIENT_TZ", "UTC")


def contents(root: Path) -> dict[str, str]:
    """Every file (sha256) and folder below ``root``: what undo must give back exactly."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        if p.is_file()
        else "folder"
        for p in sorted(root.rglob("*"))
    }


def write_entries(
    server: RunningIndexer,
    entries: list[MemoryEntry],
    stub: LLMStub | None = None,
    *,
    fallback: bool = True,
) -> list[SystemNotice]:
    """Run the Memory Writer on ``entries`` (with the stub as its model, if given)."""
    llm = None
    if stub is not None:
        llm = LLMSettings(model="stub-model", base_url=stub.base_url, max_steps=6, timeout=20.0)
    settings = ClientSettings(workspace=server.workspace, tz=UTC, llm=llm, llm_fallback=fallback)
    sink = CollectingNoticeSink()
    writer = MemoryWriter(settings, sink)
    try:
        writer.submit(entries)
        assert writer.flush(60)
    finally:
        writer.close()
    return sink.notices


def cli(
    capsys: pytest.CaptureFixture[str], server: RunningIndexer, lang: str, *argv: str
) -> tuple[int, str, str]:
    code = main([*argv, "--workspace", str(server.workspace), "--lang", lang])
    out, err = capsys.readouterr()
    return code, out, err


def versions_now(server: RunningIndexer, lang: str) -> dict[tuple[str, int], dict]:
    """Every version of every file of ``lang``'s vault, by (path, number)."""
    found = {}
    with history_store(server.workspace) as store:
        for each_lang, path in store.paths():
            if each_lang == lang:
                for row in store.versions(lang, path, 1000):
                    found[(path, row.version)] = row.public()
    return found


def reasons_since(
    server: RunningIndexer, lang: str, before: dict[tuple[str, int], dict]
) -> dict[str, list[str | None]]:
    """The reasons of the versions made since ``before``, oldest first, by path."""
    made: dict[str, list[str | None]] = {}
    for (path, _), row in sorted(versions_now(server, lang).items()):
        if (path, row["version"]) not in before:
            made.setdefault(path, []).append(row["reason"])
    return made


def seed(server: RunningIndexer, lang: str, rel: str, text: str) -> None:
    """A note a person made in an editor, once history has recorded it."""
    edit_outside(server.workspace, lang, rel, text)


def chart(lang: str, image: Path, title: str = "Chart") -> MemoryEntry:
    return MemoryEntry(lang, "knowledge", title, "Q3 sales are up", ["sales"], T0, [str(image)])


# -- undo after the writer's merges ------------------------------------------------------


def test_an_llm_merge_with_an_image_is_undone_to_the_exact_bytes(
    server: RunningIndexer,
    stub: LLMStub,
    lang: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = vault_file(server.workspace, lang, "")
    seed(server, lang, "items/sales.md", SALES)
    image = tmp_path / "chart.gif"
    image.write_bytes(GIF)
    before, versions = contents(root), versions_now(server, lang)

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("read", path="items/sales.md")
        if turn == 1:
            envelope = json.loads(request["messages"][1]["content"])
            (link,) = envelope["image_links"].values()  # staged next to the suggested note
            text = json.loads(last_tool_result(request))["content"] + f"- Q3: up\n\n{link}\n"
            return tool_call("write", path="items/sales.md", content=text)
        if turn == 2:
            return tool_call("write", path="items/q3.md", content="# Q3\n\nup\n")
        return final(["items/sales.md", "items/q3.md"], "Added Q3.")

    stub.run(script)
    entry = chart(lang, image, title="Chart\tof Q3")  # a tab, which no reason may hold
    staged_at = note_path_for(entry.title)  # where the image waits for the model
    (notice,) = write_entries(server, [entry], stub)
    assert notice.ok and notice.method == "llm", notice.error
    (asset,) = [p for p in notice.updated_files if ".assets/" in p]
    assert asset.startswith("items/sales.md.assets/") and (root / asset).read_bytes() == GIF
    assert not (root / f"{staged_at}.assets").exists()  # the staged copy moved on

    made = reasons_since(server, lang, versions)
    reason = entry_reason(entry.id, "Chart of Q3")
    (staged,) = [p for p in made if p.startswith(f"{staged_at}.assets/")]
    assert made == {
        "items/sales.md": [reason, reason],  # the model's write, then the image's link
        "items/q3.md": [reason],
        asset: [reason],
        staged: [reason, reason],  # copied for the model, removed once placed
    }

    code, out, err = cli(capsys, server, lang, "undo", entry.id, "--dry-run")
    assert code == 0, err
    assert sorted(out.splitlines()) == sorted(  # (the staged copy was "would delete")
        [
            f"{staged} is already as before the entry",
            f"would delete {asset} (the entry created it)",
            "would delete items/q3.md (the entry created it)",
            "would restore items/sales.md to version 1",
        ]
    )
    code, out, err = cli(capsys, server, lang, "undo", entry.id)
    assert code == 0, err
    assert sorted(out.splitlines()) == sorted(
        [
            f"{staged} was already as before the entry",
            f"deleted {asset} (the entry created it)",
            "deleted items/q3.md (the entry created it)",
            "restored items/sales.md to version 1",
        ]
    )
    assert contents(root) == before  # exact bytes, and no emptied .assets folder left
    assert check_history_consistent(server.workspace) > 0


def test_a_failed_llm_merge_is_undone_by_the_server_then_the_fallback_merges(
    server: RunningIndexer,
    stub: LLMStub,
    lang: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = vault_file(server.workspace, lang, "")
    seed(server, lang, "items/sales.md", SALES)
    image = tmp_path / "chart.gif"
    image.write_bytes(GIF)
    before, versions = contents(root), versions_now(server, lang)

    def script(request: dict[str, Any], turn: int) -> dict[str, Any]:
        if turn == 0:
            return tool_call("write", path="items/half.md", content="# Half\n")
        if turn == 1:
            return tool_call("read", path="items/sales.md")
        if turn == 2:  # (its frontmatter kept, as the merge asks)
            content = "---\ntitle: Chart\n---\n# Sales\n\nclobbered\n"
            return tool_call("write", path="items/sales.md", content=content)
        return say("Done!")  # never a confirmation: the merge fails

    stub.run(script)
    entry = chart(lang, image)
    (notice,) = write_entries(server, [entry], stub)
    assert notice.ok and notice.method == "fallback", notice.error
    assert "malformed confirmation" in (notice.fallback_reason or "")
    assert "not undone" not in (notice.fallback_reason or "")
    assert not (root / "items/half.md").exists()
    assert not (root / "items/chart.md.assets").exists()  # staged for the model, undone
    text = (root / "items/sales.md").read_text()
    assert "clobbered" not in text and "## 2026-11-29: Chart\n\nQ3 sales are up\n" in text

    reason, undo = entry_reason(entry.id, "Chart"), f"undo entry:{entry.id}"
    made = reasons_since(server, lang, versions)
    (staged,) = [p for p in made if p.startswith("items/chart.md.assets/")]
    (asset,) = [p for p in made if p.startswith("items/sales.md.assets/")]
    assert made == {  # the rollback is the server's undo: its versions say so
        "items/half.md": [reason, undo],
        staged: [reason, undo],
        "items/sales.md": [reason, undo, reason],  # the model, the rollback, the fallback
        asset: [reason],
    }

    code, out, err = cli(capsys, server, lang, "undo", entry.id)
    assert code == 0, err
    assert sorted(out.splitlines()) == [
        f"deleted {asset} (the entry created it)",
        "restored items/sales.md to version 3",  # the rollback's: the seed's bytes
    ]
    assert contents(root) == before


def test_an_edit_made_since_makes_undo_refuse_and_change_nothing(
    server: RunningIndexer, lang: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    image = tmp_path / "chart.gif"
    image.write_bytes(GIF)
    entry = chart(lang, image)
    root = vault_file(server.workspace, lang, "")
    seed(server, lang, "items/other.md", "# Other\n")
    before = contents(root)
    (notice,) = write_entries(server, [entry])  # no model: the deterministic merge
    assert notice.ok and notice.method == "fallback", notice.error
    (asset,) = notice.updated_files[1:]
    reason = entry_reason(entry.id, entry.title)
    assert reasons_since(server, lang, {}) == {
        "items/other.md": [None],  # the seed, seen by the watcher
        "items/chart.md": [reason],
        asset: [reason],
    }
    note = vault_file(server.workspace, lang, "items/chart.md")
    merged = note.read_text()
    edit_outside(server.workspace, lang, "items/chart.md", merged + "- by a person\n")
    files, versions = snapshot(root), versions_now(server, lang)

    for dry_run in ((), ("--dry-run",)):
        code, out, err = cli(capsys, server, lang, "undo", entry.id, *dry_run)
        assert code == 1 and out == ""
        assert err.startswith(
            f"agent-client: conflict: entry {entry.id} cannot be undone, nothing was changed: "
            "items/chart.md (changed since by external in version 2)"
        ), err
    assert snapshot(root) == files
    assert versions_now(server, lang) == versions

    edit_outside(server.workspace, lang, "items/chart.md", merged)  # the person takes it back
    code, out, _ = cli(capsys, server, lang, "undo", entry.id)
    assert code == 0 and out.splitlines() == [
        "deleted items/chart.md (the entry created it)",
        f"deleted {asset} (the entry created it)",
    ]
    assert contents(root) == before


def test_each_event_is_its_own_version_and_undoes_alone(
    server: RunningIndexer, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [
        MemoryEntry(lang, "event", title, f"about {title}", [], T0 + timedelta(minutes=i))
        for i, title in enumerate(["First", "Lesson\t2", "Third"])
    ]
    notices = write_entries(server, events)
    assert [n.ok for n in notices] == [True] * 3
    day = "events/2026/11/29.md"
    rows = history_versions(server.workspace, lang, day)[::-1]  # oldest first
    first, second, third = (entry_reason(e.id, e.title.replace("\t", " ")) for e in events)
    assert [(r["op"], r["reason"]) for r in rows] == [
        ("write", first),  # the day's preamble, for the event that needed it
        ("append", first),
        ("append", second),
        ("append", third),
    ]
    path = vault_file(server.workspace, lang, day)
    third_section = event_section(events[2], events[2].timestamp).encode()
    after_two = path.read_bytes().removesuffix(third_section)
    code, out, _ = cli(capsys, server, lang, "undo", events[2].id)
    assert code == 0 and out == f"restored {day} to version 3\n"
    assert path.read_bytes() == after_two  # exactly as after the second event

    code, _, err = cli(capsys, server, lang, "undo", events[0].id)
    assert code == 1 and f"nothing was changed: {day} (changed since by tool in version 3" in err
    assert path.read_bytes() == after_two


# -- the commands ----------------------------------------------------------------------


async def three_versions(server: RunningIndexer, lang: str) -> None:
    settings = ClientSettings(workspace=server.workspace)
    async with mcp_vault_connection(lang, settings) as vault:
        await vault.write("items/n.md", "# N\n\nold line\n", if_match="", reason="first")
        await vault.write("items/n.md", "# N\n\nnew line\n", reason="second")
        await vault.append("items/n.md", "more\n", reason="third")


def test_history_lists_shows_and_diffs(
    server: RunningIndexer, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(three_versions(server, lang))
    rows = history_versions(server.workspace, lang, "items/n.md")

    code, out, _ = cli(capsys, server, lang, "history", "items/n.md")
    lines = out.splitlines()
    assert code == 0 and lines[0] == f"items/n.md (vault {lang}): 3 versions, newest first"
    for line, row, reason in zip(lines[1:], rows, ["third", "second", "first"], strict=True):
        assert line.split()[:4] == [str(row["version"]), row["at"], row["op"], "tool"]
        assert line.endswith(f"{row['size']} B  {reason}")

    code, out, _ = cli(capsys, server, lang, "history", "items/n.md", "--limit", "2")
    said = f"items/n.md (vault {lang}): the newest 2 of 3 versions, newest first"
    assert code == 0 and out.splitlines()[0] == said
    code, out, _ = cli(capsys, server, lang, "history", "items/n.md", "--json", "--limit", "2")
    assert code == 0 and json.loads(out) == {"path": "items/n.md", "versions": rows[:2]}

    code, out, _ = cli(capsys, server, lang, "history", "items/n.md", "--show", "1")
    with history_store(server.workspace) as store:
        first = store.get(lang, "items/n.md", 1)
        assert first is not None
        assert code == 0 and out == store.content(first).decode()
    assert out.startswith("---\nid: ") and out.endswith("# N\n\nold line\n")

    code, out, _ = cli(capsys, server, lang, "history", "items/n.md", "--diff", "1")
    assert code == 0 and "-old line\n+new line\n+more\n" in out and "items/n.md@current" in out
    code, out, _ = cli(capsys, server, lang, "history", "items/n.md", "--diff", "2", "--to", "3")
    assert code == 0 and "@@" in out and "+more\n" in out and "-new line" not in out
    code, out, err = cli(capsys, server, lang, "history", "items/n.md", "--diff", "3")
    assert code == 0 and out == "" and err == "(no differences)\n"


def test_history_shows_an_image_as_it_was(
    server: RunningIndexer, lang: str, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = "items/n.md.assets/a.gif"

    async def write_then_delete() -> None:
        settings = ClientSettings(workspace=server.workspace)
        async with mcp_vault_connection(lang, settings) as vault:
            await vault.write(path, base64.b64encode(GIF).decode(), encoding="base64")
            await vault.delete(path)

    asyncio.run(write_then_delete())
    argv = ["history", path, "--show", "1", "--workspace", str(server.workspace)]
    assert main([*argv, "--lang", lang]) == 0
    assert capsysbinary.readouterr().out == GIF


def test_history_and_undo_refusals_and_exit_codes(
    server: RunningIndexer, lang: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def run(*argv: str) -> tuple[int, str]:
        code, _, err = cli(capsys, server, lang, *argv)
        return code, err

    code, err = run("history", "items/none.md")
    assert code == 1 and err.startswith("agent-client: not_found: ")
    assert run("history", "items/none.md", "--to", "2")[0] == 2
    with pytest.raises(SystemExit) as exited:  # (usage, as --show 0 is)
        run("history", "items/none.md", "--limit", "0")
    assert exited.value.code == 2
    with pytest.raises(SystemExit) as exited:
        run("history", "items/none.md", "--show", "1", "--diff", "1")
    assert exited.value.code == 2
    code, err = run("undo", "no-such-entry")
    assert code == 1 and "not_found: no change in this vault was made for entry" in err
    code, err = run("undo", "not an id")
    assert code == 2 and "is not an entry id" in err
    for too_long_or_dotted in ("a" * 129, ".hidden"):  # the message names every rule
        code, err = run("undo", too_long_or_dotted)
        assert code == 2 and "1-128 letters, digits and _ . : -, starting with a letter" in err

    offline = tmp_path / "nobody-serves-this"
    offline.mkdir()
    for argv in (["history", "a.md"], ["undo", "e1"]):
        code = main([*argv, "--workspace", str(offline), "--lang", lang])
        assert code == 3 and "no indexer URL file" in capsys.readouterr().err


def test_undo_dry_run_changes_nothing_and_a_second_undo_is_refused(
    server: RunningIndexer, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = vault_file(server.workspace, lang, "")
    seed(server, lang, "items/go.md", "# Go\n\n- went\n")
    before = contents(root)
    entry = MemoryEntry(lang, "knowledge", "Go", "gone: past participle", [], T0)
    (notice,) = write_entries(server, [entry])
    assert notice.ok, notice.error
    merged, versions = contents(root), versions_now(server, lang)

    code, out, _ = cli(capsys, server, lang, "undo", entry.id, "--dry-run")
    assert code == 0 and out == "would restore items/go.md to version 1\n"
    code, out, _ = cli(capsys, server, lang, "undo", entry.id, "--dry-run", "--json")
    assert json.loads(out) == {
        "entry_id": entry.id,
        "dry_run": True,
        "files": [
            {
                "path": "items/go.md",
                "from_version": 2,
                "to_version": 1,
                "deleted": False,
                "unchanged": False,
            }
        ],
    }
    assert contents(root) == merged and versions_now(server, lang) == versions

    code, out, _ = cli(capsys, server, lang, "undo", entry.id, "--json")
    assert code == 0 and json.loads(out)["files"][0]["version"] == 3
    assert contents(root) == before
    code, out, err = cli(capsys, server, lang, "undo", entry.id)
    assert code == 1 and out == "" and "items/go.md (already undone)" in err


async def test_actions_asked_by_the_user_carry_their_reason(
    server: RunningIndexer, lang: str
) -> None:
    settings = ClientSettings(workspace=server.workspace, tz=UTC)
    async with mcp_vault_connection(lang, settings) as vault:
        await vault.write("items/a.md", "# A\n\nalpha\n", if_match="")
    writer = MemoryWriter(settings)
    try:
        await writer.execute_action_async(EditAction(lang, "items/a.md", body="# A\n\nbeta\n"))
        await writer.execute_action_async(DeleteAction(lang, "items/a.md"))
    finally:
        writer.close()
    newest_first = history_versions(server.workspace, lang, "items/a.md")
    assert [(v["op"], v["reason"]) for v in newest_first[:2]] == [
        ("delete", "memory_writer_action:delete (asked by the user)"),
        ("write", "memory_writer_action:edit (asked by the user)"),
    ]


def test_an_undo_whose_answer_does_not_come_in_time_says_it_may_have_been_done(
    server: RunningIndexer,
    lang: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``undo`` of an entry of many files takes the server longer than the call's
    timeout (10,000 appends: 90 s, past the 30 s default): the undo goes on and is done,
    so the CLI must not say only "offline" (it did), but that it may have been done."""
    files = 200

    async def appended() -> None:
        settings = ClientSettings(workspace=server.workspace)
        async with mcp_vault_connection(lang, settings) as vault:
            for i in range(files):
                await vault.write(f"bulk/n{i:03d}.md", f"# N{i}\n", reason="seed")
            for i in range(files):
                await vault.append(f"bulk/n{i:03d}.md", "- more\n", reason="entry:BULK2 all")

    asyncio.run(appended())
    # (200 files: 0.3-0.5 s of undo on a quiet machine, far past 0.05 s; 0.5 s was not)
    monkeypatch.setenv("AGENT_CLIENT_CALL_TIMEOUT", "0.05")
    code, _, err = cli(capsys, server, lang, "undo", "BULK2")
    assert code == 3 and "indexer_offline" in err
    assert "the undo was sent and may have been done" in err
    assert "`agent-client undo BULK2`" in err
    monkeypatch.setenv("AGENT_CLIENT_CALL_TIMEOUT", "120")
    code, _, err = cli(capsys, server, lang, "undo", "BULK2")  # (waits for the first)
    # (0: on a loaded machine the first call had not reached the server in its 0.05 s)
    assert code == 0 or (code == 1 and "already undone" in err), (code, err)
    assert vault_file(server.workspace, lang, "bulk/n000.md").read_text().endswith("---\n# N0\n")
