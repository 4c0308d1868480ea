"""``agent-client search --path P`` searches only the notes below folder P, as
``recall --path`` does and the server's ``search`` takes: the option was missing,
so ``search --path items`` was refused ("unrecognized arguments")."""

from __future__ import annotations

import time

import pytest
from helpers.indexer_process import RunningIndexer, vault_dir

from agent_client.cli import build_parser, main


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("VAULT_LLM_MODEL", "AGENT_CLIENT_WORKSPACE", "AGENT_CLIENT_LLM"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENT_CLIENT_LANG", "ar")
    monkeypatch.setenv("AGENT_CLIENT_TZ", "UTC")


def search(capsys: pytest.CaptureFixture[str], ws: str, *argv: str) -> tuple[int, str]:
    code = main(["search", "--workspace", ws, *argv])
    return code, capsys.readouterr().out


def test_search_takes_a_folder(server: RunningIndexer, capsys: pytest.CaptureFixture[str]) -> None:
    root = vault_dir(server, "ar")
    for folder in ("ملاحظات", "أخرى"):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / "كتاب.md").write_text(f"# كتاب {folder}\n\nمكتبة\n", encoding="utf-8")
    ws = str(server.workspace)
    deadline = time.monotonic() + 20
    while True:  # (the indexer reads the files another program wrote as it sees them)
        code, out = search(capsys, ws, "مكتبة")
        if out.count("كتاب.md") == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert code == 0 and out.count("كتاب.md") == 2, out

    code, out = search(capsys, ws, "مكتبة", "--path", "ملاحظات")
    assert code == 0 and "ملاحظات/كتاب.md" in out and "أخرى" not in out, out
    code, out = search(capsys, ws, "غائب", "--path", "ملاحظات")
    assert code == 0 and out.strip() == "No notes match 'غائب' below 'ملاحظات'.", out


def test_the_option_is_said_as_recall_says_it() -> None:
    parser = build_parser()
    assert parser.parse_args(["search", "x", "--path", "items"]).path == "items"
    sub = next(a for a in parser._actions if a.dest == "command")
    helps = {
        name: {a.dest: a.help for a in p._actions}
        for name, p in sub.choices.items()
        if name in ("search", "recall")
    }
    assert helps["search"]["path"] == helps["recall"]["path"]
