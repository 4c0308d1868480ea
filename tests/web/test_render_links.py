"""Obsidian's wikilinks and embeds on the page, and links resolved by file name across
the vault (``link_targets``): what the vault holds is linked, the rest marked."""

from __future__ import annotations

import time
from collections.abc import Collection
from html.parser import HTMLParser
from urllib.parse import unquote

import pytest

from indexer.vault.file_names import name_key
from indexer.web.render import NoteRenderer

FILES = [
    "Attachments/shot.png",
    "Attachments/Engelsk ordbok.png",
    "deep/er/shot.png",
    "notes/shot.png",
    "Guides/Start here.md",
    "Guides/Linking notes.md",
    "Other/Linking notes.md",
    "top.md",
    "notes/n.md",
    "Bilder/日本語 🎉.png",
    "Bilder/שלום.md",
]


class Lookup:
    """A vault's files by name, counting the calls and the names asked."""

    def __init__(self, files: list[str]) -> None:
        self.files = files
        self.calls: list[int] = []

    def __call__(self, lang: str, keys: Collection[str]) -> dict[str, list[str]]:
        self.calls.append(len(keys))
        wanted = set(keys)
        found: dict[str, list[str]] = {}
        for path in self.files:
            key = name_key(path.rsplit("/", 1)[-1])
            if key in wanted:
                found.setdefault(key, []).append(path)
        return found


def render(markdown: str, path: str = "notes/n.md", files: list[str] = FILES) -> str:
    return NoteRenderer(lookup=Lookup(files)).html("en", path, markdown)


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("[[Start here]]", '<a href="#/en/note/Guides/Start%20here.md"'),
        ("[[Start here|the start]]", ">the start</a>"),
        ("[[Start here#Heading two]]", ">Start here &gt; Heading two</a>"),
        ("[[Guides/Start here]]", '<a href="#/en/note/Guides/Start%20here.md"'),
        ("[[guides/start HERE.md]]", '<a href="#/en/note/Guides/Start%20here.md"'),
        ("[[top]]", '<a href="#/en/note/top.md"'),
        ("[[#Heading]]", '<a href="#/en/note/notes/n.md?heading=Heading"'),
        # (a heading is where the page opens the note)
        ("[[Start here#Heading two]]", 'Start%20here.md?heading=Heading%20two"'),
        ("[x](../top.md#A%20part)", '<a href="#/en/note/top.md?heading=A%20part"'),
        ("[[top|Tom &amp; Jerry &lt;3]]", ">Tom &amp; Jerry &lt;3</a>"),  # (not &amp;amp;)
        ('[[top#"><b>x?y=1|t]]', '<a href="#/en/note/top.md?heading=%22%3E%3Cb%3Ex%3Fy%3D1"'),
        ("![[Start here]]", '<a href="#/en/note/Guides/Start%20here.md"'),
        ("![[Engelsk ordbok.png]]", '<img src="/api/v1/en/raw/Attachments/Engelsk%20ordbok.png"'),
        ("![[Engelsk ordbok.png|300]]", 'alt="Engelsk ordbok.png" width="300">'),
        ("![[Engelsk ordbok.png|300x20]]", 'width="300" height="20">'),
        ("![[日本語 🎉.png]]", 'src="/api/v1/en/raw/Bilder/%E6%97%A5%E6%9C%AC%E8%AA%9E%20'),
        ("[[שלום]]", '<a href="#/en/note/Bilder/%D7%A9%D7%9C%D7%95%D7%9D.md"'),
        ("| a |\n|---|\n| [[Start here\\|s]] |", ">s</a></td>"),
    ],
)
def test_wikilinks_and_embeds_link_to_the_vaults_files(markdown: str, expected: str) -> None:
    html = render(markdown)
    assert expected in html, html
    assert "[[" not in html


def test_a_bare_name_is_the_nearest_file_of_that_name() -> None:
    # the note's own folder first, then the shortest path; as written from the folder
    assert 'src="/api/v1/en/raw/notes/shot.png"' in render("![](shot.png)")
    assert 'src="/api/v1/en/raw/notes/shot.png"' in render("![[shot.png]]")
    assert 'src="/api/v1/en/raw/Attachments/shot.png"' in render("![[shot.png]]", "top.md")
    assert 'src="/api/v1/en/raw/Attachments/shot.png"' in render("![](shot.png)", "x/y/z.md")
    assert 'src="/api/v1/en/raw/deep/er/shot.png"' in render("![](er/shot.png)", "x.md")
    # a folder in the name: the path ends with it; from the note's folder first
    assert 'href="#/en/note/Other/Linking%20notes.md"' in render("[[Other/Linking notes]]")
    assert 'href="#/en/note/Guides/Linking%20notes.md"' in render(
        "[[Linking notes]]", "Guides/x.md"
    )


def test_what_the_vault_does_not_hold_is_marked_not_linked() -> None:
    html = render("[[Nowhere]] ![[gone.png]] ![lost](lost.png) [old](../old.md) [[a|b]]")
    assert html.count('class="unresolved"') == 5, html
    assert "href" not in html and "src" not in html
    assert "Nowhere" in html and "lost" in html and ">b<" in html


def test_without_a_lookup_links_read_from_the_notes_folder() -> None:
    html = NoteRenderer().html("en", "notes/n.md", "[[Other]] ![[p.png]] ![q](q.png)")
    assert 'href="#/en/note/notes/Other.md"' in html
    assert 'src="/api/v1/en/raw/notes/p.png"' in html
    assert 'src="/api/v1/en/raw/notes/q.png"' in html


def test_wikilinks_in_code_stay_text() -> None:
    html = render("`[[Start here]]`\n\n```\n![[shot.png]]\n```\n\n    [[top]]\n")
    assert "<a" not in html and "<img" not in html
    assert "[[Start here]]" in html and "![[shot.png]]" in html and "[[top]]" in html


@pytest.mark.parametrize(
    "name",
    [
        'a"b',
        "a<b>c",
        "<img src=x onerror=alert(1)>",
        "../../../etc/passwd",
        "../top",
        "%2e%2e/%2e%2e/top",
        "a\x00b",
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "x" * 1000,
        "\u202eevil.png",
        "/etc/passwd",
    ],
)
def test_hostile_target_names_stay_inside_the_vault_and_inert(name: str) -> None:
    files = [*FILES, name.replace("\x00", "")]
    for markdown in (f"[[{name}]]", f"![[{name}]]", f"[[{name}|x]]", f"![[{name}.png]]"):
        for lookup in (Lookup(files), None):
            html = NoteRenderer(lookup=lookup).html("en", "notes/n.md", markdown)
            parsed = Elements()
            parsed.feed(html)
            assert {tag for tag, _ in parsed.found} <= {"p", "a", "img", "span"}, html
            assert [tag for tag, _ in parsed.found].count("p") == 1, html
            for _, attrs in parsed.found:
                assert set(attrs) <= {"href", "src", "alt", "title", "class", "rel"}, html
                for url in (attrs.get("href"), attrs.get("src")):
                    if url is not None:
                        assert url.startswith(("#/en/note/", "/api/v1/en/raw/")), html
                        segments = unquote(url).split("/")
                        assert ".." not in segments and "\x00" not in unquote(url), html


class Elements(HTMLParser):
    """The elements of some HTML with their attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


def test_a_note_of_many_wikilinks_takes_bounded_work() -> None:
    lookup = Lookup(FILES)
    many = "[[a]] " * 100_000  # past the markup bound: plain text, no lookup
    started = time.thread_time()  # (CPU time: wall time is 17 times it on a loaded machine)
    html = NoteRenderer(lookup=lookup).html("en", "a.md", many)
    assert "plain text" in html and not lookup.calls
    assert time.thread_time() - started < 1
    distinct = " ".join(f"[[n{i}]] ![[p{i}.png]]" for i in range(1_900))  # 7,600 brackets
    started = time.thread_time()
    html = NoteRenderer(lookup=lookup).html("en", "a.md", distinct)
    took = time.thread_time() - started
    assert lookup.calls == [2_000], lookup.calls  # one lookup, bounded in names
    assert html.count('class="unresolved"') == 3_800 and took < 3, took


def test_a_note_of_many_pictures_finds_each_up_to_the_lookup_bound() -> None:
    # each ![[p.png]] also asks for a note "p.png.md": those names come after every
    # link's own, so 1,900 pictures are all found (cut in sorted order, 920 were not)
    files = [f"pics/{i % 7}/p{i}.png" for i in range(1_900)]
    html = render(" ".join(f"![[p{i}.png]]" for i in range(1_900)), files=files)
    assert html.count("<img") == 1_900 and "unresolved" not in html
