"""A string of tags or aliases typed with another script's comma is a list, as one typed
with ASCII's (SPEC: ``"a, b"`` becomes a list): an Arabic or Persian writer types
``شعر، أدب``, a Chinese one ``数据，索引`` or ``东京、大阪``. A write kept each such string
as one tag (``[شعر،, أدب]``, ``[数据，索引]``), which the tags filter never found by
either word. The index reads a person's note at the same commas since schema 27 (ASCII's
only before)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers.vault_stack import reconciled_index

from indexer.index.service import NoteIndex
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.frontmatter import normalize_frontmatter_text, parse_frontmatter, string_list
from shared.workspace import Workspace

NOW = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)


def tags_written(raw: str, key: str = "tags") -> list[str]:
    meta, _ = parse_frontmatter(normalize_frontmatter_text(f"---\n{key}: {raw}\n---\n", now=NOW))
    return meta[key]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("'شعر، أدب'", ["شعر", "أدب"]),  # Arabic comma (Arabic, Persian, Urdu)
        ("'کتاب،ادبیات'", ["کتاب", "ادبیات"]),  # no space after it
        ("'数据，索引'", ["数据", "索引"]),  # full-width comma
        ("'東京、大阪'", ["東京", "大阪"]),  # ideographic comma
        ("'ｱ､ｲ'", ["ｱ", "ｲ"]),  # half-width ideographic comma
        ("'Հայ՝ լեզու'", ["Հայ", "լեզու"]),  # Armenian comma
        ("'ቋንቋ፣ ታሪክ'", ["ቋንቋ", "ታሪክ"]),  # Ethiopic comma
        ("'#标签，#タグ #태그'", ["标签", "タグ", "태그"]),  # hashtags in an item, as with ","
        ("'a, b，c、d'", ["a", "b", "c", "d"]),
        ("'数据，数据'", ["数据"]),  # each once
        ("'数据索引'", ["数据索引"]),  # no comma: one tag
        ("'中文 标签'", ["中文", "标签"]),  # no comma: words, as ASCII's "a b"
    ],
)
def test_a_string_of_tags_is_cut_at_any_scripts_comma(raw: str, expected: list[str]) -> None:
    assert tags_written(raw) == expected


def test_aliases_are_cut_so_too() -> None:
    assert tags_written("'ニューヨーク、NYC'", "aliases") == ["ニューヨーク", "NYC"]
    assert tags_written("'C#، F#'", "aliases") == ["C#", "F#"]


def test_the_index_reads_a_persons_note_so_too() -> None:
    """Lenient mode (a note another program wrote, as the index reads it) cuts at the
    same commas (schema 27: ASCII's only before)."""
    assert string_list("tags", "数据，索引, x", strict=False) == ["数据", "索引", "x"]
    assert string_list("tags", "شعر، أدب", strict=False) == ["شعر", "أدب"]
    assert string_list("tags", "東京、大阪", strict=False) == ["東京", "大阪"]


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[tuple[Vault, NoteIndex]]:
    ws = Workspace(tmp_path / "ws")
    ws.vault_dir("ar").mkdir(parents=True)
    for index in reconciled_index(ws):
        vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
        vault.index_sync = index
        yield vault, index


def test_a_note_written_so_is_found_by_each_tag(stack: tuple[Vault, NoteIndex]) -> None:
    vault, index = stack
    vault.write("ar", "items/شعر.md", "---\ntags: شعر، أدب\n---\n# قصيدة\n\nبيت من الشعر\n")
    meta, _ = parse_frontmatter(vault.read("ar", "items/شعر.md")["content"])
    assert meta["tags"] == ["شعر", "أدب"]
    for tag in ("شعر", "أدب"):
        found = index.search("ar", "", tags=[tag])["results"]
        assert [hit["path"] for hit in found] == ["items/شعر.md"], tag


def test_a_note_another_program_wrote_so_is_found_by_each_tag(tmp_path: Path) -> None:
    """The index reads a person's note at the same commas (schema 27; it failed before:
    'شعر، أدب' was the tags شعر، and أدب, '数据，索引' one tag)."""
    ws = Workspace(tmp_path / "ws")
    notes = ws.vault_dir("ar") / "items"
    notes.mkdir(parents=True)
    (notes / "شعر.md").write_text("---\ntags: شعر، أدب\n---\n# قصيدة\n", encoding="utf-8")
    (notes / "数据.md").write_text("---\ntags: 数据，索引、表\n---\n# x\n", encoding="utf-8")
    for index in reconciled_index(ws):
        for tag, path in (("شعر", "شعر"), ("أدب", "شعر"), ("数据", "数据"), ("表", "数据")):
            found = index.search("ar", "", tags=[tag])["results"]
            assert [hit["path"] for hit in found] == [f"items/{path}.md"], tag
