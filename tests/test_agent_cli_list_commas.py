"""``agent-client edit --set tags=[...]`` cuts a bracket list at any script's comma, as
a string of tags is cut (README: ``tags=[a, b]`` is a list of tags or aliases; 5ced215:
``شعر، أدب`` and ``数据，索引`` are two tags). The brackets were read as YAML, which
cuts at ASCII's comma only: ``tags=[شعر، أدب]`` wrote one tag ``شعر، أدب`` while
``tags=شعر، أدب`` wrote two,."""

from __future__ import annotations

import os

import pytest
from helpers.indexer_process import RunningIndexer

from agent_client.cli import frontmatter_value, main
from shared.frontmatter import parse_frontmatter


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("AGENT_CLIENT_") or name in ("VAULT_LLM_MODEL", "OPENAI_BASE_URL"):
            monkeypatch.delenv(name)


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("[شعر، أدب]", ["شعر", "أدب"]),  # Arabic comma
        ("[کتاب،ادبیات]", ["کتاب", "ادبیات"]),  # Persian, no space after it
        ("[数据，索引]", ["数据", "索引"]),  # full-width comma
        ("[東京、大阪, 京都]", ["東京", "大阪", "京都"]),  # ideographic and ASCII
        ("[Հայ՝ լեզու]", ["Հայ", "լեզու"]),  # Armenian comma
        ("[a, b]", ["a", "b"]),
        ("[数据，]", ["数据"]),  # an empty piece is no tag
    ],
)
def test_a_bracket_list_is_cut_at_any_script_s_comma(typed: str, expected: list[str]) -> None:
    assert frontmatter_value(typed, "tags") == expected
    assert frontmatter_value(typed, "aliases") == expected


def test_a_quoted_item_stays_whole_and_other_keys_stay_text() -> None:
    """Quotes say "this is one item" (an alias "Smith, John"), as YAML reads them."""
    assert frontmatter_value("['محمد، علي', x]", "aliases") == ["محمد، علي", "x"]
    assert frontmatter_value('["Smith, John"]', "aliases") == ["Smith, John"]
    assert frontmatter_value("[شعر، أدب]", "title") == "[شعر، أدب]"
    for odd in ("[2026-12-01]", "[a، [b]]"):
        assert frontmatter_value(odd, "tags") == odd


def test_the_command_writes_each_tag(
    server: RunningIndexer, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = server.workspace / "memory" / "languages" / "ar-lc" / "vault"
    note = vault / "items" / "قصيدة.md"
    note.parent.mkdir(parents=True)
    note.write_text("---\ntitle: قصيدة\n---\n# قصيدة\n\nبيت من الشعر.\n", encoding="utf-8")
    common = ["--workspace", str(server.workspace), "--lang", "ar-lc"]
    code = main(["edit", *common, "items/قصيدة.md", "--set", "tags=[شعر، أدب]"])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert parse_frontmatter(note.read_text(encoding="utf-8"))[0]["tags"] == ["شعر", "أدب"]
