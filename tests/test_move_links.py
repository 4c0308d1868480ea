"""move: a note's ``.assets/`` folder follows it whatever its text type (``.md`` and
back from ``.txt``), undo puts both back, and the image links it rewrites are the ones
CommonMark sees (code spans of equal backtick strings within a paragraph, balanced
parentheses and ``<...>`` destinations, fenced and indented code left alone)."""

from __future__ import annotations

import base64
import html
import posixpath
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote

import pytest
from helpers.history import SecondsClock, vault_with_history
from helpers.snapshots import snapshot

from indexer.vault.links import relocate_note, rewrite_links
from indexer.vault.vault import Vault
from shared.errors import InvalidArgumentError, VaultError
from shared.frontmatter import parse_frontmatter

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
IMAGE_LINK = re.compile(r"!\[[^\]]*\]\((<[^>]*>|[^\s<]\S*?)\)$", re.MULTILINE)


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20, SecondsClock()) as opened:
        yield opened


def root(vault: Vault) -> Path:
    return vault.sandbox.workspace.vault_dir("en")


def files(vault: Vault) -> list[str]:
    base = root(vault)
    return sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_file())


def image(vault: Vault, path: str) -> None:
    vault.write("en", path, base64.b64encode(PNG).decode(), "base64")


def resolved(vault: Vault, note: str) -> list[str]:
    """The vault paths the note's (one-line, end-of-line) image links point at."""
    text = (root(vault) / note).read_text()
    found = []
    for dest in IMAGE_LINK.findall(text):
        dest = dest[1:-1] if dest.startswith("<") else dest
        found.append(posixpath.normpath(posixpath.join(posixpath.dirname(note), dest)))
    return found


def moved_note(text: str, old: str = "d/a.md", new: str = "d/sub/b.md") -> str:
    return rewrite_links(text, old, new, relocate_note(old, new))


# -- the .assets/ folder follows the file -------------------------------------------------


def test_a_round_trip_through_txt_keeps_the_images_with_the_note(vault: Vault) -> None:
    vault.write("en", "d/n.md", "# N\n![i](n.md.assets/i.png)\n")
    image(vault, "d/n.md.assets/i.png")
    vault.move("en", "d/n.md", "d/n.txt")
    assert files(vault) == ["d/n.txt", "d/n.txt.assets/i.png"]
    assert resolved(vault, "d/n.txt") == ["d/n.txt.assets/i.png"]
    vault.move("en", "d/n.txt", "d/n.md")
    assert files(vault) == ["d/n.md", "d/n.md.assets/i.png"]
    assert resolved(vault, "d/n.md") == ["d/n.md.assets/i.png"]
    assert (root(vault) / "d/n.md.assets/i.png").read_bytes() == PNG
    rows = vault.history("en", "d/n.md.assets/i.png")["versions"]
    assert [(r["op"], r.get("moved_from")) for r in rows[:1]] == [("move", "d/n.txt.assets/i.png")]


def test_a_text_file_moves_to_another_folder_with_its_images(vault: Vault) -> None:
    vault.write("en", "d/log.txt", "see ![i](log.txt.assets/i.png)\n")
    image(vault, "d/log.txt.assets/i.png")
    vault.move("en", "d/log.txt", "e/f/log.txt")
    assert files(vault) == ["e/f/log.txt", "e/f/log.txt.assets/i.png"]
    assert resolved(vault, "e/f/log.txt") == ["e/f/log.txt.assets/i.png"]


def test_deleting_a_text_file_deletes_its_images_as_a_note_does(vault: Vault) -> None:
    """A text file owns its .assets/ folder (it may have been a note): deleting it left
    the images behind, in a folder nothing links to."""
    vault.write("en", "d/log.txt", "see ![i](log.txt.assets/i.png)\n")
    image(vault, "d/log.txt.assets/i.png")
    vault.delete("en", "d/log.txt")
    assert files(vault) == []
    assert not (root(vault) / "d/log.txt.assets").exists()
    rows = vault.history("en", "d/log.txt.assets/i.png")["versions"]
    assert rows[0]["op"] == "delete"  # restorable, like a note's images


def folders(vault: Vault) -> list[str]:
    base = root(vault)
    return sorted(str(p.relative_to(base)) for p in base.rglob("*") if p.is_dir())


def test_an_images_folder_emptied_by_a_move_or_a_delete_goes(vault: Vault) -> None:
    """Moving a note's last image to another note and back left an empty
    ``x.md.assets/`` (undo always cleared it); so did deleting the last image."""
    vault.write("en", "a.md", "# A\n![i](a.md.assets/i.png)\n")
    vault.write("en", "x.md", "# X\n")
    image(vault, "a.md.assets/i.png")
    image(vault, "a.md.assets/j.png")
    vault.move("en", "a.md.assets/j.png", "x.md.assets/j.png")
    assert folders(vault) == ["a.md.assets", "x.md.assets"]  # i.png is still there
    vault.move("en", "a.md.assets/i.png", "x.md.assets/i.png")
    assert folders(vault) == ["x.md.assets"]
    vault.move("en", "x.md.assets/i.png", "a.md.assets/i.png")
    vault.delete("en", "x.md.assets/j.png")
    assert folders(vault) == ["a.md.assets"]
    assert files(vault) == ["a.md", "a.md.assets/i.png", "x.md"]
    (root(vault) / "a.md.assets/notes.pdf").write_bytes(b"%PDF")  # not an image of ours
    vault.delete("en", "a.md.assets/i.png")
    assert files(vault) == ["a.md", "a.md.assets/notes.pdf", "x.md"]  # kept, and its folder


def test_a_note_cannot_move_into_its_own_assets_folder(vault: Vault) -> None:
    vault.write("en", "d/m.md", "# M\n![i](m.md.assets/i.png)\n")
    image(vault, "d/m.md.assets/i.png")
    before = snapshot(root(vault))
    for new_path in ("d/m.md.assets/m.md", "d/m.md.assets/x/m.txt"):
        with pytest.raises(InvalidArgumentError, match=r"its own \.assets/ folder"):
            vault.move("en", "d/m.md", new_path)
    assert snapshot(root(vault)) == before


def test_notes_and_text_files_are_not_made_inside_an_images_folder(vault: Vault) -> None:
    """They were read and listed but never indexed: search could not find them."""
    vault.write("en", "d/m.md", "# M\n")
    image(vault, "d/m.md.assets/i.png")
    before = snapshot(root(vault))
    for call, args in [
        (vault.write, ("en", "d/m.md.assets/n.md", "# N\n")),
        (vault.write, ("en", "x.assets/deep/n.txt", "n")),
        (vault.append, ("en", "d/m.md.assets/log.md", "line\n")),
        (vault.move, ("en", "d/m.md", "other.md.assets/m.md")),
    ]:
        with pytest.raises(VaultError, match=r"holds a note's images only") as info:
            call(*args)
        assert info.value.code == "forbidden_path"
    assert snapshot(root(vault)) == before
    # one put there by another program can still be moved out, or deleted
    (root(vault) / "d/m.md.assets/stray.md").write_text("# Stray\n")
    (root(vault) / "d/m.md.assets/gone.txt").write_text("gone\n")
    vault.move("en", "d/m.md.assets/stray.md", "d/stray.md")
    vault.delete("en", "d/m.md.assets/gone.txt")
    assert files(vault) == ["d/m.md", "d/m.md.assets/i.png", "d/stray.md"]
    with pytest.raises(VaultError, match=r"holds a note's images only"):  # nor put back
        vault.restore("en", "d/m.md.assets/stray.md", 1)
    assert files(vault) == ["d/m.md", "d/m.md.assets/i.png", "d/stray.md"]


def test_undo_of_a_text_file_move_puts_the_images_back(vault: Vault) -> None:
    vault.write("en", "d/n.txt", "![i](n.txt.assets/i.png)\n")
    image(vault, "d/n.txt.assets/i.png")
    vault.move("en", "d/n.txt", "d/n.md", reason="entry:e1 rename")
    assert files(vault) == ["d/n.md", "d/n.md.assets/i.png"]
    vault.undo("en", "e1")
    assert files(vault) == ["d/n.txt", "d/n.txt.assets/i.png"]
    assert resolved(vault, "d/n.txt") == ["d/n.txt.assets/i.png"]
    assert not (root(vault) / "d/n.md.assets").exists()


def test_undo_of_a_move_puts_back_the_files_no_tool_writes_that_it_carried(
    vault: Vault,
) -> None:
    """A PDF beside a note's images and an image in a subfolder of them moved along
    unrecorded: the undo said it was done and left them, in an ``.assets/`` folder with
    no note, which then refused the note's move back there. A folder's PDF too."""
    vault.write("en", "x/n.md", "# N\n![p](n.md.assets/p.png) [d](n.md.assets/doc.pdf)\n")
    image(vault, "x/n.md.assets/p.png")
    (root(vault) / "x/n.md.assets/scans").mkdir()
    (root(vault) / "x/n.md.assets/scans/deep.png").write_bytes(PNG)
    (root(vault) / "x/n.md.assets/doc.pdf").write_bytes(b"%PDF-1.4 attachment")
    (root(vault) / "d").mkdir()
    (root(vault) / "d/scan.pdf").write_bytes(b"%PDF scan")
    vault.write("en", "d/a.md", "# A\n")
    before = {name: (root(vault) / name).read_bytes() for name in files(vault)}
    vault.move("en", "x/n.md", "y/n.md", reason="entry:e1 move")
    vault.move("en", "d", "e/d", reason="entry:e2 move")
    assert "y/n.md.assets/scans/deep.png" in files(vault)
    assert [row["op"] for row in vault.history("en", "e/d/scan.pdf")["versions"]] == ["move"]
    vault.undo("en", "e2")
    vault.undo("en", "e1")
    assert {name: (root(vault) / name).read_bytes() for name in files(vault)} == before
    assert not (root(vault) / "y/n.md.assets").exists()
    vault.move("en", "x/n.md", "y/n.md")  # (refused before: "y/n.md.assets already exists")
    assert "y/n.md.assets/scans/deep.png" in files(vault)


def test_undo_of_a_move_brings_back_its_dot_files_and_removes_the_folders_it_made(
    vault: Vault,
) -> None:
    """A Finder ``.DS_Store`` in ``.assets/`` moved along, and history cannot keep it:
    the undo left it, with the folders the move made, and the note's move back was
    refused ("... .assets already exists"). A folder's own dot-files are left alone."""
    base = root(vault)
    vault.write("en", "x/n.md", "# N\n![p](n.md.assets/p.png)\n")
    image(vault, "x/n.md.assets/p.png")
    (base / "x/n.md.assets/.DS_Store").write_bytes(b"finder")
    vault.write("en", "d/sub/a.md", "# A\n")
    (base / "keep").mkdir()
    (base / "keep/.DS_Store").write_bytes(b"keep's own")
    (base / "keep/other.md").write_text("# Other\n")
    (base / "held").mkdir()
    (base / "held/.overview.md").write_text("# held\n")
    before = {name: (base / name).read_bytes() for name in files(vault)}
    vault.move("en", "x/n.md", "keep/deep/n.md", reason="entry:e1 move")
    vault.move("en", "d", "new/place/d", reason="entry:e2 move")
    vault.write("en", "held/n2.md", "# N2\n", reason="entry:e3 write")
    vault.undo("en", "e3")
    vault.undo("en", "e2")
    vault.undo("en", "e1")
    assert {name: (base / name).read_bytes() for name in files(vault)} == before
    assert sorted(p.name for p in base.iterdir()) == ["d", "held", "keep", "x"]
    assert sorted(p.name for p in (base / "keep").iterdir()) == [".DS_Store", "other.md"]
    vault.move("en", "x/n.md", "keep/deep/n.md")  # (refused before)
    assert (base / "keep/deep/n.md.assets/.DS_Store").read_bytes() == b"finder"


def test_undo_takes_a_round_trip_back_one_move_at_a_time(vault: Vault) -> None:
    vault.write("en", "d/n.md", "# N\n![i](n.md.assets/i.png)\n")
    image(vault, "d/n.md.assets/i.png")
    vault.move("en", "d/n.md", "d/n.txt", reason="entry:e1 to text")
    vault.move("en", "d/n.txt", "d/n.md", reason="entry:e2 back")
    vault.undo("en", "e2")
    assert files(vault) == ["d/n.txt", "d/n.txt.assets/i.png"]
    assert resolved(vault, "d/n.txt") == ["d/n.txt.assets/i.png"]
    vault.undo("en", "e1")
    assert files(vault) == ["d/n.md", "d/n.md.assets/i.png"]
    assert resolved(vault, "d/n.md") == ["d/n.md.assets/i.png"]
    assert not (root(vault) / "d/n.txt.assets").exists()


def test_a_refused_text_file_move_changes_nothing_on_disk(vault: Vault) -> None:
    vault.write("en", "d/n.txt", "![i](n.txt.assets/i.png)\n")
    image(vault, "d/n.txt.assets/i.png")
    (root(vault) / "d/n.md.assets").mkdir()  # the new path's images folder is taken
    before = snapshot(vault.sandbox.workspace.root / "memory")
    with pytest.raises(VaultError) as info:
        vault.move("en", "d/n.txt", "d/n.md")
    assert info.value.code == "conflict"
    assert snapshot(vault.sandbox.workspace.root / "memory") == before


# -- which links are rewritten ------------------------------------------------------------


def test_a_lone_backtick_does_not_hide_a_later_image_link(vault: Vault) -> None:
    text = "# A\n\nPress the ` key to open it.\n\n![i](a.md.assets/i.png)\n\nThen run `ls`.\n"
    vault.write("en", "d/a.md", text)
    image(vault, "d/a.md.assets/i.png")
    vault.move("en", "d/a.md", "d/sub/b.md")
    assert resolved(vault, "d/sub/b.md") == ["d/sub/b.md.assets/i.png"]
    assert files(vault) == ["d/sub/b.md", "d/sub/b.md.assets/i.png"]


def test_parentheses_in_the_file_name_are_rewritten_in_the_same_style(vault: Vault) -> None:
    vault.write("en", "d/a.md", "# A\n\n![i](a.md.assets/i(1).png)\n")
    image(vault, "d/a.md.assets/i(1).png")
    vault.move("en", "d/a.md", "d/sub/b.md")
    assert "![i](b.md.assets/i(1).png)" in (root(vault) / "d/sub/b.md").read_text()
    assert resolved(vault, "d/sub/b.md") == ["d/sub/b.md.assets/i(1).png"]


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("x ` y\n\n![i](a.md.assets/i.png) `z`", "x ` y\n\n![i](b.md.assets/i.png) `z`"),
        ("`` a ` b ``\n![i](a.md.assets/i.png)", "`` a ` b ``\n![i](b.md.assets/i.png)"),
        ("`` x ` ![i](a.md.assets/i.png)", "`` x ` ![i](b.md.assets/i.png)"),
        ("\\` ![i](a.md.assets/i.png) `", "\\` ![i](b.md.assets/i.png) `"),
        ("# H `\n![i](a.md.assets/i.png) `", "# H `\n![i](b.md.assets/i.png) `"),
        ("![i](a.md.assets/i(1).png)", "![i](b.md.assets/i(1).png)"),
        ("![i](a.md.assets/i((2)).png 'x')", "![i](b.md.assets/i((2)).png 'x')"),
        ("![i](a.md.assets/i\\(.png)", "![i](b.md.assets/i\\(.png)"),
        ("![i](<a.md.assets/my (1) cat.png>)", "![i](<b.md.assets/my (1) cat.png>)"),
        ('![i](<a.md.assets/my cat.png> "t")', '![i](<b.md.assets/my cat.png> "t")'),
        ("![a `c` d](a.md.assets/i.png)", "![a `c` d](b.md.assets/i.png)"),
        ("- item\n\n    ![i](a.md.assets/i.png)", "- item\n\n    ![i](b.md.assets/i.png)"),
        ("para\n    ![i](a.md.assets/i.png)", "para\n    ![i](b.md.assets/i.png)"),
    ],
)
def test_image_links_commonmark_sees_are_rewritten(before: str, after: str) -> None:
    assert moved_note(before + "\n") == after + "\n"


@pytest.mark.parametrize(
    "text",
    [
        "`![i](a.md.assets/i.png)`",
        "`` ![i](a.md.assets/i.png) ` ``",
        "a `x\n![i](a.md.assets/i.png)` b",
        "```\n![i](a.md.assets/i.png)\n```",
        "~~~~md\n![i](a.md.assets/i.png)\n~~~\n~~~~",
        "text\n\n    ![i](a.md.assets/i.png)\n\n    more code",
        "    ![i](a.md.assets/i.png)",
        "# H\n    ![i](a.md.assets/i.png)",
        "![a `](a.md.assets/i.png)` b",
        "``x` ![i](a.md.assets/i.png) `y``",
    ],
)
def test_links_in_code_are_left_alone(text: str) -> None:
    assert moved_note(text + "\n") == text + "\n"


def test_a_link_in_fenced_code_stays_while_the_real_one_moves(vault: Vault) -> None:
    text = "# A\n\n```md\n![i](a.md.assets/i.png)\n```\n\n![i](a.md.assets/i.png)\n"
    vault.write("en", "d/a.md", text)
    image(vault, "d/a.md.assets/i.png")
    vault.move("en", "d/a.md", "d/sub/b.md")
    new = (root(vault) / "d/sub/b.md").read_text()
    assert new.endswith("```md\n![i](a.md.assets/i.png)\n```\n\n![i](b.md.assets/i.png)\n")


def test_a_link_spelled_in_nfd_follows_its_note_as_the_nfc_one_does(vault: Vault) -> None:
    """The vault names files in NFC; a link typed on a Mac may be in NFD (plain or
    percent-encoded), and named the same images: it must follow them too."""
    nfd = unicodedata.normalize("NFD", "café.md")
    encoded = quote(nfd + ".assets/ü.png")
    text = f"# C\n\n![a]({nfd}.assets/ü.png)\n![b]({encoded})\n![c](other/{nfd})\n"
    vault.write("en", "d/café.md", text)
    image(vault, "d/café.md.assets/ü.png")
    vault.move("en", "d/café.md", "d/sub/thé.md")
    new = (root(vault) / "d/sub/thé.md").read_text()
    assert "![a](thé.md.assets/ü.png)" in new  # rewritten: in the vault's spelling
    assert f"![b]({quote('thé.md.assets/ü.png')})" in new
    assert f"![c](../other/{nfd})" in new  # not moved: the link keeps its own spelling
    assert (root(vault) / "d/sub/thé.md.assets/ü.png").read_bytes() == PNG


# -- links in the frontmatter and in HTML --------------------------------------------------


@pytest.mark.parametrize("name", ["Tom's cat", "dog #2", "猫 ノート", "שלום", "cat 😀"])
def test_a_move_rewrites_frontmatter_links_as_values_and_img_src_as_html(
    vault: Vault, name: str
) -> None:
    """The move rewrote the block as raw text: a single-quoted cover (as the server
    writes it) with the new name's ' broke the YAML (id, created and every property
    lost), a plain value was cut at ' #'; an <img src> got Markdown's <...>."""
    text = (
        '---\ncover: "![c](cat.md.assets/c.png)"\nphoto: my dog ![d](cat.md.assets/c.png) in May\n'
        '---\n# Cat\n\n<img src="cat.md.assets/c.png">\n'
    )
    vault.write("en", "d/cat.md", text)
    image(vault, "d/cat.md.assets/c.png")
    before, _ = parse_frontmatter((root(vault) / "d/cat.md").read_text())
    vault.move("en", "d/cat.md", f"d/{name}.md")
    meta, body = parse_frontmatter((root(vault) / f"d/{name}.md").read_text())
    assert {k: meta[k] for k in ("id", "title", "created")} == {
        k: before[k] for k in ("id", "title", "created")
    }
    link = moved_note("![c](cat.md.assets/c.png)", "d/cat.md", f"d/{name}.md")
    assert meta["cover"] == link
    assert meta["photo"] == f"my dog ![d]{link[len('![c]') :]} in May"
    src = re.fullmatch(r'# Cat\n\n<img src="([^"<>]*)">\n', body)
    assert src is not None, body
    assert unquote(html.unescape(src.group(1))) == f"{name}.md.assets/c.png"
    assert files(vault) == [f"d/{name}.md", f"d/{name}.md.assets/c.png"]


@pytest.mark.parametrize("space", [" ", "\u00a0", "\u3000"])
def test_a_move_to_a_name_starting_with_white_space_keeps_its_images_shown(
    vault: Vault, space: str
) -> None:
    """A reader trims a URL's white space: a link ``<  cat.md.assets/i.png>`` was read as
    ``cat.md.assets/i.png``; it is written percent-encoded."""
    from markdown_it import MarkdownIt

    text = '# A\n\n![i](a.md.assets/i.png)\n\n<img src="a.md.assets/i.png">\n'
    vault.write("en", "d/a.md", text)
    image(vault, "d/a.md.assets/i.png")
    new_path = f"d/{space}cat.md"
    vault.move("en", "d/a.md", new_path)
    new = (root(vault) / new_path).read_text()
    rendered = MarkdownIt("commonmark").render(new)
    sources = [html.unescape(s) for s in re.findall(r'src="([^"]*)"', rendered)]
    assert len(sources) == 2, rendered
    for source in sources:
        found = posixpath.normpath(posixpath.join("d", unquote(source.strip())))
        assert found == f"{new_path}.assets/i.png", new
    assert (root(vault) / f"{new_path}.assets/i.png").read_bytes() == PNG


def test_a_link_naming_no_file_from_its_folder_or_the_root_is_left_as_written(
    vault: Vault,
) -> None:
    """An Obsidian vault's ``![x](shot.png)`` names ``Attachments/shot.png`` by its
    name (Obsidian's shortest-path links): a move rewrote it to ``../../Bases/shot.png``,
    a path where nothing is, and the image was gone. A link to a file that is there
    from the note's folder is still rewritten."""
    vault.write("en", "Bases/Intro.md", "![A base](shot.png#interface)\n\n[views](Views.md)\n")
    vault.write("en", "Bases/Views.md", "# Views\n")
    (root(vault) / "Attachments").mkdir()
    (root(vault) / "Attachments/shot.png").write_bytes(PNG)
    vault.move("en", "Bases/Intro.md", "Archive/Old/Intro.md")
    text = (root(vault) / "Archive/Old/Intro.md").read_text()
    assert "![A base](shot.png#interface)" in text
    assert "[views](../../Bases/Views.md)" in text


@pytest.mark.parametrize("new", ["笔记/猫 图片 2.md", "笔记/猫#2 100%.md"])
def test_a_move_keeps_the_letters_of_an_obsidian_style_link_readable(
    vault: Vault, new: str
) -> None:
    """Obsidian writes a link with only its space encoded (``猫%20图片.md``); a move,
    and a new name holding ``#`` or ``%``, encode what must be and leave the letters
    as they were typed (they were percent-encoded in full: ``%E7%8C%AB...``)."""
    vault.write("en", "d/猫 图片.md", "# 猫\n\n![小猫](猫%20图片.md.assets/小猫%201.png)\n")
    image(vault, "d/猫 图片.md.assets/小猫 1.png")
    vault.write("en", "d/索引.md", "# 索引\n\n[猫](猫%20图片.md) [Ю](<猫 图片.md>)\n")
    vault.move("en", "d/猫 图片.md", new)
    name = posixpath.basename(new)
    spelled = name.replace("%", "%25").replace("#", "%23").replace(" ", "%20")
    moved = (root(vault) / new).read_text()
    assert f"![小猫]({spelled}.assets/小猫%201.png)" in moved
    index = (root(vault) / "d/索引.md").read_text()
    angled = spelled if "#" in name else name  # (once encoded, its space is too)
    assert f"[猫](../笔记/{spelled}) [Ю](<../笔记/{angled}>)" in index
    link = re.search(r"!\[小猫\]\(([^)]*)\)", moved)
    assert link is not None
    target = posixpath.join(posixpath.dirname(new), unquote(link.group(1)))
    assert (root(vault) / target).read_bytes() == PNG


def test_a_link_that_encoded_its_letters_stays_encoded_in_full(vault: Vault) -> None:
    encoded = quote("猫 图片.md.assets/小猫.png")
    vault.write("en", "d/猫 图片.md", f"# 猫\n\n![a]({encoded})\n")
    image(vault, "d/猫 图片.md.assets/小猫.png")
    vault.move("en", "d/猫 图片.md", "d/狗 图片.md")
    text = (root(vault) / "d/狗 图片.md").read_text()
    assert f"![a]({quote('狗 图片.md.assets/小猫.png')})" in text


@pytest.mark.parametrize("char", ["\u3000", "\u00a0", "\u200e", "\u2028"])
def test_invisible_characters_of_a_new_name_are_encoded_in_a_readable_link(
    vault: Vault, char: str
) -> None:
    """A letter stays as typed; a space, a mark of direction or a line separator in
    the new name is encoded (a reader would trim, drop or break on it)."""
    text = moved_note("![i](a%20b.md.assets/猫.png)\n", "d/a b.md", f"d/x{char}猫.md")
    assert text == f"![i](x{quote(char)}猫.md.assets/猫.png)\n"


@pytest.mark.parametrize("name", ["می\u200cخواهم", "क्\u200dष", "👨\u200d💻"])
def test_a_joiner_inside_a_word_stays_as_typed_in_a_readable_link(vault: Vault, name: str) -> None:
    """Persian writes U+200C inside words, Devanagari and emoji join with U+200D: part
    of the word, shown as the word, as the vault names the file."""
    vault.write("en", "d/a b.md", "# a\n\n![i](a%20b.md.assets/p.png)\n")
    image(vault, "d/a b.md.assets/p.png")
    vault.move("en", "d/a b.md", f"d/{name} 2.md")
    assert f"![i]({name}%202.md.assets/p.png)" in (root(vault) / f"d/{name} 2.md").read_text()
    assert (root(vault) / f"d/{name} 2.md.assets/p.png").read_bytes() == PNG
