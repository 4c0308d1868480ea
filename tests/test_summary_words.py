"""Folder summaries without a model, in the vault's language: the fallback's fixed words
(title, counts and their plural forms, "more not listed", the ellipsis)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from test_summaries import (
    cores,  # noqa: F401 (the fixture that closes the cores)
    note,
    ready,
    summaries_of,
    summary_file,
)

from indexer.core import Core
from indexer.jobs import summary_words
from indexer.jobs.summary_texts import Child, fallback_abstract, fallback_overview, most_recent


def kids(count: int, category: str = "note") -> list[Child]:
    return [Child(f"n{i:02d}.md", f"about {i}", category, i) for i in range(count)]


@pytest.mark.parametrize(
    ("lang", "expected"),
    [
        ("en", ["1 note", "2 notes", "5 notes", "21 notes", "22 notes"]),
        ("ru", ["1 заметка", "2 заметки", "5 заметок", "21 заметка", "22 заметки"]),
        ("uk", ["1 нотатка", "2 нотатки", "5 нотаток", "21 нотатка", "22 нотатки"]),
        ("pl", ["1 notatka", "2 notatki", "5 notatek", "21 notatek", "22 notatki"]),
        ("fr", ["1 note :", "2 notes :", "5 notes :", "21 notes :", "22 notes :"]),
        ("de", ["1 Notiz", "2 Notizen", "5 Notizen", "21 Notizen", "22 Notizen"]),
        ("es", ["1 nota", "2 notas", "5 notas", "21 notas", "22 notas"]),
        ("pt-BR", ["1 nota", "2 notas", "5 notas", "21 notas", "22 notas"]),
        ("it", ["1 nota", "2 note", "5 note", "21 note", "22 note"]),
        ("nl", ["1 notitie", "2 notities", "5 notities", "21 notities", "22 notities"]),
        ("ja", ["1 件のメモ", "2 件のメモ", "5 件のメモ", "21 件のメモ", "22 件のメモ"]),
        ("ko", ["메모 1개", "메모 2개", "메모 5개", "메모 21개", "메모 22개"]),
        ("zh-Hans", ["包含 1 条", "包含 2 条", "包含 5 条", "包含 21 条", "包含 22 条"]),
        ("zh-Hant", ["包含 1 條", "包含 2 條", "包含 5 條", "包含 21 條", "包含 22 條"]),
        ("zh-TW", ["包含 1 條", "包含 2 條", "包含 5 條", "包含 21 條", "包含 22 條"]),
        ("zh-Hans-HK", ["包含 1 条", "包含 2 条", "包含 5 条", "包含 21 条", "包含 22 条"]),
        ("ar", ["ملاحظة واحدة", "ملاحظتان", "5 ملاحظات", "21 ملاحظة", "22 ملاحظة"]),
        ("he", ["פתק אחד", "2 פתקים", "5 פתקים", "21 פתקים", "22 פתקים"]),
        ("tr", ["1 not", "2 not", "5 not", "21 not", "22 not"]),
        ("th", ["1 บันทึก", "2 บันทึก", "5 บันทึก", "21 บันทึก", "22 บันทึก"]),
    ],
)
def test_the_abstract_counts_in_the_vaults_language(lang: str, expected: list[str]) -> None:
    got = [fallback_abstract(lang, kids(n)) for n in (1, 2, 5, 21, 22)]
    assert all(text.startswith(want) for text, want in zip(got, expected, strict=True)), got


def test_arabic_counts_take_its_six_forms() -> None:
    """0, 1, the dual, 3-10 (plural), 11-99 (singular after the number), 100-102; and
    each hundred's 3-10 and 11-99 again (103 plural, 111 singular)."""
    words = summary_words.summary_words("ar-EG")
    assert [words.abstract_text(n, ["x"]).split(":")[0] for n in (0, 1, 2, 3, 10, 11, 99)] == [
        "لا ملاحظات", "ملاحظة واحدة", "ملاحظتان", "3 ملاحظات", "10 ملاحظات", "11 ملاحظة",
        "99 ملاحظة",
    ]  # fmt: skip
    assert [words.abstract_text(n, ["x"]).split(":")[0] for n in (100, 102, 103, 111)] == [
        "100 ملاحظة", "102 ملاحظة", "103 ملاحظات", "111 ملاحظة",
    ]  # fmt: skip
    assert words.abstract_text(2, ["a", "b"]) == "ملاحظتان: a،\u200f b"  # (a mark: RTL order)


def test_abstracts_name_the_categories_as_the_language_lists_them() -> None:
    children = [*kids(2, "preference"), Child("f/", "x", "folder", 9)]
    assert fallback_abstract("fr", children) == "3 notes : preference, folder"
    assert fallback_abstract("ru-RU", children) == "3 заметки: preference, folder"
    assert fallback_abstract("ja", children) == "3 件のメモ：preference、folder"
    assert fallback_abstract("ko", children) == "메모 3개: preference, folder"
    assert fallback_abstract("zh", children) == "包含 3 条preference、folder相关记忆"
    assert fallback_abstract("sv", children) == "3 notes: preference, folder"


@pytest.mark.parametrize(
    ("lang", "one", "two"),
    [
        ("en", "(1 more not listed)", "(2 more not listed)"),
        ("fr", "(1 autre non listé)", "(2 autres non listés)"),
        ("de", "(1 weiterer Eintrag nicht aufgeführt)", "(2 weitere Einträge nicht aufgeführt)"),
        ("it", "(1 altro non elencato)", "(altri 2 non elencati)"),
        ("pt", "(mais 1 não listado)", "(mais 2 não listados)"),
        ("ru", "(ещё 1 не в списке)", "(ещё 2 не в списке)"),
        ("ja", "（ほか 1 件は一覧にありません）", "（ほか 2 件は一覧にありません）"),
        ("zh-Hans", "（另有 1 条未列出）", "（另有 2 条未列出）"),
        ("he", "(עוד 1 לא ברשימה)", "(עוד 2 לא ברשימה)"),
        ("vi", "(còn 1 mục chưa liệt kê)", "(còn 2 mục chưa liệt kê)"),
    ],
)
def test_the_more_not_listed_line_in_the_vaults_language(lang: str, one: str, two: str) -> None:
    for left, line in ((1, one), (2, two)):
        children = kids(3 + left)
        overview = fallback_overview(lang, children, most_recent(children, 3))
        assert overview.endswith(f"\n{line}\n"), overview


def test_a_french_and_a_russian_overview_byte_for_byte() -> None:
    children = [*kids(3), Child("f/", "y" * 60, "folder", 9)]
    shown = most_recent(children, 3)
    assert fallback_overview("fr", children, shown) == (
        f"# Vue d'ensemble\n\n## folder (1)\n- {'y' * 50}…\n"
        "\n## note (3)\n- about 1…\n- about 2…\n(1 autre non listé)\n"
    )
    assert fallback_overview("ru", children, shown) == (
        f"# Обзор\n\n## folder (1)\n- {'y' * 50}…\n"
        "\n## note (3)\n- about 1…\n- about 2…\n(ещё 1 не в списке)\n"
    )
    assert fallback_overview("ja", children[:2]) == (
        "# 概要\n\n## note (2 件)\n- about 0…\n- about 1…\n"
    )
    assert fallback_overview("ko", children[:2]).startswith("# 개요\n\n## note (2개)\n")
    assert fallback_overview("zh-Hant", children[:2]).startswith(
        "# 目錄內容概覽\n\n## note (2條)\n"
    )


async def test_a_french_vaults_folder_gets_its_fallback_in_french(
    tmp_path: Path,
    cores: list[Core],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """And one written in English before French had words (as every one was) is written
    again in French by the next pass, without a model, then kept."""
    note(tmp_path, "items/a.md", "---\ntype: préférence\n---\n# A\n\nAime le thé.\n", "fr")
    note(tmp_path, "items/b.md", "# B\n\nLe café aussi.\n", "fr")
    core = ready(tmp_path, cores)
    with monkeypatch.context() as patch:
        patch.delitem(summary_words._WORDS, "fr")
        await summaries_of(core).run_pass()
    meta, body = summary_file(tmp_path, "items", "fr")
    assert meta["abstract"] == "2 notes: préférence, note"
    assert body.startswith("# Overview\n")
    stats = await summaries_of(core).run_pass()
    assert stats.fallback >= 2 and stats.skipped == 0
    meta, body = summary_file(tmp_path, "items", "fr")
    assert meta["abstract"] == "2 notes : préférence, note"
    assert meta["generated_by"] == "fallback"
    assert body == (
        "# Vue d'ensemble\n\n## préférence (1)\n- Aime le thé.…\n\n## note (1)\n- Le café aussi.…\n"
    )
    root, root_body = summary_file(tmp_path, "", "fr")
    assert root["abstract"] == "1 note : folder"
    assert root_body == "# Vue d'ensemble\n\n## folder (1)\n- 2 notes : préférence, note…\n"
    again = await summaries_of(core).run_pass()
    assert again.fallback == 0 and again.skipped == again.folders


async def test_an_arabic_fallback_listed_without_its_marks_is_written_again_once(
    tmp_path: Path,
    cores: list[Core],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An Arabic, Hebrew or Persian abstract written before its list separator got its
    right-to-left mark (its Latin categories read out of order) is written again with it
    by the next pass, without a model, then kept; a person's own abstract is not."""
    note(tmp_path, "items/a.md", "---\ntype: project\n---\n# أ\n\nنص.\n", "ar")
    note(tmp_path, "items/b.md", "---\ntype: meeting\n---\n# ب\n\nنص.\n", "ar")
    core = ready(tmp_path, cores)
    words = summary_words._WORDS["ar"]
    with monkeypatch.context() as patch:
        patch.setitem(summary_words._WORDS, "ar", dataclasses.replace(words, join="، "))
        await summaries_of(core).run_pass()
    assert summary_file(tmp_path, "items", "ar")[0]["abstract"] == "ملاحظتان: project، meeting"
    stats = await summaries_of(core).run_pass()
    assert stats.fallback >= 1
    meta, _ = summary_file(tmp_path, "items", "ar")
    assert meta["abstract"] == "ملاحظتان: project،\u200f meeting"
    again = await summaries_of(core).run_pass()
    assert again.fallback == 0 and again.skipped == again.folders
