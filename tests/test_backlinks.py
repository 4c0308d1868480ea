"""Links in other notes follow a move (Obsidian's "update internal links"), on a real
vault with its index and history: only the links change, code stays code, a bare name
stays, an undo of the move's entry puts the notes back."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.history import vault_with_history
from helpers.opened_files import files_opened

from indexer.index.service import NoteIndex
from indexer.vault import backlinks, relinking
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


def test_a_link_written_as_obsidian_writes_it_follows_the_move(vault: Vault) -> None:
    """Obsidian encodes a link's spaces and keeps its letters (``猫%20笔记.md``): the
    note holding it is found (the name is in it neither as typed nor encoded in full),
    and its link keeps that style."""
    vault.write("en", "items/猫 笔记.md", "# 猫\n")
    put(vault, "notes/n.md", "见 [猫](../items/猫%20笔记.md) 和 ![图](../items/猫%20笔记.md)\n")
    seen(vault)
    moved = vault.move("en", "items/猫 笔记.md", "pets/猫#1 笔记.md")
    assert moved["relinked"] == ["notes/n.md"]
    assert (vault_dir(vault) / "notes/n.md").read_text() == (
        "见 [猫](../pets/猫%231%20笔记.md) 和 ![图](../pets/猫%231%20笔记.md)\n"
    )


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


def test_a_short_name_is_looked_for_in_its_links(vault: Vault) -> None:
    vault.write("en", "items/ab.md", "# AB\n")
    vault.write("en", "items/猫.md", "# 猫\n")
    vault.write("en", "x/a.md", "# A\n")
    put(vault, "notes/n.md", "[ab](../items/ab.md) [[items/ab|AB]] and [[items/猫]]\n")
    put(vault, "notes/m.md", "[a](<../x/a.md>) ![[x/a]] (a) [[a]]\n")
    put(vault, "notes/other.md", "# Other\n\nab, 猫 and a word: abc.\n")
    seen(vault)
    assert vault.move("en", "items/ab.md", "done/ab.md")["relinked"] == ["notes/n.md"]
    assert vault.move("en", "items/猫.md", "animals/猫.md")["relinked"] == ["notes/n.md"]
    assert vault.move("en", "x/a.md", "y/a.md")["relinked"] == ["notes/m.md"]
    assert (vault_dir(vault) / "notes/n.md").read_text() == (
        "[ab](../done/ab.md) [[done/ab|AB]] and [[animals/猫]]\n"
    )
    assert (vault_dir(vault) / "notes/m.md").read_text() == "[a](<../y/a.md>) ![[y/a]] (a) [[a]]\n"
    assert (vault_dir(vault) / "notes/other.md").read_text().endswith("abc.\n")
    # A rename leaving the short name finding nothing: its bare links name the new one.
    put(vault, "notes/k.md", "[[ab]] and [[ab|x]]\n")
    seen(vault)
    moved = vault.move("en", "done/ab.md", "done/abc.md")
    assert moved["relinked"] == ["notes/k.md", "notes/n.md"]
    assert (vault_dir(vault) / "notes/k.md").read_text() == "[[abc]] and [[abc|x]]\n"
    assert (
        (vault_dir(vault) / "notes/n.md")
        .read_text()
        .startswith("[ab](../done/abc.md) [[done/abc|AB]]")
    )


def test_a_short_names_link_spellings_are_long_enough_to_narrow() -> None:
    assert backlinks.link_spellings("cat") == {"cat"}
    assert backlinks.link_spellings("ab") == {"[[ab", "(ab", "<ab", "/ab"}
    one = backlinks.link_spellings("猫")
    assert "[[猫" in one and "(猫)" in one and "/猫]" in one and "(猫." in one
    assert all(len(spelling) >= 3 for spelling in one)


def test_without_an_index_the_notes_are_found_by_reading_them(tmp_path: Path) -> None:
    with vault_with_history(tmp_path, 1 << 20) as bare:  # (no index: grep reads every note)
        bare.write("en", "items/plan.md", "# Plan\n")
        put(bare, "notes/see.md", "[plan](../items/plan.md)\n")
        assert bare.move("en", "items/plan.md", "done/plan.md")["relinked"] == ["notes/see.md"]
        assert (vault_dir(bare) / "notes/see.md").read_text() == "[plan](../done/plan.md)\n"


def test_a_read_only_or_hard_linked_note_is_left_and_answered_as_skipped(vault: Vault) -> None:
    vault.write("en", "items/plan.md", "# Plan\n")
    put(vault, "notes/locked.md", "[plan](../items/plan.md)\n")
    put(vault, "notes/linked.md", "[plan](../items/plan.md) too\n")
    put(vault, "notes/open.md", "[plan](../items/plan.md) as well\n")
    folder = vault_dir(vault)
    (folder / "notes/locked.md").chmod(0o444)
    os.link(folder / "notes/linked.md", tmp_link := folder.parent / "linked-elsewhere.md")
    seen(vault)
    before = {rel: (folder / rel).read_bytes() for rel in ("notes/locked.md", "notes/linked.md")}
    moved = vault.move("en", "items/plan.md", "done/plan.md")
    assert moved["relinked"] == ["notes/open.md"]
    skipped = {skip["path"]: skip["error"] for skip in moved["relink_skipped"]}
    assert set(skipped) == {"notes/locked.md", "notes/linked.md"}
    assert "read-only" in skipped["notes/locked.md"]
    assert "hard link" in skipped["notes/linked.md"]
    for rel, data in before.items():
        assert (folder / rel).read_bytes() == data
        assert all(v["op"] != "write" for v in vault.history("en", rel)["versions"])
    assert tmp_link.read_bytes() == before["notes/linked.md"]


def test_a_link_by_name_follows_a_rename_that_leaves_the_name_finding_nothing(
    vault: Vault,
) -> None:
    vault.write("en", "items/cat.md", "# Cat\n")
    vault.write("en", "items/dog.md", "# Dog\n")
    put(vault, "other/dog.md", "# Another dog\n")
    put(vault, "notes/n.md", "[[cat]], [[cat|Kitty]], [[Cat#Fur]], [c](cat.md) and [[dog]]\n")
    seen(vault)
    moved = vault.move("en", "items/cat.md", "items/kitten.md")
    assert moved["relinked"] == ["notes/n.md"]
    assert (vault_dir(vault) / "notes/n.md").read_text() == (
        "[[kitten]], [[kitten|Kitty]], [[kitten#Fur]], [c](kitten.md) and [[dog]]\n"
    )
    put(vault, "notes/d.md", "[[dog]] and [[items/dog]]\n")
    seen(vault)
    moved = vault.move("en", "items/dog.md", "items/puppy.md")  # ([[dog]] finds other/dog.md)
    assert moved["relinked"] == ["notes/d.md"]
    assert (vault_dir(vault) / "notes/d.md").read_text() == "[[dog]] and [[items/puppy]]\n"


def test_a_new_name_held_twice_is_written_as_the_full_path(vault: Vault) -> None:
    vault.write("en", "zoo/pets/cat.md", "# Cat\n")
    put(vault, "elsewhere/kitten.md", "# Another kitten\n")
    put(vault, "notes/n.md", "[[pets/cat]] and ![[cat]]\n")
    seen(vault)
    vault.move("en", "zoo/pets/cat.md", "zoo/pets/kitten.md")
    assert (vault_dir(vault) / "notes/n.md").read_text() == (
        "[[pets/kitten]] and ![[zoo/pets/kitten]]\n"
    )
    vault.move("en", "zoo/pets", "zoo/animals")  # (a folder's name, at a path's end)
    assert (vault_dir(vault) / "notes/n.md").read_text() == (
        "[[animals/kitten]] and ![[zoo/animals/kitten]]\n"
    )


def test_a_note_changed_between_its_read_and_its_rewrite_is_read_again(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault.write("en", "items/plan.md", "# Plan\n")
    put(vault, "notes/see.md", "[plan](../items/plan.md)\n")
    seen(vault)
    real = backlinks.rewrite_links
    calls: list[str] = []

    def meanwhile(text: str, *args: object) -> str:
        """Another program saves the note while its links are rewritten, once."""
        if not calls:
            put(vault, "notes/see.md", text + "Added meanwhile.\n")
        calls.append(text)
        return real(text, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(backlinks, "rewrite_links", meanwhile)
    assert vault.move("en", "items/plan.md", "done/plan.md")["relinked"] == ["notes/see.md"]
    assert len(calls) == 2
    assert (vault_dir(vault) / "notes/see.md").read_text() == (
        "[plan](../done/plan.md)\nAdded meanwhile.\n"
    )


def test_the_notes_past_the_bounds_are_answered_as_skipped(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(backlinks, "MAX_NOTES", 1)
    vault.write("en", "items/plan.md", "# Plan\n")
    for name in ("a", "b", "c"):
        put(vault, f"notes/{name}.md", "[plan](../items/plan.md)\n")
    seen(vault)
    moved = vault.move("en", "items/plan.md", "done/plan.md")
    assert moved["relinked"] == ["notes/a.md"]
    assert [skip["path"] for skip in moved["relink_skipped"]] == ["notes/b.md", "notes/c.md"]
    assert "not looked at" in moved["relink_skipped"][0]["error"]
    assert (vault_dir(vault) / "notes/c.md").read_text() == "[plan](../items/plan.md)\n"


def test_a_move_keeping_the_name_does_not_walk_the_vault_for_links_by_name(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault.write("en", "items/cat.md", "# Cat\n")
    put(vault, "notes/n.md", "[[cat]] and [c](cat.md) and [[items/cat]]\n")
    seen(vault)

    def walked(*args: object, **kwargs: object) -> dict[str, list[str]]:
        raise AssertionError("the vault was walked (a second at 100,000 notes)")

    monkeypatch.setattr(relinking, "names_in_vault", walked)
    assert vault.move("en", "items/cat.md", "pets/cat.md")["relinked"] == ["notes/n.md"]
    assert (vault_dir(vault) / "notes/n.md").read_text() == (
        "[[cat]] and [c](cat.md) and [[pets/cat]]\n"
    )


def test_a_link_spelled_in_nfd_follows_the_move(vault: Vault) -> None:
    vault.write("en", "items/café.md", "# Café\n")
    put(vault, "notes/n.md", unicodedata.normalize("NFD", "[[items/café]] and [[café]]\n"))
    seen(vault)
    assert vault.move("en", "items/café.md", "places/bistro.md")["relinked"] == ["notes/n.md"]
    assert (vault_dir(vault) / "notes/n.md").read_text() == "[[places/bistro]] and [[bistro]]\n"


def test_a_note_not_indexed_yet_is_looked_at_when_the_index_cannot_vouch(vault: Vault) -> None:
    """No watcher here (as at a start, or after lost events): what the index has not
    seen is found by reading the files whose stat differs from their rows."""
    vault.write("en", "items/cat.md", "# Cat\n")
    put(vault, "notes/old.md", "[c](../items/cat.md)\n")
    seen(vault)
    put(vault, "notes/new.md", "[[items/cat]]\n")  # saved a moment before the move
    put(vault, "notes/old.md", "[c](../items/cat.md) again\n")
    moved = vault.move("en", "items/cat.md", "pets/cat.md")
    assert moved["relinked"] == ["notes/new.md", "notes/old.md"]
    assert (vault_dir(vault) / "notes/new.md").read_text() == "[[pets/cat]]\n"


def test_a_folder_summary_linking_the_moved_note_is_not_listed_as_skipped(
    vault: Vault, caplog: pytest.LogCaptureFixture
) -> None:
    """A relink looked at the folder summaries (``.overview.md``, which the tools refuse
    to write) and answered each as skipped, with a warning at every move: they are the
    summaries job's to make again."""
    vault.write("en", "notes/beta.md", "# Beta\n")
    put(vault, "notes/alpha.md", "See [[beta]].\n")
    seen(vault)
    put(vault, "notes/.overview.md", "# notes\n\n- [Beta](beta.md)\n")  # (new: grep reads it)
    moved = vault.move("en", "notes/beta.md", "notes/gamma.md")
    assert moved["relinked"] == ["notes/alpha.md"]
    assert "relink_skipped" not in moved, moved
    assert "left as they were" not in caplog.text
    assert (vault_dir(vault) / "notes/.overview.md").read_text() == "# notes\n\n- [Beta](beta.md)\n"


def test_a_short_names_spellings_are_looked_for_in_one_read_of_each_note(vault: Vault) -> None:
    """While the index cannot vouch (the start's first index or catch-up under way), a
    one-letter name's 28 link spellings were 28 greps, each reading every note the index
    had not seen: 15,000 notes took the move's 10 s, and the spellings looked for last
    (``[[a``) found nothing, answered as ``relinked: []``. One read of each now."""
    vault.write("en", "a.md", "# A\n")
    for n in range(30):
        link = "[[a]] and [the a](../a.md)\n" if n % 10 == 3 else ""
        put(vault, f"notes/n{n:02}.md", f"# Note {n}\n\nwords about quokkas\n{link}")
    with files_opened() as opened:
        moved = vault.move("en", "a.md", "b.md")
    linking = ["notes/n03.md", "notes/n13.md", "notes/n23.md"]
    assert moved["relinked"] == linking and "relink_partial" not in moved
    for path in linking:
        assert (vault_dir(vault) / path).read_text().endswith("[[b]] and [the a](../b.md)\n")
    assert opened.count("n00.md") == 1  # (28 before)


def test_a_grep_out_of_its_bounds_answers_the_relink_as_partial(tmp_path: Path) -> None:
    """Notes holding the name that a grep cut short never looked at were left linking
    to nothing, the answer saying nothing of them."""
    with vault_with_history(tmp_path, 1 << 20) as bare:  # (no index: grep reads every note)
        bare.write("en", "items/plan.md", "# Plan\n")
        put(bare, "notes/a.md", "[plan](../items/plan.md)\n")
        put(bare, "notes/b.md", "[plan](../items/plan.md)\n")
        bare.grep_max_bytes = 1  # (grep stops after the first note it reads)
        moved = bare.move("en", "items/plan.md", "done/plan.md")
        assert len(moved["relinked"]) < 2  # (the notes read before it stopped)
        assert moved["relink_partial"] is True
