"""A move rewrites exactly the images the page shows: read with the page's own parser.

Each case is checked against markdown-it itself (the page's parser, with its options):
after the move, every image the page shows names the moved file, and every other token
(text, code, HTML, plain links, alt texts) is as it was.
"""

from __future__ import annotations

import posixpath
import re
import time
from urllib.parse import unquote, urlsplit

import nh3
import pytest

from indexer.page_markdown import MAX_RENDERED_CHARS, new_parser, page_parser
from indexer.vault.links import relocate_note, rewrite_links

OLD, NEW = "items/go.md", "archive/2026/went.md"
IMG = "go.md.assets/a.png"  # moves with the note
_SRC = re.compile(r"(?i)src[\t\n\f\r ]*=[\t\n\f\r ]*(\"[^\"]*\"?|'[^']*'?|[^\t\n\f\r >]*)")


def moved(text: str) -> str:
    return rewrite_links(text, OLD, NEW, relocate_note(OLD, NEW))


def target(url: str | None, note: str) -> str | None:
    """The vault path a link in ``note`` names (as the page reads it), or the URL itself
    when it names none (a scheme, a rooted path, a fragment alone)."""
    if url is None or "\n" in url or "\r" in url:
        return url  # (left alone: a value over lines is not read as a link)
    parts = urlsplit(url)
    if parts.scheme or parts.path.startswith(("/", "\\")) or not parts.path:
        return url
    return posixpath.normpath(posixpath.join(posixpath.dirname(note), unquote(parts.path)))


def browser_images(html: str, note: str) -> tuple[str | None, ...]:
    """The vault paths the ``<img>`` sources of raw ``html`` name, as a browser reads
    them (html5ever, the page's sanitizer's parser)."""
    found: list[str | None] = []

    def keep(tag: str, name: str, value: str) -> str:
        if tag == "img" and name == "src":  # (a URL's parsing trims these, drops tabs)
            url = value.strip("".join(map(chr, range(0x21))))
            found.append(target(re.sub("[\t\n\r]", "", url), note))
        return value

    nh3.clean(html, tags={"img"}, attributes={"img": {"src"}}, attribute_filter=keep)
    return tuple(found)


def shown(text: str, note: str) -> list[tuple[object, ...]]:
    """Every token the page reads in ``text``, children included, with what it holds:
    an image the vault path it names and its alt text, raw HTML as a browser reads it."""
    out: list[tuple[object, ...]] = []
    stack = list(reversed(page_parser().parse(text)))  # (the page's own, shared: a third faster)
    while stack:
        token = stack.pop()
        if token.type == "image":
            out.append(("image", target(str(token.attrGet("src")), note), token.content))
            continue
        if token.type == "link_open":  # (a link names a file as an image does)
            out.append(("link", target(str(token.attrGet("href")), note)))
        if token.type in ("html_inline", "html_block"):
            masked = _SRC.sub("src=#", token.content)
            out.append((token.type, masked, browser_images(token.content, note)))
        elif token.type != "inline":  # (its children hold what it holds)
            out.append((token.type, token.content))
        stack += reversed(token.children or [])
    return out


def relocated(tokens: list[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """What the tokens of the note before the move should read after it: each of its
    own assets at the new name."""
    old, new = OLD + ".assets/", NEW + ".assets/"

    def place(value: object) -> object:
        if isinstance(value, str) and value.startswith(old):
            return new + value[len(old) :]
        if isinstance(value, tuple):
            return tuple(place(item) for item in value)
        return value

    return [tuple(place(item) for item in token) for token in tokens]


def assert_moved_as_shown(text: str) -> str:
    after = moved(text)
    assert shown(after, NEW) == relocated(shown(text, OLD)), after
    return after


CASES = {
    # markdown-it's blocks, which the move's own block reader used to read otherwise
    "links beside images": f"[doc](go.md.assets/d.pdf) [up](../x.md#h) ![a]({IMG})\n",
    "an image in a link": f"[![a]({IMG})](go.md.assets/b.png 'big')\n",
    "a link in a link is the link": "[o [a](x.md) c](y.md) [`c](z.md)`](w.md)\n",
    "links in a table and a quote": "| [a](x.md) \\| b |\n|---|\n\n> [q](../q.md)\n",
    "fence line in an html block": f"<div>\n```\n</div>\n\n![a]({IMG})\n",
    "fence after a line separator": f"text\u2028```\n\n![a]({IMG})\n",
    "fence after a form feed": f"text\x0c```\n\n![a]({IMG}) and `x`\n",
    "thematic break ends a paragraph": f"one `tick\n***\n![a]({IMG}) and ` here\n",
    "setext underline ends a paragraph": f"one `tick\n===\n![a]({IMG}) ` x\n",
    "quote interrupts a paragraph": f"one `tick\n> ![a]({IMG}) ` x\n",
    "table after a paragraph": f"one `tick\n| a | b |\n|---|---|\n| ![a]({IMG}) ` | c |\n",
    "definition in a quote": f"> [r]: {IMG}\n\n![x][r]\n",
    "definition in a list item": f"- [r]: {IMG}\n\n![x][r]\n",
    "definition over lines": f"[r]:\n  {IMG}\n  'a title'\n\n![x][r]\n",
    "definition in a nested quote": f"> > [r]:\n> > <{IMG}>\n\n![x][r]\n",
    "definition-like line in a paragraph": f"text\n[r]: {IMG}\n",
    "markdown image in an html block": f"<div>\n![a]({IMG})\n</div>\n",
    "img tag in an html block": f'<div>\n<img src="{IMG}" alt="a">\n</div>\n',
    "img tag in a quoted html block": f'> <div>\n> <img\n>  src="{IMG}">\n> </div>\n',
    "escaped img tag": f'\\<img src="{IMG}">\n',
    "inline img tag": f'a <img src="{IMG}"> b `<img src="{IMG}">`\n',
    "unclosed image": f"![a]({IMG} and more\n",
    "image in an autolink": f"<http://x/![a]({IMG})>\n",
    "image in an html attribute": f'<span title="![a]({IMG})">x</span>\n',
    "image in an alt text": f"![a ![b]({IMG})]({IMG})\n",
    "image in a link": f"[![a]({IMG})]({IMG})\n",
    "destination on the next line": f"![a](\n  {IMG}\n  'title')\n",
    "lazy quote continuation": f"> a `\n![b]({IMG}) `\n",
    "crlf lines": f"![a]({IMG})\r\n> ![b]({IMG})\r\n\r\n- [r]: {IMG}\r\n",
    "lone cr lines": f"a\r![b]({IMG})\r\r```\r![c]({IMG})\r```\r",
    "nul characters": f"a\0 ![b]({IMG}) \0\n",
    "tab after a list marker": f"-\t![a]({IMG})\n",
    "tabs in a quote are code": f">\t\t![a]({IMG})\n",
    "indented code in a list": f"- a\n\n      ![a]({IMG})\n",
    "list content, not code": f"- a\n\n    ![a]({IMG})\n",
    "two equal cells": f"| a | b |\n|---|---|\n| ![x]({IMG}) | ![x]({IMG}) |\n",
    "escaped pipes in a cell": f"| a \\| ![x]({IMG}) | b |\n|---|---|\n| `\\|` ![y]({IMG}) | c |\n",
    "table in a quote": f"> | a |\n> |---|\n> | ![x]({IMG}) |\n",
    "atx heading": f"# ![a]({IMG}) #\n## x ![b]({IMG})\n",
    "setext heading": f"![a]({IMG})\n===\n",
    "no-break space lines around a paragraph": f"\u00a0\n![a]({IMG})\n\u00a0\n",
    "spaces of every kind": f"\u2003![a]({IMG})\u2028\n",
    "angled destination": f"![a](<{IMG}>) ![b](<go.md.assets/my (1).png>)\n",
    "escaped destination": "![a](go.md.assets/a\\_b.png) ![b](go.md.assets/a&amp;b.png)\n",
    "code span over lines": f"a `b\n![c]({IMG})` ![d]({IMG})\n",
    "html comment": f"<!-- ![a]({IMG}) -->\n\n![b]({IMG})\n",
    "fence in a list": f"- ```\n  ![a]({IMG})\n  ```\n- ![b]({IMG})\n",
    "fence unclosed in a quote": f"> ```\n> ![a]({IMG})\n\n![b]({IMG})\n",
    "html value over lines": 'a <img src="go.md.assets/\na.png"> b\n',
    "html value with spaces around": f'<img src=" {IMG}\t"> <img\tsrc=\n{IMG}>\n',
    "destination with a no-break space": f"![a]({IMG}\u00a0) ![b](<\u00a0{IMG}>)\n",
    "html comment in an html block": (
        f'<div>\n<!-- <img src="{IMG}"> -->\n<img src="{IMG}">\n</div>\n'
    ),
    "script in an html block": f'<div>\n<script>"<img src={IMG}>"</script>\n</div>\n',
    "img in an attribute of a tag": f'<div title="<img src={IMG}>">\n<img src={IMG}>\n</div>\n',
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_the_images_and_links_moved_are_the_ones_the_page_shows(text: str) -> None:
    assert_moved_as_shown(text)


def test_every_pair_of_cases_is_read_as_the_page_reads_it() -> None:
    """Blocks end and begin in each other's company too (a case after another, with
    and without a blank line between)."""
    texts = list(CASES.values())
    for first in texts:
        for second in texts:
            for joint in ("", "\n"):
                assert_moved_as_shown(first + joint + second)


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (
            f"<div>\n```\n</div>\n\n![a]({IMG})\n",
            "<div>\n```\n</div>\n\n![a](went.md.assets/a.png)\n",
        ),
        (f"> [r]: {IMG}\n", "> [r]: went.md.assets/a.png\n"),
        (f"<div>\n![a]({IMG})\n</div>\n", f"<div>\n![a]({IMG})\n</div>\n"),
        (f'\\<img src="{IMG}">\n', f'\\<img src="{IMG}">\n'),
        (f"![a]({IMG} and more\n", f"![a]({IMG} and more\n"),
        (f"text\n[r]: {IMG}\n", f"text\n[r]: {IMG}\n"),
        (
            f"| a \\| ![x]({IMG}) |\n|---|\n",
            "| a \\| ![x](went.md.assets/a.png) |\n|---|\n",
        ),
        (f"![a]({IMG})\r\n", "![a](went.md.assets/a.png)\r\n"),
    ],
)
def test_the_bytes_around_a_moved_link_are_kept(before: str, after: str) -> None:
    assert moved(before) == after


def test_a_rewrite_that_would_change_how_the_note_reads_leaves_html_values_alone() -> None:
    """Encoding a value that holds an HTML block's end would make the block swallow
    the definition after it; the definition is still moved."""
    text = f'<pre><img src="a</pre>">\n\n[r]: {IMG}\n\n![x][r]\n'
    assert moved(text) == text.replace(f"[r]: {IMG}", "[r]: went.md.assets/a.png")


def test_a_pipe_in_the_new_name_is_encoded_where_a_table_would_split_on_it() -> None:
    text = f"| a | b |\n|---|---|\n| ![x]({IMG}) | <img src='{IMG}'> |\n"
    after = rewrite_links(text, OLD, "archive/a|b.md", relocate_note(OLD, "archive/a|b.md"))
    assert after.count("a%7Cb.md.assets/a.png") == 2, after
    assert [t.type for t in new_parser().parse(after)] == [t.type for t in new_parser().parse(text)]


def test_a_note_past_the_page_bounds_still_has_its_images_moved() -> None:
    """The page shows it as plain text; other programs show its images: the linear
    scan moves them."""
    filler = "word " * (MAX_RENDERED_CHARS // 5)
    text = f"![a]({IMG})\n\n{filler}\n\n> ![b]({IMG})\n"
    assert moved(text) == text.replace(IMG, "went.md.assets/a.png")


@pytest.mark.parametrize(("marker", "is_list"), [("3.", True), ("٣.", False)])
def test_past_the_page_bounds_only_ascii_digits_make_a_list(marker: str, is_list: bool) -> None:
    """CommonMark's list markers are ASCII digits followed by a space or tab: the linear
    scan took ``٣.`` for one, and the indented code after it for list content."""
    filler = "word " * (MAX_RENDERED_CHARS // 5)
    text = f"{filler}\n\n{marker} item\n\n    ![a]({IMG})\n"
    assert (moved(text) != text) is is_list


@pytest.mark.parametrize(
    "unit",
    ["![a](", "[", "> ", "- ", "| a |\n", "<img ", "`", "[r]: x\n", "<div>\n"],
)
def test_hostile_notes_within_the_page_bounds_move_in_bounded_time(unit: str) -> None:
    text = unit * (MAX_RENDERED_CHARS // len(unit)) + f"\n\n![a]({IMG})\n"
    started = time.thread_time()
    moved(text)
    assert time.thread_time() - started < 5
