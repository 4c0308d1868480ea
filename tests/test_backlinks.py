"""Links in other notes follow a move (Obsidian's "update internal links"), on a real
vault with its index and history: only the links change, code stays code, a bare name
stays, an undo of the move's entry puts the notes back."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.history import vault_with_history

from indexer.index.service import NoteIndex
from indexer.vault.vault import Vault

FRONT = "---\ntitle:   About   # hand-written\ntags: [a,  b]\n---\n"


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    """A vault with its history, and the index that narrows grep (as the daemon's)."""
    with vault_with_history(tmp_path, 1 << 20) as made:
        made.sandbox.workspace.vault_dir("en").mkdir(parents=True)
        index = NoteIndex(made.sandbox.workspace)
        index.open()
        made.index_sync = index
        made.grep_planner = index.grep_plan
        yield made
        index.close()


def vault_dir(vault: Vault) -> Path:
    return vault.sandbox.workspace.vault_dir("en")


def put(vault: Vault, rel: str, text: str) -> None:
    """A note another program wrote (its frontmatter as written)."""
    path = vault_dir(vault) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def seen(vault: Vault) -> None:
    """The index has seen what other programs wrote (the server's watcher tells it within
    a moment)."""
    index = vault.index_sync
    assert isinstance(index, NoteIndex)
    index.reconcile()


def test_links_in_other_notes_name_the_moved_note_and_its_images(vault: Vault) -> None:
    vault.write("en", "items/cat.md", "# Cat\n\n![p](cat.md.assets/p.png)\n")
    put(vault, "items/cat.md.assets/p.png", "png")
    about = (
        FRONT + 'See [the cat](../items/cat.md#Fur "t"), [[items/cat]], [[items/cat|Kitty]],'
        " [[items/cat#Fur]], ![[items/cat.md.assets/p.png|200]], "
        "![p](<../items/cat.md.assets/p.png>) and [[cat]].\n\n```\n[code](../items/cat.md)\n"
        "```\n`[[items/cat]]`\n"
    )
    put(vault, "notes/about.md", about)
    put(vault, "notes/elsewhere.md", "[a cat](../other/cat.md)\n")
    put(vault, "other/cat.md", "# Another cat\n")
    seen(vault)
    moved = vault.move("en", "items/cat.md", "animals/cat.md")
    assert moved["relinked"] == ["notes/about.md"]
    expected = (
        FRONT + 'See [the cat](../animals/cat.md#Fur "t"), [[animals/cat]], [[animals/cat|Kitty]],'
        " [[animals/cat#Fur]], ![[animals/cat.md.assets/p.png|200]], "
        "![p](<../animals/cat.md.assets/p.png>) and [[cat]].\n\n```\n[code](../items/cat.md)\n"
        "```\n`[[items/cat]]`\n"
    )
    assert (vault_dir(vault) / "notes/about.md").read_text() == expected
    assert (vault_dir(vault) / "notes/elsewhere.md").read_text() == "[a cat](../other/cat.md)\n"


def test_a_folder_move_and_names_in_any_script(vault: Vault) -> None:
    vault.write("en", "items/猫 笔记.md", "# 猫\n")
    vault.write("en", "items/dog.md", "# Dog\n")
    put(vault, "index.md", "[m](items/%E7%8C%AB%20%E7%AC%94%E8%AE%B0.md) [[items/dog]]\n")
    put(vault, "notes/n.md", "[[items/猫 笔记|猫]] and [d](../items/dog.md)\n")
    seen(vault)
    moved = vault.move("en", "items", "pets")
    assert moved["relinked"] == ["index.md", "notes/n.md"]
    assert (vault_dir(vault) / "index.md").read_text() == (
        "[m](pets/%E7%8C%AB%20%E7%AC%94%E8%AE%B0.md) [[pets/dog]]\n"
    )
    assert (
        vault_dir(vault) / "notes/n.md"
    ).read_text() == "[[pets/猫 笔记|猫]] and [d](../pets/dog.md)\n"


def test_an_undo_of_the_moves_entry_puts_the_other_notes_back(vault: Vault) -> None:
    vault.write("en", "items/plan.md", "# Plan\n")
    vault.write("en", "notes/see.md", "# See\n\n[plan](../items/plan.md)\n")
    before = (vault_dir(vault) / "notes/see.md").read_bytes()
    moved = vault.move("en", "items/plan.md", "done/plan.md", reason="entry:e42 tidy up")
    assert moved["relinked"] == ["notes/see.md"]
    versions = vault.history("en", "notes/see.md")["versions"]
    assert versions[0]["reason"] == "entry:e42 tidy up" and versions[0]["op"] == "write"
    vault.undo("en", "e42")
    assert (vault_dir(vault) / "notes/see.md").read_bytes() == before
    assert (vault_dir(vault) / "items/plan.md").exists()


def test_a_name_too_short_to_look_for_is_left_and_said(
    vault: Vault, caplog: pytest.LogCaptureFixture
) -> None:
    vault.write("en", "items/ab.md", "# AB\n")
    vault.write("en", "notes/n.md", "[ab](../items/ab.md)\n")
    with caplog.at_level(logging.INFO):
        moved = vault.move("en", "items/ab.md", "done/ab.md")
    assert moved["relinked"] == []
    assert "(../items/ab.md)" in (vault_dir(vault) / "notes/n.md").read_text()
    assert "its name is too short" in caplog.text


def test_without_an_index_the_notes_are_found_by_reading_them(tmp_path: Path) -> None:
    with vault_with_history(tmp_path, 1 << 20) as bare:  # (no index: grep reads every note)
        bare.write("en", "items/plan.md", "# Plan\n")
        put(bare, "notes/see.md", "[plan](../items/plan.md)\n")
        assert bare.move("en", "items/plan.md", "done/plan.md")["relinked"] == ["notes/see.md"]
        assert (vault_dir(bare) / "notes/see.md").read_text() == "[plan](../done/plan.md)\n"
