"""Directory summaries in a real ``indexer serve`` with the stub as its model: the first
start summarizes an existing vault in the background, tool writes and outside edits are
summarized again (debounced), the summaries' own writes cause no further pass, and
``indexer summarize`` does a pass from the command line."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from helpers.history import history_store
from helpers.indexer_process import RunningIndexer, start_indexer, wait_for
from helpers.llm_stub import LLMStub, running_llm_stub, say

pytestmark = pytest.mark.e2e


def answer(request: dict[str, Any], turn: int) -> dict[str, Any]:
    data = json.loads(request["messages"][1]["content"])
    names = ", ".join(f"{c['name']}={c['abstract'][:40]}" for c in data["children"])
    return say(json.dumps({"abstract": f"{data['folder']}: {names}", "overview": "# Contents\n"}))


@pytest.fixture(scope="module")
def stub() -> Iterator[LLMStub]:
    with running_llm_stub() as running:
        running.run(answer)
        yield running


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, stub: LLMStub) -> Iterator[RunningIndexer]:
    """A server started on a vault that already holds notes, with a slow model."""
    ws = tmp_path_factory.mktemp("summaries") / "ws"
    vault = ws / "memory" / "languages" / "en" / "vault"
    for rel, text in {
        "items/go.md": "# Go\n\nThe past tense of go is went.\n",
        "items/grammar/be.md": "# Be\n\nwas, were, been\n",
    }.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text)
    stub.hold = threading.Event()  # the model answers nothing until the first test says
    env = {
        "INDEXER_LLM_MODEL": "stub",
        "INDEXER_LLM_BASE_URL": stub.base_url,
        "INDEXER_SUMMARIES_DEBOUNCE": "0.1",
    }
    running = start_indexer(ws, env=env)
    try:
        yield running
    finally:
        running.stop()
        stub.hold = None


async def summary(server: RunningIndexer, path: str = "") -> dict[str, Any]:
    async with server.client() as client:
        result = await client.call_tool("summary", {"lang": "en", "path": path})
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def overview_file(server: RunningIndexer, folder: str) -> Path:
    return server.workspace / "memory" / "languages" / "en" / "vault" / folder / ".overview.md"


async def settled(server: RunningIndexer, path: str, contains: str) -> dict[str, Any]:
    """The folder's summary once it is current and says ``contains``."""
    deadline = time.monotonic() + 20
    while True:
        found = await summary(server, path)
        if not found["stale"] and contains in found["abstract"]:
            return found
        assert time.monotonic() < deadline, found
        await asyncio.sleep(0.05)


async def test_the_first_start_summarizes_in_the_background(
    server: RunningIndexer, stub: LLMStub
) -> None:
    early = await summary(server, "items")  # serving, while the pass waits for the model
    assert early["stale"] is True and early["generated_by"] == "fallback"  # a preview
    assert not overview_file(server, "items/grammar").exists()
    assert stub.hold is not None
    wait_for(lambda: stub.in_flight, 10, what="the first model request")
    stub.hold.set()
    root = await settled(server, "", "items/=items/: go.md=The past tense")
    assert root["generated_by"] == "llm" and root["child_count"] == 1
    assert overview_file(server, "items/grammar").is_file()


def release(stub: LLMStub) -> None:
    """Let the model answer (when a test runs without the first one)."""
    if stub.hold is not None:
        stub.hold.set()


async def test_changes_are_summarized_again_without_ping_pong(
    server: RunningIndexer, stub: LLMStub
) -> None:
    release(stub)
    await settled(server, "", "items/")
    async with server.client() as client:
        await client.call_tool(
            "write", {"lang": "en", "path": "items/grammar/do.md", "content": "# Do\n\ndid\n"}
        )
    found = await settled(server, "items/grammar", "do.md=did")
    assert found["child_count"] == 2

    outside = server.workspace / "memory" / "languages" / "en" / "vault" / "items" / "go.md"
    outside.write_text("# Go\n\nGone, edited in an editor.\n")  # the watcher sees it
    await settled(server, "items", "go.md=Gone, edited in an editor.")
    await settled(server, "", "items/: go.md=Gone")  # the root is in every pass: all done

    files = [overview_file(server, f) for f in ("", "items", "items/grammar")]
    before = [(len(stub.requests), [f.stat().st_mtime_ns for f in files])]
    time.sleep(1.0)  # ten debounce periods: the summaries' own writes start nothing
    assert before == [(len(stub.requests), [f.stat().st_mtime_ns for f in files])]


async def test_rest_and_search_see_the_summaries(server: RunningIndexer, stub: LLMStub) -> None:
    release(stub)
    await settled(server, "items", "go.md")
    base = server.url.removesuffix("/mcp") + "/api/v1"
    with httpx2.Client(base_url=base, timeout=30) as http:
        assert http.get("/status").json()["features"]["summaries"] is True
        items = http.get("/en/summary", params={"path": "items"}).json()
        assert items["path"] == "items" and items["generated_by"] == "llm"
        typed = http.get("/en/search", params={"q": "grammar", "type": "summary"}).json()
        assert "items/grammar/.overview.md" in {r["path"] for r in typed["results"]}
        plain = http.get("/en/search", params={"q": "grammar"}).json()
        assert not any(r["path"].endswith(".overview.md") for r in plain["results"])
        listed = http.get("/en/notes", params={"pattern": "**/*"}).json()["paths"]
        assert not any(".overview.md" in p for p in listed)


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "indexer", "summarize", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "INDEXER_WORKSPACE": "", "INDEXER_LLM_MODEL": ""},
    )


def test_indexer_summarize_prints_progress_and_a_table(tmp_path: Path, stub: LLMStub) -> None:
    vault = tmp_path / "ws" / "memory" / "languages" / "en" / "vault"
    for n in range(3):
        (vault / f"f{n}").mkdir(parents=True)
        (vault / f"f{n}" / "a.md").write_text(f"# A{n}\n\nnote {n}\n")
    (vault / "pictures").mkdir()  # (no note: looked at, no summary)
    (vault / "pictures" / "cat.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    ws = ["--workspace", str(tmp_path / "ws")]
    first = cli(*ws)
    assert first.returncode == 0, first.stderr
    assert "indexer summarize: 5/5 folders looked at" in first.stderr.splitlines()
    heads, values, noteless = first.stdout.splitlines()[:3]
    assert heads == "folders  by model  by fallback  skipped  removed  seconds"
    assert values.split()[:5] == ["4", "0", "4", "0", "0"]
    assert noteless == "1 folder(s) hold no note: no summary"  # (it said 5/5, then 4)
    again = cli(*ws, "--lang", "en")
    assert again.stdout.splitlines()[1].split()[:5] == ["4", "0", "0", "4", "0"]
    stub.run(answer)
    model = cli(*ws, "--force", "--llm-model", "stub", "--llm-base-url", stub.base_url)
    assert model.returncode == 0, model.stderr
    assert model.stdout.splitlines()[1].split()[:5] == ["4", "4", "0", "0", "0"]
    assert len(stub.requests) == 4
    stub.run(lambda request, turn: say("not the JSON asked for"))
    failed = cli(*ws, "--force", "--llm-model", "stub", "--llm-base-url", stub.base_url)
    assert failed.stdout.splitlines()[1].split()[:5] == ["4", "0", "0", "4", "0"]
    # (it said "those folders got the fallback": a forced pass keeps the model's summaries)
    assert "failed 4 time(s): 0 folder(s) got the fallback summary; a folder" in failed.stdout
    refused = cli(*ws, "--lang", "xx")
    assert refused.returncode == 2  # bad usage, as maintain says it (was 1: "failed")
    assert f"not_found: there is no vault 'xx' in {ws[-1]} (its vaults: en)" in refused.stderr
    empty = cli(*ws, "--lang", "")  # not "every vault"
    assert empty.returncode == 2 and "'' is not a vault id" in empty.stderr


def test_a_vault_served_as_anothers_is_no_vault_to_summarize(tmp_path: Path) -> None:
    """``fr/vault`` a link to ``en/vault``: never served (``Workspace.shared_vaults``),
    but ``--lang fr`` passed as its folder was there, and wrote summaries into en's
    folders through fr's name. Now bad usage, the vaults named, nothing written."""
    langs = tmp_path / "ws" / "memory" / "languages"
    (langs / "en" / "vault" / "f").mkdir(parents=True)
    (langs / "en" / "vault" / "f" / "a.md").write_text("# A\n\nnote\n")
    (langs / "fr").mkdir()
    (langs / "fr" / "vault").symlink_to("../en/vault")
    refused = cli("--workspace", str(tmp_path / "ws"), "--lang", "fr")
    assert refused.returncode == 2, refused.stderr
    assert "there is no vault 'fr'" in refused.stderr and "(its vaults: en)" in refused.stderr
    assert sorted(p.name for p in (langs / "en" / "vault").rglob("*")) == ["a.md", "f"]


def test_a_ctrl_c_while_summarize_waits_for_the_model_is_one_line(
    tmp_path: Path, stub: LLMStub
) -> None:
    """A long pass is the normal case: Ctrl-C ended it with a traceback and a signal's
    status (-2)."""
    vault = tmp_path / "ws" / "memory" / "languages" / "en" / "vault"
    (vault / "f").mkdir(parents=True)
    (vault / "f" / "a.md").write_text("# A\n\nnote\n")
    while stub.in_flight:
        time.sleep(0.02)
    stub.delay = 30.0
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "indexer", "summarize", "--workspace", str(tmp_path / "ws")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "INDEXER_LLM_MODEL": "stub", "INDEXER_LLM_BASE_URL": stub.base_url},
        )
        wait_for(lambda: stub.in_flight > 0, 30, what="the model asked")
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=30)
    finally:
        stub.delay = 0.0
    assert process.returncode == 130, err
    assert (
        "Traceback" not in err and err.strip().splitlines()[-1] == "indexer summarize: interrupted"
    )


def test_without_a_server_history_hears_the_cli_as_it_hears_the_server(tmp_path: Path) -> None:
    """``indexer summarize`` (and ``indexer search``) bring the index up to date while no
    server runs: a hand edit of a summary was overwritten with no version anywhere, and
    an outside edit they reconciled was never recorded (the next server found nothing
    new)."""
    ws = tmp_path / "ws"
    vault = ws / "memory" / "languages" / "en" / "vault"
    (vault / "a").mkdir(parents=True)
    (vault / "a" / "n.md").write_text("# N\n\nnote a\n")
    assert cli("--workspace", str(ws)).returncode == 0
    overview = vault / "a" / ".overview.md"
    overview.write_text(overview.read_text() + "\nMY HAND EDIT\n")
    (vault / "a" / "n2.md").write_text("# N2\n\nanother\n")  # the folder changed: redone
    done = cli("--workspace", str(ws))
    assert done.returncode == 0, done.stderr
    assert "MY HAND EDIT" not in overview.read_text()
    (vault / "a" / "n.md").write_text("# N\n\nnote a, edited while no server ran\n")
    searched = subprocess.run(
        [sys.executable, "-m", "indexer", "search", "--workspace", str(ws), "--lang", "en", "x"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "INDEXER_WORKSPACE": ""},
    )
    assert searched.returncode == 0, searched.stderr
    with history_store(ws) as store:
        kept = [store.content(v) for v in store.versions("en", "a/.overview.md", 100)]
        edits = [store.content(v) for v in store.versions("en", "a/n.md", 100)]
    assert any(b"MY HAND EDIT" in text for text in kept), kept
    # (with the text the index held before it: history had never seen the note)
    assert edits == [b"# N\n\nnote a, edited while no server ran\n", b"# N\n\nnote a\n"]


def test_a_search_without_a_server_answers_whatever_history_and_unused_settings_hold(
    tmp_path: Path,
) -> None:
    """History's part in a search run while no server serves must not stop the search:
    a damaged history file or a malformed setting no search uses made it fail."""
    ws = tmp_path / "ws"
    vault = ws / "memory" / "languages" / "en" / "vault"
    vault.mkdir(parents=True)
    (vault / "apple.md").write_text("# Apple\n\nred fruit\n")
    run = [sys.executable, "-m", "indexer", "search", "--workspace", str(ws), "--lang", "en"]
    env = {**os.environ, "INDEXER_WORKSPACE": ""}
    first = subprocess.run([*run, "fruit"], capture_output=True, text=True, timeout=60, env=env)
    assert first.returncode == 0, first.stderr
    for damaged in (ws / ".indexer" / "history").iterdir():
        damaged.write_bytes(b"this is not a database " * 200)
    (vault / "banana.md").write_text("# Banana\n\nyellow fruit\n")
    env["INDEXER_SUMMARIES_DEBOUNCE"] = "soon"
    again = subprocess.run([*run, "fruit"], capture_output=True, text=True, timeout=60, env=env)
    assert again.returncode == 0 and "2 notes match" in again.stdout, again.stderr


def test_a_hand_edit_of_a_summary_comes_back_by_every_route(tmp_path: Path) -> None:
    """README: "A summary you edited is made again (history keeps each version)". In a
    real server the edited version was recorded, but the history tool and route, ``read``
    with a version, ``diff``, ``restore`` and ``indexer history --show`` all answered
    forbidden_path for ``.overview.md``: the edit was out of every reach."""
    ws = tmp_path / "ws"
    vault = ws / "memory" / "languages" / "en" / "vault"
    (vault / "proj").mkdir(parents=True)
    (vault / "proj" / "a.md").write_text("# A\n\nFirst note.\n")
    overview = vault / "proj" / ".overview.md"
    env = {"INDEXER_SUMMARIES_DEBOUNCE": "0.1", "INDEXER_LLM_MODEL": ""}
    server = start_indexer(ws, env=env)
    try:
        wait_for(overview.exists, 30, what="the first summary")
        remark = "\nMY REMARK: the deadline is 3 March.\n"
        overview.write_text(overview.read_text() + remark)
        with httpx2.Client(base_url=server.url.removesuffix("/mcp") + "/api/v1/en") as http:
            http.put("/notes/proj/b.md", json={"content": "# B\n\nSecond note.\n"})
            wait_for(lambda: "MY REMARK" not in overview.read_text(), 30, what="a new summary")
            listed = http.get("/history/proj/.overview.md")
            assert listed.status_code == 200, listed.text
            versions = {
                v["version"]: http.get("/notes/proj/.overview.md", params={"version": v["version"]})
                for v in listed.json()["versions"]
            }
            edited = next(n for n, got in versions.items() if remark in got.json()["content"])
            old = versions[edited]
            diff = http.get("/diff/proj/.overview.md", params={"from": edited})
            assert "-MY REMARK: the deadline is 3 March." in diff.json()["diff"]
            show = ["--lang", "en", "--show", str(edited), "proj/.overview.md"]
            shown = subprocess.run(
                [sys.executable, "-m", "indexer", "history", "--workspace", str(ws), *show],
                capture_output=True,
                text=True,
                timeout=60,
                env={**os.environ, "INDEXER_WORKSPACE": ""},
            )
            assert shown.returncode == 0 and shown.stdout == old.json()["content"], shown
            current = http.get("/notes/proj/.overview.md").json()["etag"]
            back = http.post(
                "/restore",
                json={"path": "proj/.overview.md", "version": edited, "if_match": current},
            )
            assert back.status_code == 200, back.text
            assert overview.read_text() == old.json()["content"]
            refused = http.put("/notes/proj/.overview.md", json={"content": "x"})
            assert refused.status_code == 403 and overview.read_text().endswith(remark)

        async def by_mcp() -> None:
            async with server.client() as client:
                got = await client.call_tool(
                    "read", {"lang": "en", "path": "proj/.overview.md", "version": edited}
                )
                assert isinstance(got.structured_content, dict)
                assert got.structured_content["content"].endswith(remark)
                found = await client.call_tool("find", {"lang": "en", "pattern": "**/*"})
                assert isinstance(found.structured_content, dict)
                assert found.structured_content["paths"] == ["proj/a.md", "proj/b.md"]

        asyncio.run(by_mcp())
    finally:
        server.stop()


def test_summarize_while_a_server_runs_is_the_servers_pass_recorded_as_its_job(
    tmp_path: Path,
) -> None:
    """While a server runs, ``indexer summarize`` has it run the pass: written by the
    command, the summaries were recorded as another program's edits with no reason
    (and the server's own pass could write the same folder at once); a hand edit made
    before is kept in history."""
    ws = tmp_path / "ws"
    vault = ws / "memory" / "languages" / "en" / "vault"
    (vault / "proj").mkdir(parents=True)
    (vault / "proj" / "a.md").write_text("# A\n\nFirst note.\n")
    server = start_indexer(ws, env={"INDEXER_SUMMARIES_DEBOUNCE": "0.1", "INDEXER_LLM_MODEL": ""})
    try:
        overview = vault / "proj" / ".overview.md"
        wait_for(overview.exists, 30, what="the first summary")
        overview.write_text(overview.read_text() + "\nMY REMARK\n")
        (vault / "proj" / "b.md").write_text("# B\n\nSecond note.\n")
        done = cli("--workspace", str(ws), "--force")
        assert done.returncode == 0, done.stderr
        assert "indexer summarize: the running indexer summarizes" in done.stderr
        assert "(by the running indexer, with its own model settings)" in done.stdout
        assert done.stdout.splitlines()[1].split()[:3] == ["2", "0", "2"]
        made = overview.read_bytes()
        assert b"MY REMARK" not in made and b"child_count: 2" in made

        def recorded() -> list[tuple[bytes | None, str, str | None]]:
            with history_store(ws) as store:
                return [
                    (store.content(v), v.actor, v.reason)
                    for v in store.versions("en", "proj/.overview.md", 50)
                ]

        assert recorded()[0] == (made, "job:summaries", "folder summary")
        assert any(b"MY REMARK" in (text or b"") for text, _, _ in recorded())
        assert all(reason for text, _, reason in recorded() if b"MY REMARK" not in (text or b""))
        with httpx2.Client(base_url=server.url.removesuffix("/mcp") + "/api/v1") as http:
            for body, code in [
                ({"lang": "xx-bad!"}, "invalid_lang"),
                ({"lang": "fr"}, "not_found"),
                ({"force": "yes"}, "invalid_argument"),
                ({"langs": ["en"]}, "invalid_argument"),
            ]:
                refused = http.post("/summarize", json=body)
                assert refused.json()["error"]["code"] == code, body
            assert http.post("/summarize", content=b"lang=en").status_code == 415
        assert recorded()[0][0] == made  # (nothing written by the refusals)
    finally:
        server.stop()
    off = start_indexer(ws, env={"INDEXER_SUMMARIES": "0", "INDEXER_LLM_MODEL": ""})
    try:  # (its summaries off: the command writes them itself, as before)
        (vault / "proj" / "c.md").write_text("# C\n\nThird note.\n")
        done = cli("--workspace", str(ws))
        assert done.returncode == 0, done.stderr
        assert "(by the running indexer" not in done.stdout
        wait_for(lambda: b"child_count: 3" in overview.read_bytes(), 10, what="the summary")
        with httpx2.Client(base_url=off.url.removesuffix("/mcp") + "/api/v1") as http:
            assert http.post("/summarize", json={}).json()["error"]["code"] == "not_found"
    finally:
        off.stop()
