"""``NoteRenderer``: Markdown to sanitized HTML; hostile notes come out inert."""

from __future__ import annotations

import html
import re
import time
from datetime import date

import pytest
from helpers.hostile import HOSTILE

from indexer.web.render import NoteRenderer, plain


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_markup_comes_out_inert(hostile: str) -> None:
    html = NoteRenderer().html("en", "items/x.md", f"# T\n\n{hostile}\n\ntext after\n")
    lowered = html.lower()
    bad_tags = ("<script", "<iframe", "<object", "<embed", "<style", "<meta", "<form", "<base")
    for bad in (*bad_tags, "<input", "<body", "<svg"):
        assert bad not in lowered
    assert not re.search(
        r"(href|src|action|data|formaction)\s*=\s*[\"']?\s*(javascript|data):", lowered
    )
    assert not re.search(r"\son\w+\s*=", lowered) and "style=" not in lowered
    assert "text after" in html


@pytest.mark.parametrize(
    "note",
    [
        "<ul><li>" * 16_000,  # 11 s in nh3 (the square of the nesting)
        "<div>" * 100_000,
        "<b>x</b> <i>y</i>\n" * 30_000,  # 7 s per MB in markdown-it
        "<script>alert(1)</script>\n" * 20_000,
        "![" * 32_000,  # 70 µs a bracket in markdown-it
        "# heading\n" * 6_500,
        "- a\n+ b\n* c\n" * 5_000,  # 170 µs a list item (64 Ki of them: 3.8 s)
        "a|b\n-|-\n" + "c|d\n" * 16_000,
    ],
)
def test_a_view_takes_bounded_work_and_stays_inert(note: str) -> None:
    """A note built to take minutes of a worker thread (which nothing can stop: the
    server could not shut down while it rendered) is shown as text instead."""
    started = time.thread_time()
    html = NoteRenderer().html("en", "items/x.md", f"# T\n\n{note}\nend\n")
    assert time.thread_time() - started < 3.0  # (11 s to hours before)
    assert "<script" not in html.lower() and "end" in html


@pytest.mark.parametrize("nested", ["<ul/><li/>", "<div />", "<ul><li></x></y>", "<DIV\n>"])
def test_raw_html_nests_as_a_parser_reads_it(nested: str) -> None:
    """ "/>" closes no <ul> in HTML, nor does an end tag that matches nothing: counted as
    closing, 25,000 of them took nh3 10 s."""
    html = NoteRenderer().html("en", "a.md", nested * 300)
    assert "&lt;" in html and "<ul>" not in html.lower() and "<div>" not in html.lower()


@pytest.mark.parametrize(
    ("note", "plain"),
    [
        ("- a\n" * 4_000, False),
        ("- a\n" * 4_001, True),  # lines: 170 µs a list item or table row
        ("|" * 8_000, False),
        ("|" * 8_001, True),  # markup signs: 70 µs a bracket or cell
        ("a" * (64 * 1024), False),
        ("a" * (64 * 1024 + 1), True),
    ],
)
def test_the_bounds_of_a_rendered_note(note: str, plain: bool) -> None:
    html = NoteRenderer().html("en", "a.md", note)
    assert html.startswith("<p><em>Longer than") == plain
    # shown as the plain text it then is: each line in its own direction, as a .txt file
    assert ('<pre class="plain-text">' in html) == plain


def test_deep_outlines_are_rendered_whole_or_shown_as_plain_text() -> None:
    """markdown-it's preset stops at 20 block levels: an outline 10 deep lost its deeper
    items and every paragraph after it, a quote 25 deep its text, silently."""
    outline = "".join("  " * n + f"- item {n}\n" for n in range(12)) + "\nafter the list\n"
    html = NoteRenderer().html("en", "a.md", outline)
    assert "item 11" in html and "after the list" in html and "plain text" not in html
    quote = ">" * 25 + " deep text\n\nafter\n"
    html = NoteRenderer().html("en", "a.md", quote)
    assert "deep text" in html and "after" in html and "plain text" not in html
    for hostile in (">" * 500 + " hidden\n", "".join("  " * n + "- x\n" for n in range(70))):
        html = NoteRenderer().html("en", "a.md", hostile + "\nafter\n")
        assert "shown as plain text" in html and "after" in html, hostile[:20]
        assert '<pre class="plain-text">' in html
    assert "hidden" in NoteRenderer().html("en", "a.md", ">" * 500 + " hidden\n")
    # the pass without raw HTML (for HTML nested too deep) is held to the same bound
    mixed = "<div>" * 210 + "\n" + "> " * 130 + "deep text\n"
    assert "shown as plain text" in (html := NoteRenderer().html("en", "a.md", mixed))
    assert "deep text" in html
    # a lone CR ends a line: the line bound counts it
    assert "plain text" in NoteRenderer().html("en", "a.md", "- a\r" * 4_001)


def test_html_leaving_out_optional_end_tags_is_kept() -> None:
    """A parser closes <li>, <td>, <tr> and <p> when the next one opens: counted as
    nesting, a list of 210 items was shown as text."""
    items = "<ul>\n" + "<li>item\n" * 210 + "</ul>\n"
    table = "<table>" + "<tr><td>0<td>cell<td>more" * 70 + "</table>\n"
    html = NoteRenderer().html("en", "a.md", items + "\n" + table)
    assert html.count("<li>") == 210 and html.count("<td>") == 210 and "&lt;" not in html
    # through what is open inside them: a paragraph in the item, the cell
    for valid in (
        "<ul>" + "<li><p>item\n" * 120,
        "<table>" + "<tr><td><p>cell\n" * 120,
        "<table>" + "<tbody><tr><td>x" * 80,
        "<select>" + "<optgroup label=a><option>x" * 120,
        "<ruby>" + "漢<rp>(<rt>kan<rp>)" * 80 + "</ruby>",
    ):
        assert "&lt;" not in NoteRenderer().html("en", "a.md", valid), valid[:30]


@pytest.mark.parametrize(
    "nested",
    [
        "".join(f"<li><b a={i}>x" for i in range(2_000)),  # each item opens every <b> again
        "".join(f"<p><b a={i}>x" for i in range(2_000)),
        "<li><article>" * 3_000,  # an item's end is not looked for through <article>
        "".join(f"<p>x<b a={i}></p>" for i in range(2_600)),  # nor does an end tag close <b>
    ],
)
def test_what_the_sibling_rule_must_not_close(nested: str) -> None:
    """Closing a list item or paragraph popped its <b>, but HTML opens it again in the
    next item: 29 KB of note gave 14 MB of HTML in 1.8 s (42 MB with attributes)."""
    html = NoteRenderer().html("en", "a.md", "<ul>" + nested)
    assert "&lt;" in html and len(html) < 200_000


def test_raw_html_of_a_reasonable_depth_is_kept() -> None:
    html = NoteRenderer().html("en", "a.md", "<div>" * 150 + "deep" + "</div>" * 150)
    assert html.count("<div>") == 150 and "deep" in html


def test_links_and_images_resolve_inside_the_vault() -> None:
    text = (
        "[n](other.md) [s](../sub/x%20y.md) [w](https://example.com/) [m](mailto:a@b.c) "
        "![p](go.md.assets/p.png) ![r](http://example.com/t.png) [up](../../../etc/passwd) "
        "[abs](/etc/passwd) [frag](#top)"
    )
    html = NoteRenderer().html("en", "items/go.md", text)
    assert 'href="#/en/note/items/other.md"' in html
    assert 'href="#/en/note/sub/x%20y.md"' in html
    assert 'href="https://example.com/"' in html and 'href="mailto:a@b.c"' in html
    assert 'src="/api/v1/en/raw/items/go.md.assets/p.png"' in html
    assert "example.com/t.png" not in html  # remote images are dropped (tracking)
    assert "etc/passwd" not in html and 'href="#top"' not in html
    assert 'rel="noopener noreferrer nofollow"' in html


def test_frontmatter_becomes_plain_properties() -> None:
    note = NoteRenderer().note(
        "en",
        "a.md",
        "---\ntitle: <b onmouseover=x>T</b>\ntags: [a, b]\ncreated: 2026-11-29T20:01:02Z\n"
        "---\n# Body\n",
    )
    assert note["properties"]["title"] == "<b onmouseover=x>T</b>"  # text, escaped by the page
    assert note["properties"]["tags"] == ["a", "b"]
    assert note["properties"]["created"] == "2026-11-29T20:01:02Z"  # as written
    assert note["frontmatter_error"] is None and "<h1>Body</h1>" in note["html"]


def test_broken_frontmatter_is_shown_not_fatal() -> None:
    note = NoteRenderer().note("en", "a.md", "---\n: [\n---\n# Body\n")
    assert note["properties"] == {} and note["frontmatter_error"]
    assert note["html"] == "<h1>Body</h1>\n"


def test_plain_values_are_json() -> None:
    assert plain([float("nan"), {"k": date(2026, 1, 2)}, None, True]) == [
        "nan",
        {"k": "2026-01-02"},
        None,
        True,
    ]


@pytest.mark.parametrize(
    "markdown",
    [
        '<img src="\xa0cat.md.assets/c.png">',
        '<img src=" \t\xa0cat.md.assets/c.png\u2003 ">',
        "![c](%C2%A0cat.md.assets/c.png)",
    ],
)
def test_an_image_named_with_a_no_break_space_first_is_shown(markdown: str) -> None:
    """The URL was stripped of all Unicode white space: the image asked for cat.md.assets/,
    not the vault's '\\xa0cat.md.assets/' (only C0 controls and space are a URL's to strip)."""
    html = NoteRenderer().html("en", "items/n.md", markdown)
    src = re.findall(r'src="([^"]*)"', html)
    assert src and src[0].startswith("/api/v1/en/raw/items/%C2%A0cat.md.assets/c.png"), html


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("prefs.xml", "<prefs><lang>fr</lang><img src=x onerror=alert(1)></prefs>\n"),
        ("data.json", '{"a": "<img src=x onerror=alert(1)>", "b": "*x* # h [[y]]"}\n'),
        ("list.yaml", "---\ntitle: not frontmatter\n---\n- one\n"),
        ("todo.txt", "# not a heading\n*not italic* <script>alert(1)</script>\n"),
    ],
)
def test_a_plain_text_file_is_shown_as_its_text(path: str, text: str) -> None:
    """A ``.xml``, ``.json``, ``.yaml``, ``.txt`` or ``.csv`` file has no frontmatter and is
    no Markdown (SPEC): read as a note, an XML file's tags were dropped (the page showed
    ``fr``), a JSON string's ``<img>`` became a link to ``raw/x``, ``*x*`` italics."""
    rendered = NoteRenderer().note("en", f"memories/{path}", text)
    assert rendered["properties"] == {} and rendered["frontmatter_error"] is None
    assert rendered["html"] == f'<pre class="plain-text">{html.escape(text)}</pre>'
