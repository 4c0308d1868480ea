"""An edit is held to an entry's size rule: its body and frontmatter values as content.

README: an entry is refused when its content "is longer than 262,144 characters", and
"an edit is held to the same rules: ... its body and other frontmatter values as
content". The edit route wrote a 300,000-character body as asked (through the tool a
chat model calls, and through ``agent-client edit --body``).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest
from helpers.indexer_process import RunningIndexer

from agent_client.cli import main
from agent_client.hooks import run_memory_writer_action
from agent_client.notices import CollectingNoticeSink
from agent_client.settings import ClientSettings
from agent_client.writer import MemoryWriter
from shared.models import MAX_ENTRY_CONTENT, EditAction

_langs = itertools.count()
NOTE = "---\ntitle: Ёлка\n---\n# Ёлка\n\nНовогодняя ёлка.\n"


@pytest.fixture
def lang() -> str:
    return f"ru-e{next(_langs):03d}"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CLI reads its settings from the environment; keep the host's out of it.
    for name in list(os.environ):
        if name.startswith("AGENT_CLIENT_") or name in ("VAULT_LLM_MODEL", "OPENAI_BASE_URL"):
            monkeypatch.delenv(name)


@pytest.fixture
def writer(server: RunningIndexer) -> Iterator[MemoryWriter]:
    w = MemoryWriter(ClientSettings(workspace=server.workspace), CollectingNoticeSink())
    yield w
    w.close()


def _note(server: RunningIndexer, lang: str) -> bytes:
    """A person's note in ``lang``'s vault; its bytes, to see that a refusal left it."""
    path = server.workspace / "memory" / "languages" / lang / "vault" / "items" / "ёлка.md"
    path.parent.mkdir(parents=True)
    path.write_text(NOTE, encoding="utf-8")
    return path.read_bytes()


def _read(server: RunningIndexer, lang: str) -> bytes:
    vault = server.workspace / "memory" / "languages" / lang / "vault"
    return (vault / "items" / "ёлка.md").read_bytes()


@pytest.mark.parametrize(
    "action",
    [
        EditAction("ru", "items/a.md", body="я" * (MAX_ENTRY_CONTENT + 1)),
        EditAction("ru", "items/a.md", body="🎄" * (MAX_ENTRY_CONTENT + 1)),
        EditAction("ru", "items/a.md", frontmatter={"note": "x" * (MAX_ENTRY_CONTENT + 1)}),
        EditAction("ru", "items/a.md", frontmatter={"k": {"deep": ["y" * 300_000]}}),
    ],
    ids=["body-cyrillic", "body-emoji", "value", "nested-value"],
)
def test_an_edit_longer_than_an_entry_may_be_is_refused(action: EditAction) -> None:
    with pytest.raises(ValueError, match=f"longer than {MAX_ENTRY_CONTENT} characters"):
        action.validate()


def test_an_edit_of_the_largest_size_an_entry_may_have_passes() -> None:
    EditAction("ru", "items/a.md", body="я" * MAX_ENTRY_CONTENT).validate()
    EditAction("ru", "items/a.md", body="", frontmatter={"old": None}).validate()


async def test_the_model_s_huge_edit_is_refused_and_the_note_left(
    server: RunningIndexer, writer: MemoryWriter, lang: str
) -> None:
    before = _note(server, lang)
    asked = {"action": "edit", "path": "items/ёлка.md", "body": "я" * 300_000}
    result = await run_memory_writer_action(asked, writer=writer, lang=lang)
    assert isinstance(result, str)
    assert result.startswith("invalid_argument: edit: the body is longer than 262144")
    assert _read(server, lang) == before
    fits = {"action": "edit", "path": "items/ёлка.md", "body": "Игрушки. " * 1000}
    result = await run_memory_writer_action(fits, writer=writer, lang=lang)
    assert isinstance(result, dict) and result["action"] == "edited"


def test_the_command_s_huge_edit_is_refused_and_the_note_left(
    server: RunningIndexer, lang: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _note(server, lang)
    argv = ["edit", "--workspace", str(server.workspace), "--lang", lang, "items/ёлка.md"]
    code = main([*argv, "--body", "я" * 300_000])
    _, err = capsys.readouterr()
    assert code == 2, err
    assert "the body is longer than 262144 characters" in err and len(err) < 300
    assert _read(server, lang) == before
