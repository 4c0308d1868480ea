"""Recall keeps the nouns a Japanese question writes in hiragana (おにぎりの作り方は: おにぎり;
they were cut away with the particles around them), and adds no keyword where the
hiragana is grammar alone; a recall finds the note by such a noun."""

from __future__ import annotations

from pathlib import Path

import pytest

from indexer.index.service import NoteIndex
from indexer.jobs.keywords import extract_keywords
from indexer.jobs.recall import Recall
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.workspace import Workspace


@pytest.mark.parametrize(
    ("question", "noun"),
    [
        ("おにぎりの作り方は？", "おにぎり"),
        ("すしの作り方", "すし"),
        ("りんごはどこで買える", "りんご"),  # (どこ: a question word, not the noun's)
        ("私はすしが好きです", "すし"),  # (after a particle)
        ("ラーメンとぎょうざの店", "ぎょうざ"),  # (after katakana and a particle)
        ("てんぷらを作りたい", "てんぷら"),
        ("にんじんの切り方", "にんじん"),  # (に opens it: no particle at the start)
        ("駅からすいぞくかんまで歩く", "すいぞくかん"),  # (から, まで)
    ],
)
def test_a_noun_in_hiragana_is_a_keyword(question: str, noun: str) -> None:
    found = extract_keywords(question)
    assert noun in found, found
    assert not {"の", "は", "どこ", "どこで", "が", "と"} & set(found), found


@pytest.mark.parametrize(
    "question",
    [
        "東京の天気はどうですか",
        "会議はいつですか",
        "どこで買えますか",
        "明日の会議について教えてください",
        "誰が書きましたか",
        "ここから駅までどのくらい",
        "それはどういう意味ですか",
        "これは何ですか",
        "日本語を勉強したいです",
        "家にある本を読みたい",
        "新しいプロジェクトについてまとめてください",
    ],
)
def test_hiragana_of_grammar_alone_adds_no_keyword(question: str) -> None:
    """Particles, question words, verb endings (作り, 教えて), a stretch that ends the
    question (を読みたい): no keyword in hiragana."""
    found = extract_keywords(question)
    kana = [word for word in found if all("\u3041" <= char <= "\u309f" for char in word)]
    assert kana == [], found


def test_recall_finds_a_note_by_its_hiragana_noun(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    index = NoteIndex(ws)
    index.open()
    vault.listeners.append(index.note_changed)
    try:
        vault.write("ja", "recipes/onigiri.md", "# おにぎり\n\n塩むすびと梅おにぎりのこと。\n")
        for n in range(5):
            vault.write("ja", f"notes/n{n}.md", f"# メモ{n}\n\nカレーの作り方と方法{n}。\n")
        found = Recall(vault, index).recall("ja", "おにぎりの作り方は？", budget_tokens=400)
        on_demand = [s["path"] for s in found["sources"] if s["layer"] == "on_demand"]
        assert on_demand[:1] == ["recipes/onigiri.md"], found["sources"]
    finally:
        index.close()
