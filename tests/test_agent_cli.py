"""``agent-client`` commands against a real ``indexer serve`` (run in-process via ``main``)."""

from __future__ import annotations

import io
import json
import socket
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer

from agent_client.cli import main


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI reads its settings from the environment; keep the host's LLM out of it.
    for name in ("VAULT_LLM_MODEL", "AGENT_CLIENT_WORKSPACE", "AGENT_CLIENT_LLM"):
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

    code, out, _ = run(capsys, "delete", "--workspace", ws, "--lang", "en", "items/kanji.md")
    assert code == 0 and out.strip() == "deleted items/kanji.md"
    code, _, err = run(capsys, "delete", "--workspace", ws, "--lang", "en", "items/kanji.md")
    assert code == 1 and "not_found" in err


def test_errors_have_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = str(tmp_path)
    code, _, err = run(capsys, "read", "--workspace", ws, "--lang", "en", "items/a.md")
    assert code == 3 and "indexer_offline" in err
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    (tmp_path / "indexer.mcp.url").write_text(f"http://127.0.0.1:{port}/mcp\n")
    code, _, err = run(capsys, "event", "--workspace", ws, "--lang", "en", "--title", "t", "x")
    assert code == 3 and "indexer_offline" in err
    code, _, err = run(capsys, "delete", "--workspace", ws, "--lang", "en", "items/a.md")
    assert code == 3
    code, _, err = run(capsys, "event", "--workspace", ws, "--lang", "EN", "--title", "t", "x")
    assert code == 2 and "lang" in err
    code, _, err = run(capsys, "edit", "--workspace", ws, "--lang", "en", "items/a.md")
    assert code == 2 and "edit:" in err
