"""``agent-client`` commands against a real ``indexer serve`` (run in-process via ``main``)."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer

from agent_client.cli import frontmatter_value, main
from shared.frontmatter import parse_frontmatter
from shared.workspace import OVERVIEW_FILE


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI reads its settings from the environment; keep the host's LLM out of it.
    for name in (
        "VAULT_LLM_MODEL",
        "AGENT_CLIENT_WORKSPACE",
        "AGENT_CLIENT_LLM",
        "AGENT_CLIENT_LANG",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENT_CLIENT_TZ", "UTC")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_remember_event_read_search_edit_delete(
    server: RunningIndexer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = str(server.workspace)
    code, out, _ = run(
        capsys,
        "remember",
        "--workspace",
        ws,
        "--lang",
        "en",
        "--title",
        "Kanji",
        "--tag",
        "ja",
        "--at",
        "2026-11-29T10:00:00+00:00",
        "日 means sun",
    )
    assert code == 0 and out.startswith("Created items/kanji.md") and "  items/kanji.md" in out

    monkeypatch.setattr("sys.stdin", io.StringIO("月 means moon\n"))
    code, out, _ = run(
        capsys, "remember", "--workspace", ws, "--lang", "en", "--title", "kanji", "--json", "-"
    )
    notice = json.loads(out)
    assert code == 0 and notice["ok"] and notice["updated_files"] == ["items/kanji.md"]

    code, out, _ = run(
        capsys,
        "event",
        "--workspace",
        ws,
        "--lang",
        "en",
        "--title",
        "Class",
        "--at",
        "2026-11-29T10:00:00+00:00",
        "Learned two kanji",
    )
    assert code == 0 and "events/2026/11/29.md" in out

    code, out, _ = run(capsys, "read", "--workspace", ws, "--lang", "en", "items/kanji.md")
    assert code == 0 and "日 means sun" in out and "月 means moon" in out

    code, out, _ = run(capsys, "search", "--workspace", ws, "--lang", "en", "moon")
    assert code == 0 and "items/kanji.md" in out
    # words unquoted are one query (was: "unrecognized arguments"), as for the indexer
    code, out, _ = run(capsys, "search", "--workspace", ws, "--lang", "en", "moon", "means")
    assert code == 0 and "items/kanji.md" in out
    code, out, _ = run(capsys, "recall", "--workspace", ws, "--lang", "en", "what", "moon")
    assert code == 0 and "kanji" in out
    code, out, _ = run(capsys, "search", "--workspace", ws, "--lang", "zz", "moon")
    assert code == 0 and "No notes match 'moon'. The vault 'zz' has no notes" in out, out
    assert "(vaults with notes: en)" in out
    code, out, _ = run(capsys, "search", "--workspace", ws, "--lang", "en", "nothinglikeit")
    assert code == 0 and out.strip() == "No notes match 'nothinglikeit'.", out

    code, out, _ = run(
        capsys,
        "edit",
        "--workspace",
        ws,
        "--lang",
        "en",
        "items/kanji.md",
        "--body",
        "# Kanji\n\nrewritten\n",
        "--set",
        "level=N5",
        "--json",
    )
    assert code == 0 and json.loads(out)["path"] == "items/kanji.md"
    note = (server.workspace / "memory/languages/en/vault/items/kanji.md").read_text()
    assert "level: N5" in note and "rewritten" in note and "sun" not in note
    # An edit that changes nothing writes nothing, and says what it did not do ("edited",
    # and a version in history where only ``updated`` changed).
    path = server.workspace / "memory/languages/en/vault/items/kanji.md"
    edit = ("edit", "--workspace", ws, "--lang", "en", "items/kanji.md")
    for asked, said in [
        (["--set", "id=zzz"], "agent-client: id is kept as it is\n"),
        (["--unset", "nosuch"], "agent-client: the note has no nosuch to remove\n"),
        (["--set", "level=N5"], ""),
    ]:
        code, out, err = run(capsys, *edit, *asked)
        assert (code, out, err) == (0, "unchanged items/kanji.md\n", said), asked
        assert path.read_text() == note
    code, out, err = run(capsys, *edit, "--set", "id=zzz", "--set", "level=N4")
    assert code == 0 and out == "edited items/kanji.md\n"
    assert err == "agent-client: id is kept as it is\n"
    assert "level: N4" in path.read_text() and "zzz" not in path.read_text()

    code, out, _ = run(capsys, "delete", "--workspace", ws, "--lang", "en", "items/kanji.md")
    assert code == 0 and out.strip() == "deleted items/kanji.md"
    code, _, err = run(capsys, "delete", "--workspace", ws, "--lang", "en", "items/kanji.md")
    assert code == 1 and "not_found" in err


def test_errors_have_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = str(tmp_path)
    code, _, err = run(capsys, "read", "--workspace", ws, "--lang", "en", "items/a.md")
    assert code == 3 and "indexer_offline" in err
    # one style of error line for every command (remember's said "agent-client: failed: ...")
    code, _, said = run(capsys, "remember", "--workspace", ws, "--lang", "en", "--title", "t", "x")
    assert code == 3 and said == err
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    (tmp_path / "indexer.mcp.url").write_text(f"{url}\n")
    code, _, err = run(capsys, "read", "--workspace", ws, "--lang", "en", "items/a.md")
    assert code == 3 and f"at {url} (connection refused)" in err
    assert "RuntimeError" not in err and f"indexer serve --workspace {tmp_path}" in err
    code, _, err = run(capsys, "event", "--workspace", ws, "--lang", "en", "--title", "t", "x")
    assert code == 3 and "indexer_offline" in err
    code, _, err = run(capsys, "delete", "--workspace", ws, "--lang", "en", "items/a.md")
    assert code == 3
    code, _, err = run(capsys, "event", "--workspace", ws, "--lang", "EN", "--title", "t", "x")
    assert code == 2 and "lang" in err
    code, _, err = run(capsys, "edit", "--workspace", ws, "--lang", "en", "items/a.md")
    assert code == 2 and "edit:" in err


# Run as ``python -c SIGNALLED_IN_IMPORT MODULE SIGNUM ARGS``: the command, which sends
# itself SIGNUM as MODULE begins to import (a Ctrl-C in the seconds an import takes).
SIGNALLED_IN_IMPORT = """
import os, sys
module, signum = sys.argv[1], int(sys.argv[2])
del sys.argv[1:3]
class Signal:
    def find_spec(self, name, path=None, target=None):
        if name == module:
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signum)
        return None
sys.meta_path.insert(0, Signal())
from agent_client.command import run
run()
"""


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_ctrl_c_while_the_command_imports_is_one_line(
    server: RunningIndexer, tmp_path: Path, sent: signal.Signals
) -> None:
    """A Ctrl-C while the command imported (fastmcp, the MCP SDK and openai, seconds)
    printed a traceback and ended with a signal's status; a SIGTERM killed it (status
    143). The SDKs now come as a session opens: a stop there is one line too."""
    started = []  # (both at once: each start is seconds of imports at load)
    try:
        for moment, command in (
            ("agent_client.writer", ["event", "--workspace", str(tmp_path), "--title", "t", "x"]),
            ("fastmcp", ["search", "--workspace", str(server.workspace), "apple"]),
        ):
            args = [sys.executable, "-c", SIGNALLED_IN_IMPORT, moment, str(int(sent))]
            proc = subprocess.Popen(
                [*args, *command, "--lang", "en"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            started.append((moment, proc))
        for moment, proc in started:
            out, err = proc.communicate(timeout=60)
            said = (proc.returncode, out, err)
            assert said == (130, "", "agent-client: interrupted\n"), (moment, said)
    finally:
        for _moment, proc in started:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


def test_lang_defaults_from_the_environment(
    server: RunningIndexer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = str(server.workspace)
    code, _, err = run(capsys, "event", "--workspace", ws, "--title", "t", "x")
    assert code == 2 and "--lang" in err and "AGENT_CLIENT_LANG" in err
    monkeypatch.setenv("AGENT_CLIENT_LANG", "en-cli")
    code, out, _ = run(capsys, "event", "--workspace", ws, "--title", "t", "x")
    assert code == 0 and "events/" in out
    assert (server.workspace / "memory/languages/en-cli/vault/events").is_dir()
    code, _, _ = run(capsys, "read", "--workspace", ws, "--lang", "en-other", "items/none.md")
    assert code == 1  # the flag wins: not_found in en-other
    monkeypatch.setenv("AGENT_CLIENT_LANG", "EN")
    code, _, err = run(capsys, "read", "--workspace", ws, "items/none.md")
    assert code == 2 and "not a vault id" in err


def test_stdin_text_loses_its_byte_order_mark(
    server: RunningIndexer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A text piped from a file a Windows editor saved starts with a BOM: it is no part of
    the text (it stayed, invisible, in the middle of the note)."""
    common = ("--workspace", str(server.workspace), "--lang", "en-bom")
    note = server.workspace / "memory/languages/en-bom/vault/items/bom.md"

    def stdin(data: bytes) -> None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))

    stdin("\ufeffTea at five\r\n".encode())
    assert run(capsys, "remember", *common, "--title", "Bom", "-")[0] == 0
    text = note.read_text(encoding="utf-8")
    assert "\ufeff" not in text and "\n\nTea at five\n" in text
    stdin("\ufeffCoffee at six, \ufeff kept inside\n".encode())
    assert run(capsys, "edit", *common, "items/bom.md", "--body", "-")[0] == 0
    body = parse_frontmatter(note.read_text(encoding="utf-8"))[1]
    assert body == "Coffee at six, \ufeff kept inside\n"


def test_search_prints_snippets_and_says_when_nothing_matched(
    server: RunningIndexer, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = str(server.workspace)
    common = ("--workspace", ws, "--lang", "en-search")
    code, _, _ = run(capsys, "remember", *common, "--title", "Moons", "Phobos orbits Mars")
    assert code == 0
    code, out, _ = run(capsys, "search", *common, "phobos")
    assert code == 0 and out.splitlines()[0] == "items/moons.md  Moons"
    assert "**Phobos**" in out.splitlines()[1]
    code, out, _ = run(capsys, "search", *common, "--offset", "0", "deimos")
    assert code == 0 and out.strip() == "No notes match 'deimos'."


def test_recall_prints_the_block(
    server: RunningIndexer, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ("--workspace", str(server.workspace), "--lang", "en-recall")
    assert run(capsys, "remember", *common, "--title", "Moons", "Deimos orbits Mars")[0] == 0
    code, out, _ = run(capsys, "recall", *common, "--budget", "400", "tell me about Deimos")
    assert code == 0 and "<vault-memory-recall>" in out and "Deimos orbits Mars" in out
    code, out, _ = run(capsys, "recall", *common, "--json", "Deimos")
    result = json.loads(out)
    assert code == 0 and result["tokens"] <= 1500 and result["sources"]
    # A vault with no notes (a typo in --lang): one line saying so, not an empty output.
    empty = ("--workspace", str(server.workspace), "--lang", "en-recall-none")
    code, out, _ = run(capsys, "recall", *empty, "Deimos")
    assert code == 0 and out.startswith("Nothing to recall. The vault 'en-recall-none' has no")
    assert "en-recall" in out.split("vaults with notes: ")[1]
    code, out, _ = run(capsys, "recall", *empty, "--json", "Deimos")
    assert code == 0 and json.loads(out)["block"] == ""  # (JSON as the tool gave it)
    for budget, said in (("5", "at least 50"), ("32001", "at most 32000")):
        with pytest.raises(SystemExit) as exit_:  # bad usage, as every other bad number
            run(capsys, "recall", *common, "--budget", budget, "Deimos")
        assert exit_.value.code == 2 and said in capsys.readouterr().err


def test_set_reads_values_as_yaml_scalars(
    server: RunningIndexer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert frontmatter_value("5") == 5 and frontmatter_value("2.5") == 2.5
    assert frontmatter_value("true") is True and frontmatter_value("false") is False
    texts = ("2026-12-01", "hello", "", "null", "[a, b]", "a: b", ".inf", "{", "yes", "010")
    for text in (*texts, "1.10", "10:30", "!!python/name:os.system"):
        assert frontmatter_value(text) == text
    ws = str(server.workspace)
    common = ("--workspace", ws, "--lang", "en-set")
    assert run(capsys, "remember", *common, "--title", "Task", "do it")[0] == 0
    code, _, err = run(
        capsys,
        "edit",
        *common,
        "items/task.md",
        *("--set", "rating=5", "--set", "done=true", "--set", "due=2026-12-01"),
        *("--set", "owner=me"),
    )
    assert code == 0, err
    text = (server.workspace / "memory/languages/en-set/vault/items/task.md").read_text()
    meta = parse_frontmatter(text)[0]
    assert meta["rating"] == 5 and meta["done"] is True
    assert meta["due"] == "2026-12-01" and meta["owner"] == "me"


def test_set_reads_a_list_in_brackets_for_tags_and_aliases(
    server: RunningIndexer, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--set tags=[a, b]`` sets two tags (as text, the server split it at its comma
    into ``[a`` and ``b]``); another key, or a list of more than texts, keeps the text."""
    common = ("--workspace", str(server.workspace), "--lang", "ko-set")
    assert run(capsys, "remember", *common, "--title", "고양이", "참치를 좋아함")[0] == 0
    note = server.workspace / "memory/languages/ko-set/vault/items/고양이.md"
    code, _, err = run(
        capsys,
        "edit",
        *common,
        "items/고양이.md",
        *("--set", "tags=[동물, 고양이]", "--set", "aliases=[Cat, 猫]"),
        *("--set", "title=[a, b]"),
    )
    assert code == 0, err
    meta = parse_frontmatter(note.read_text())[0]
    assert meta["tags"] == ["동물", "고양이"] and meta["aliases"] == ["Cat", "猫"]
    assert meta["title"] == "[a, b]"
    assert frontmatter_value("[동물, 고양이]", "tags") == ["동물", "고양이"]
    assert frontmatter_value("[a, b]", "title") == "[a, b]"
    for odd in ("[2026-12-01]", "[a, [b]]", "[a, null]", "a, b"):
        assert frontmatter_value(odd, "tags") == odd


def test_search_pages_with_offset(
    server: RunningIndexer, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ("--workspace", str(server.workspace), "--lang", "en-pages")
    for i in range(12):
        assert (
            run(capsys, "remember", *common, "--no-llm", "--title", f"Okapi {i}", "okapi")[0] == 0
        )
    seen: list[str] = []
    for offset in ("0", "5", "10"):
        code, out, err = run(capsys, "search", *common, "--limit", "5", "--offset", offset, "okapi")
        assert code == 0, err
        seen += [line.split()[0] for line in out.splitlines() if line.startswith("items/")]
    assert sorted(seen) == sorted(f"items/okapi-{i}.md" for i in range(12))


def test_read_of_an_image_gives_its_bytes(
    server: RunningIndexer, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    """Redirected (`agent-client read PATH > p.png`), the image itself, not its base64."""
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    assets = server.workspace / "memory/languages/en-img/vault/items/x.md.assets"
    assets.mkdir(parents=True)
    (assets / "p.png").write_bytes(png)
    common = ("--workspace", str(server.workspace), "--lang", "en-img")
    assert main(["read", "items/x.md.assets/p.png", *common]) == 0
    assert capsysbinary.readouterr().out == png
    assert main(["read", "items/x.md.assets/p.png", "--json", *common]) == 0
    assert json.loads(capsysbinary.readouterr().out)["encoding"] == "base64"


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_remember_takes_its_writes_back(
    server: RunningIndexer, tmp_path: Path, sent: signal.Signals
) -> None:
    """Ctrl-C (a traceback) or SIGTERM while the model thought left the image staged for a
    note never written, and the entry's id, which undo needs, was never printed."""
    from helpers.llm_stub import final, running_llm_stub
    from test_agent_writer import png_bytes

    image = tmp_path / "photo.png"
    image.write_bytes(png_bytes())
    lang = f"en-int-{sent.name.lower()}"
    vault = server.workspace / "memory" / "languages" / lang / "vault"
    with running_llm_stub() as stub:
        stub.delay = 60.0  # (at load 25 a 20 s answer came before the signal was taken)
        stub.run([final([], "x")])
        env = {
            **os.environ,
            "AGENT_CLIENT_WORKSPACE": str(server.workspace),
            "AGENT_CLIENT_LANG": lang,
            "VAULT_LLM_MODEL": "stub-model",
            "OPENAI_BASE_URL": stub.base_url,
            "OPENAI_API_KEY": "x",
        }
        command = [sys.executable, "-m", "agent_client", "remember", "--title", "Holiday"]
        proc = subprocess.Popen(
            [*command, "--image", str(image), "we went to the sea"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        deadline = time.monotonic() + 30
        while not stub.requests and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        assert any(vault.rglob("*.png"))  # staged before the model is asked
        proc.send_signal(sent)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "agent-client undo " in err and "Traceback" not in err, err
    assert [p for p in vault.rglob("*") if p.is_file()] == []  # taken back


# Run as ``python -c HELD_AT_WORKSPACE_CHECK ARGS``: the command, its session held where it
# asks the indexer which workspace it serves (a file named by $HELD_MARK says it is there).
HELD_AT_WORKSPACE_CHECK = """
import asyncio, os, pathlib
import agent_client.mcp_client as mcp_client
asked = mcp_client._served_workspace
async def held(client, timeout):
    pathlib.Path(os.environ["HELD_MARK"]).touch()
    await asyncio.sleep(60)
    return await asked(client, timeout)
mcp_client._served_workspace = held
from agent_client.command import run
run()
"""


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupt_as_the_session_opens_prints_one_line(
    server: RunningIndexer, tmp_path: Path, sent: signal.Signals
) -> None:
    """A stop after the client connected, while it asked which workspace the indexer
    serves, left the connection's own task running: the writer's loop, closing, then
    finalized its generators from another task, and pages of asyncio and anyio errors
    ("Attempted to exit cancel scope in a different task", "generator didn't stop after
    athrow()") came before the command's line (about 1 interrupted run in 60)."""
    lang = f"en-open-{sent.name.lower()}"
    mark = tmp_path / "held"
    env = {**os.environ, "AGENT_CLIENT_WORKSPACE": str(server.workspace), "HELD_MARK": str(mark)}
    proc = subprocess.Popen(
        [sys.executable, "-c", HELD_AT_WORKSPACE_CHECK, "remember", "--no-llm", "--lang", lang,
         "--title", "Opening", "said while the session opened"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert mark.exists(), proc.communicate(timeout=30)
    proc.send_signal(sent)
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (130, ""), err
    assert err.startswith("agent-client: interrupted: ") and err.count("\n") == 1, err
    vault = server.workspace / "memory" / "languages" / lang / "vault"
    assert [p for p in vault.rglob("*") if p.is_file()] == []


def test_a_sigterm_after_the_result_is_printed_ends_with_its_status(
    server: RunningIndexer,
) -> None:
    """The seconds a finished command takes to wind down (its connections and threads
    closing) ended by SIGTERM with status 143, after printing that the entry was saved."""
    env = {**os.environ, "AGENT_CLIENT_WORKSPACE": str(server.workspace)}
    command = [sys.executable, "-m", "agent_client", "remember", "--no-llm", "--lang", "en-late"]
    proc = subprocess.Popen(
        [*command, "--title", "Late signal", "a note saved before the signal"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdout is not None
    printed = proc.stdout.readline()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert printed and proc.returncode == 0, (printed, proc.returncode, err)
    vault = server.workspace / "memory" / "languages" / "en-late" / "vault"
    assert [p.name for p in vault.rglob("*.md") if p.name != OVERVIEW_FILE] == ["late-signal.md"]
