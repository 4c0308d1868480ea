"""move: Obsidian's wikilinks and embeds (``![[cat.md.assets/p.png|200]]``) follow the
files they name, as Obsidian reads them: from the note's folder, else from the vault's
root, a note's without ``.md``; in code they are text; a bare name is found by name."""

from __future__ import annotations

import re

import pytest
from test_move_links import PNG, files, image, root, vault

from indexer.page_markdown import MAX_RENDERED_CHARS
from indexer.vault.links import relocate_note, relocate_prefix, rewrite_links
from indexer.vault.vault import Vault
from shared.errors import VaultError
from shared.frontmatter import parse_frontmatter

__all__ = ["vault"]  # (the fixture, shared with the Markdown links' tests)


def moved(text: str, old: str = "animals/cat.md", new: str = "pets/kitty.md") -> str:
    return rewrite_links(text, old, new, relocate_note(old, new))


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("![[cat.md.assets/p.png]]", "![[kitty.md.assets/p.png]]"),
        ("![[cat.md.assets/p.png|200]]", "![[kitty.md.assets/p.png|200]]"),
        ("![[cat.md.assets/doc.pdf#page=2]]", "![[kitty.md.assets/doc.pdf#page=2]]"),
        ("[[cat.md.assets/notes.txt]]", "[[kitty.md.assets/notes.txt]]"),
        ("![[ cat.md.assets/p.png ]]", "![[ kitty.md.assets/p.png ]]"),
        ("![[./cat.md.assets/p.png]]", "![[./kitty.md.assets/p.png]]"),
        # from the vault's root, as Obsidian's "absolute path in vault" writes them
        ("![[animals/cat.md.assets/p.png]]", "![[pets/kitty.md.assets/p.png]]"),
        # a note's own name, with or without .md, with a heading or an alias
        ("[[cat]] [[animals/cat|me]] [[cat#Food]]", "[[kitty]] [[pets/kitty|me]] [[kitty#Food]]"),
        ("> - quoted ![[cat.md.assets/p.png]]", "> - quoted ![[kitty.md.assets/p.png]]"),
        ("# ![[cat.md.assets/p.png]]", "# ![[kitty.md.assets/p.png]]"),
        ("![[cat.md.assets/a b (1).png]]", "![[kitty.md.assets/a b (1).png]]"),
    ],
)
def test_wikilinks_to_the_moved_files_follow_them(before: str, after: str) -> None:
    assert moved(f"# Cat\n\n{before}\n") == f"# Cat\n\n{after}\n"


@pytest.mark.parametrize(
    "text",
    [
        "`![[cat.md.assets/p.png]]`",
        "```\n![[cat.md.assets/p.png]]\n```",
        "~~~md\n[[cat]]\n~~~",
        "    ![[cat.md.assets/p.png]]",
        "![[p.png]]",  # a bare name: Obsidian finds it by name, wherever it is
        "![[dog.md.assets/p.png]]",  # another note's images stay
        "![[https://example.com/cat.md.assets/p.png]]",
        "![[cat.md.assets/p.png",  # never closed: text
        "![[../../cat.md.assets/p.png]]",  # leaves the vault
    ],
)
def test_other_wikilinks_and_those_in_code_are_left_alone(text: str) -> None:
    assert moved(f"# Cat\n\n{text}\n") == f"# Cat\n\n{text}\n"


def test_a_wikilink_from_the_notes_folder_names_the_same_file_from_its_new_one() -> None:
    """Obsidian's "relative path to file" links (``./``, ``../``) to files that stay
    were left naming nothing from the new folder (the Markdown ones were moved)."""
    text = "[[./dog]] [[../zoo/lion|Lion]] ![[../zoo/lion.md.assets/p.png]] [[dog]]\n"
    after = moved(text, new="pets/deep/kitty.md")
    assert after == (
        "[[../../animals/dog]] [[../../zoo/lion|Lion]] ![[../../zoo/lion.md.assets/p.png]]"
        " [[dog]]\n"
    )
    assert moved(text, new="animals/kitty.md") == text


def test_a_table_cells_escaped_pipe_stays_and_only_the_target_changes() -> None:
    text = "| a | b |\n|---|---|\n| ![[cat.md.assets/p.png\\|200]] | [[cat\\|me]] |\n"
    assert (
        moved(text)
        == "| a | b |\n|---|---|\n| ![[kitty.md.assets/p.png\\|200]] | [[kitty\\|me]] |\n"
    )


def test_a_frontmatter_property_holding_a_wikilink_follows_as_a_value() -> None:
    text = '---\ncover: "[[cat.md.assets/p.png]]"\nup: ["[[cat]]"]\n---\n# Cat\n'
    meta = parse_frontmatter(moved(text))[0]
    assert meta["cover"] == "[[kitty.md.assets/p.png]]"
    assert meta["up"] == ["[[kitty]]"]


def test_a_footnote_of_a_long_note_is_text_too() -> None:
    filler = "lorem ipsum dolor\n" * (MAX_RENDERED_CHARS // 18 + 1)
    text = f"x[^1]\n\n{filler}\n[^1]: Ibid.\n"
    assert moved(text) == text


def test_a_long_note_read_by_the_linear_scan_moves_its_wikilinks_too() -> None:
    filler = "lorem ipsum dolor\n" * (MAX_RENDERED_CHARS // 18 + 1)
    text = f"![[cat.md.assets/p.png]]\n\n`[[cat]]`\n\n{filler}![[cat.md.assets/q.png|9]]\n"
    after = moved(text)
    assert after.startswith("![[kitty.md.assets/p.png]]\n\n`[[cat]]`\n\n")
    assert after.endswith(f"{filler}![[kitty.md.assets/q.png|9]]\n")


def test_a_new_name_no_wikilink_can_hold_leaves_the_link_as_it_was() -> None:
    text = "![[cat.md.assets/p.png]] ![a](cat.md.assets/p.png)\n"
    assert (
        moved(text, "cat.md", "c#t.md") == "![[cat.md.assets/p.png]] ![a](c%23t.md.assets/p.png)\n"
    )


def test_in_a_folder_move_the_reading_that_names_a_moving_file_is_the_one_moved() -> None:
    """``animals/cat.md.assets/p.png`` in ``animals/x.md`` is read from the folder first
    (``animals/animals/...``), a file that does not exist: the root's reading names the
    moving image, and only that one changes."""
    relocate = relocate_prefix("animals", "pets")
    moving = {"animals/x.md", "animals/cat.md", "animals/cat.md.assets/p.png"}
    text = "![[animals/cat.md.assets/p.png]] ![[cat.md.assets/p.png]] [[animals/cat]] [[x]]\n"
    after = rewrite_links(text, "animals/x.md", "pets/x.md", relocate, moving.__contains__)
    assert after == "![[pets/cat.md.assets/p.png]] ![[cat.md.assets/p.png]] [[pets/cat]] [[x]]\n"


def test_wikilinks_take_linear_time() -> None:
    for unit in ("[[", "![[a", "[[a|", "[[a#b|c", "[[a]]"):
        text = unit * 20_000
        assert moved(text) == text  # (quadratic: minutes)


# -- through the vault ----------------------------------------------------------------------


def test_a_moved_notes_embeds_name_its_images_at_their_new_place_and_undo_restores(
    vault: Vault,
) -> None:
    vault.write(
        "en",
        "animals/cat.md",
        "# Cat\n\n![[cat.md.assets/p.png|200]]\n\n```\n![[cat.md.assets/p.png]]\n```\n",
    )
    image(vault, "animals/cat.md.assets/p.png")
    text = (root(vault) / "animals/cat.md").read_text()
    vault.move("en", "animals/cat.md", "pets/kitty.md", reason="entry:e1")
    new = (root(vault) / "pets/kitty.md").read_text()
    assert new == text.replace("![[cat.md.assets/p.png|200]]", "![[kitty.md.assets/p.png|200]]")
    target = re.search(r"!\[\[([^|\]]+)", new)
    assert target is not None
    assert (root(vault) / "pets" / target[1]).read_bytes() == PNG
    vault.undo("en", "e1")
    assert files(vault) == ["animals/cat.md", "animals/cat.md.assets/p.png"]
    assert (root(vault) / "animals/cat.md").read_text() == text


def test_a_folder_move_rewrites_root_wikilinks_into_it_and_keeps_relative_ones(
    vault: Vault,
) -> None:
    vault.write("en", "animals/cat.md", "# Cat\n\n![[cat.md.assets/p.png]]\n")
    vault.write(
        "en", "animals/index.md", "# All\n\n[[animals/cat]] ![[animals/cat.md.assets/p.png]]\n"
    )
    image(vault, "animals/cat.md.assets/p.png")
    cat = (root(vault) / "animals/cat.md").read_text()
    index = (root(vault) / "animals/index.md").read_text()
    vault.move("en", "animals", "zoo/pets")
    assert (root(vault) / "zoo/pets/cat.md").read_text() == cat  # relative: still right
    moved_index = (root(vault) / "zoo/pets/index.md").read_text()
    assert moved_index == index.replace("[[animals/", "[[zoo/pets/")
    assert "[[zoo/pets/cat]] ![[zoo/pets/cat.md.assets/p.png]]" in moved_index


def test_a_refused_move_leaves_the_embeds_and_the_files_as_they_were(vault: Vault) -> None:
    vault.write("en", "animals/cat.md", "# Cat\n\n![[cat.md.assets/p.png]]\n")
    vault.write("en", "pets/kitty.md", "# Taken\n")
    image(vault, "animals/cat.md.assets/p.png")
    before = {name: (root(vault) / name).read_bytes() for name in files(vault)}
    with pytest.raises(VaultError):
        vault.move("en", "animals/cat.md", "pets/kitty.md")
    assert {name: (root(vault) / name).read_bytes() for name in files(vault)} == before


# -- Markdown links from the vault's root (Obsidian's "absolute path in vault") -------------


def test_a_root_link_into_the_moved_images_gets_their_new_root_path() -> None:
    """``items/cat.md.assets/p.png`` in ``items/cat.md`` names no file from the note's
    folder; from the root it names the moving image. It became
    ``../../items/items/cat.md.assets/p.png``, which names nothing either way."""
    text = "![abs](items/cat.md.assets/p.png) ![rel](cat.md.assets/p.png)\n"
    after = moved(text, "items/cat.md", "archive/2024/cat.md")
    assert after == "![abs](archive/2024/cat.md.assets/p.png) ![rel](cat.md.assets/p.png)\n"


def test_a_link_is_read_from_the_root_only_where_it_names_nothing_from_the_folder(
    vault: Vault,
) -> None:
    base = root(vault)
    for name in ("attachments/p.png", "items/pics/q.png"):
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_bytes(PNG)
    text = "# Cat\n\n![a](attachments/p.png) ![b](pics/q.png) ![c](nowhere/x.png)\n"
    vault.write("en", "items/cat.md", text)
    vault.move("en", "items/cat.md", "archive/2024/cat.md")
    after = (base / "archive/2024/cat.md").read_text()
    assert after.endswith(
        "![a](attachments/p.png) ![b](../../items/pics/q.png) ![c](../../items/nowhere/x.png)\n"
    )


def test_a_propertys_bare_path_to_a_moving_file_moves_and_a_title_stays() -> None:
    """``cover: n.md.assets/p.png`` (banner and cover plugins keep a path so) still
    named the old folder; a value naming the note without ``.md`` is no path."""
    text = (
        "---\ntitle: cat\ncover: cat.md.assets/p.png\nimages: [./cat.md.assets/a b.png]\n"
        "source: dog.md.assets/p.png\n---\n# Cat\n"
    )
    meta = parse_frontmatter(moved(text))[0]
    assert meta["title"] == "cat" and meta["source"] == "dog.md.assets/p.png"
    assert meta["cover"] == "kitty.md.assets/p.png"
    assert meta["images"] == ["./kitty.md.assets/a b.png"]
