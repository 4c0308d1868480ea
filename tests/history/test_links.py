"""links.rewrite_links: a moved note's relative image links still resolve."""

from __future__ import annotations

import pytest

from indexer.vault.links import relocate_note, relocate_prefix, rewrite_links


def moved_note(text: str, old: str = "items/go.md", new: str = "archive/2026/went.md") -> str:
    return rewrite_links(text, old, new, relocate_note(old, new))


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("![cat](go.md.assets/cat.png)", "![cat](went.md.assets/cat.png)"),
        ("![cat](./go.md.assets/cat.png)", "![cat](./went.md.assets/cat.png)"),
        ('![cat](go.md.assets/cat.png "a title")', '![cat](went.md.assets/cat.png "a title")'),
        ("![a [b] c](go.md.assets/c.png)", "![a [b] c](went.md.assets/c.png)"),
        ("![sp](<go.md.assets/my cat.png>)", "![sp](<went.md.assets/my cat.png>)"),
        ("![enc](go.md.assets/my%20cat.png)", "![enc](went.md.assets/my%20cat.png)"),
        ('<img src="go.md.assets/cat.png" alt="x">', '<img src="went.md.assets/cat.png" alt="x">'),
        ("[ref]: go.md.assets/cat.png", "[ref]: went.md.assets/cat.png"),
        ("![up](../shared/logo.png)", "![up](../../shared/logo.png)"),
        ("![own](go.md.assets/cat.png#frag)", "![own](went.md.assets/cat.png#frag)"),
    ],
)
def test_relative_image_links_follow_the_move(before: str, after: str) -> None:
    assert moved_note(before + "\n") == after + "\n"


@pytest.mark.parametrize(
    "text",
    [
        "![web](https://example.com/a.png)",
        "![data](data:image/png;base64,AAAA)",
        "![rooted](/img/a.png)",
        "![anchor](#top)",
        "![escape](../../../../etc/a.png)",
        "`![code](go.md.assets/cat.png)`",
        "```\n![fenced](go.md.assets/cat.png)\n```",
        "[a plain link](go.md.assets/cat.png)",
    ],
)
def test_other_links_are_left_alone(text: str) -> None:
    assert moved_note(text + "\n") == text + "\n"


def test_a_note_in_a_moved_folder_keeps_links_inside_and_fixes_links_outside() -> None:
    text = "![own](go.md.assets/a.png)\n![sibling](other.md.assets/b.png)\n![out](../img/c.png)\n"
    moved = rewrite_links(
        text, "items/go.md", "old/items/go.md", relocate_prefix("items", "old/items")
    )
    assert moved == (
        "![own](go.md.assets/a.png)\n![sibling](other.md.assets/b.png)\n![out](../../img/c.png)\n"
    )


def test_a_space_in_the_new_name_is_written_in_angle_brackets() -> None:
    assert moved_note("![c](go.md.assets/c.png)\n", new="items/my note.md") == (
        "![c](<my note.md.assets/c.png>)\n"
    )
