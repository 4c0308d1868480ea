"""The page in right-to-left scripts beyond a note's own text: a folder's summary of
Arabic notes and the search box read right to left, as a note's paragraphs do."""

from __future__ import annotations

from urllib.parse import quote

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, vault_dir, wait_for
from helpers.ui_page import MD, TEXT, Watch, settled, visit
from playwright.sync_api import Locator, Page, expect

# Where a block's text sits in its box: [gap on the left, gap on the right].
SIDES = """e => {
    const range = document.createRange(); range.selectNodeContents(e);
    const text = range.getBoundingClientRect(), box = e.getBoundingClientRect();
    return [Math.round(text.left - box.left), Math.round(box.right - text.right)];
}"""
BIDI = "e => getComputedStyle(e).unicodeBidi"


@pytest.fixture(scope="module")
def base(server: RunningIndexer) -> str:
    return server.url.removesuffix("/mcp")


def test_an_arabic_folders_summary_reads_right_to_left(page: tuple[Page, Watch], base: str) -> None:
    """The overview of an Arabic folder was laid out left to right (the sentence's full stop
    at its right end, ``…`` at the left), while the same lines in a note read right to left."""
    with httpx2.Client(base_url=base + "/api/v1", timeout=60) as http:
        if not http.get("/status").json()["features"]["summaries"]:
            pytest.skip("the core has no summaries")
        for name, line in (("كتاب", "كتبَ الطالبُ درسًا في المكتبة."), ("قلم", "قلم أزرق جديد.")):
            path = "/rs/notes/" + quote(f"ملاحظات/{name}.md")
            text = f"# {name}\n\n{line}\n"
            assert http.put(path, content=text.encode(), headers=MD).is_success
        made = http.post("/summarize", json={"lang": "rs", "force": True})
        assert made.status_code == 200, made.text
    tab, watch = page
    visit(tab, base, "#/rs/browse/" + quote("ملاحظات"))
    lines = tab.locator("section.summary article.overview li").all()
    assert len(lines) == 2
    for line in lines:
        left, right = line.evaluate(SIDES)
        assert right < 5 < left, (line.text_content(), left, right)  # against the right edge
    assert tab.locator("section.summary p.abstract").evaluate(BIDI) == "plaintext"
    assert not watch.errors


# The left edge of each of ``words`` in an element's text (its first text node's).
LEFTS = """(e, words) => words.map(word => {
    const node = e.firstChild, at = node.data.indexOf(word), range = document.createRange();
    range.setStart(node, at); range.setEnd(node, at + word.length);
    return range.getBoundingClientRect().left;
})"""


@pytest.mark.parametrize("lang", ["ar", "he", "fa"])
def test_the_categories_of_a_right_to_left_abstract_read_in_their_order(
    page: tuple[Page, Watch], base: str, lang: str
) -> None:
    """A summary without a model lists its categories (``type``, often English) after
    the count: in an Arabic abstract ``project، meeting`` made one left-to-right run, so
    a reader of Arabic, reading from the right, met ``meeting`` first, and a Latin name
    beside an Arabic one was read out of its place."""
    folder = quote("الاجتماعات")
    with httpx2.Client(base_url=base + "/api/v1", timeout=60) as http:
        if not http.get("/status").json()["features"]["summaries"]:
            pytest.skip("the core has no summaries")
        for name, kind in (("a", "project"), ("b", "meeting"), ("c", "شخص"), ("d", "task")):
            text = f"---\ntype: {kind}\n---\n# {name}\n\nنص قصير.\n"
            put = http.put(f"/{lang}/notes/{folder}/{name}.md", content=text.encode(), headers=MD)
            assert put.is_success, put.text
        made = http.post("/summarize", json={"lang": lang, "force": True})
        assert made.status_code == 200, made.text
    tab, watch = page
    visit(tab, base, f"#/{lang}/browse/{folder}")
    abstract = tab.locator("section.summary p.abstract")
    lefts = abstract.evaluate(LEFTS, ["project", "meeting", "شخص", "task"])
    assert lefts == sorted(lefts, reverse=True), (abstract.text_content(), lefts)
    assert not watch.errors


def test_the_search_box_takes_the_direction_of_what_is_typed(
    page: tuple[Page, Watch], base: str
) -> None:
    """An Arabic query in the search box was laid out left to right: ``كتب 2024`` showed
    the number at the right end, where a reader of Arabic reads it first."""
    tab, watch = page
    visit(tab, base, "#/")
    box = tab.locator("#search-input")
    box.fill("كتب 2024")
    assert box.evaluate("e => e.matches(':dir(rtl)')")
    box.fill("books 2024")
    assert box.evaluate("e => e.matches(':dir(ltr)')")
    assert not watch.errors


# The left edges of a diff line's marker, its first letter and its last character.
EDGES = """line => {
    const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT), chars = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode())
        for (let i = 0; i < node.data.length; i++)
            if (node.data[i] !== "\\n") chars.push([node, i]);
    const left = ([node, i]) => {
        const range = document.createRange(); range.setStart(node, i); range.setEnd(node, i + 1);
        return range.getBoundingClientRect().left;
    };
    return [left(chars[0]), left(chars[1]), left(chars[chars.length - 1])];
}"""


def test_a_diff_of_arabic_lines_reads_right_to_left(page: tuple[Page, Watch], base: str) -> None:
    """A history diff laid an Arabic line out left to right: its full stop at the right
    end, beside its first word. The ``+`` or ``-`` stays in the left column."""
    path = "/rs/notes/" + quote("فرق.md")
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        for line in ("الكتاب مفيد.", "الكتاب مفيد جدا."):
            text = f"# فرق\n\n{line}\n"
            assert http.put(path, content=text.encode(), headers=MD).is_success
    tab, watch = page
    visit(tab, base, "#/rs/history/" + quote("فرق.md"))
    tab.locator("button.diff-current").last.click()
    removed = tab.locator("pre.diff span.del", has_text="مفيد")
    marker, first_letter, full_stop = removed.evaluate(EDGES)
    assert marker < full_stop < first_letter, (marker, full_stop, first_letter)
    assert not watch.errors


# Where each of ``words`` sits in an element's first text node: [gap on the left, gap on
# the right] between the word and the element's box.
WORD_SIDES = """(e, words) => words.map(word => {
    const node = e.firstChild, at = node.data.indexOf(word), range = document.createRange();
    range.setStart(node, at); range.setEnd(node, at + word.length);
    const text = range.getBoundingClientRect(), box = e.getBoundingClientRect();
    return [Math.round(text.left - box.left), Math.round(box.right - text.right)];
})"""


def test_a_right_to_left_text_file_reads_right_to_left(page: tuple[Page, Watch], base: str) -> None:
    """A ``.txt`` file in Hebrew or Arabic was laid out left to right in its ``<pre>`` (the
    full stop at the right end, beside the first word), while a note's paragraphs read
    right to left. Each line takes the direction of its own words, as a note's do."""
    text = "שורה בעברית.\nAn English line.\nسطر عربي.\n"
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        path = "/rs/notes/" + quote("טקסט/רשימה.txt")
        assert http.put(path, content=text.encode(), headers=TEXT).is_success
    tab, watch = page
    visit(tab, base, "#/rs/note/" + quote("טקסט/רשימה.txt"))
    shown = tab.locator(".note-body pre.plain-text")
    assert shown.text_content() == text
    hebrew, english, arabic = shown.evaluate(WORD_SIDES, ["שורה", "An", "سطر"])
    assert hebrew[1] < 30 < hebrew[0], hebrew  # a line's first word against its start edge
    assert english[0] < 30 < english[1], english
    assert arabic[1] < 30 < arabic[0], arabic
    assert shown.evaluate(BIDI) == "plaintext"
    assert not watch.errors


# The left edge of each of ``words`` in an element's text, wherever it is in its nodes.
WORD_LEFTS = """(e, words) => {
    const walker = document.createTreeWalker(e, NodeFilter.SHOW_TEXT), found = {};
    for (let node = walker.nextNode(); node; node = walker.nextNode())
        for (const word of words) {
            const at = node.data.indexOf(word);
            if (at < 0 || word in found) continue;
            const range = document.createRange();
            range.setStart(node, at); range.setEnd(node, at + word.length);
            found[word] = range.getBoundingClientRect().left;
        }
    return words.map(word => found[word]);
}"""


def test_a_right_to_left_path_in_a_history_reads_in_its_order(
    page: tuple[Page, Watch], base: str
) -> None:
    """A diff's ``--- ملاحظات/2024/كتاب.md@1`` was one right-to-left run: its file name
    at the left, ``.md`` after the first folder's name. Each folder's name is an island in
    the page's direction now, as in the crumbs above; so is the history heading's name."""
    path = "ملاحظات/2024/كتاب.md"
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        for line in ("سطر أول.", "سطر ثان."):
            put = http.put("/rs/notes/" + quote(path), content=f"{line}\n".encode(), headers=MD)
            assert put.is_success, put.text
    tab, watch = page
    visit(tab, base, "#/rs/history/" + quote(path))
    heading = tab.locator("h1")
    assert heading.text_content() == "History of كتاب.md"
    assert heading.locator(".path-name").evaluate(BIDI) == "isolate"
    tab.locator("button.diff-current").last.click()
    expect(tab.locator("pre.diff")).to_contain_text("@@")
    heads = tab.locator("pre.diff span.hunk").all()[:2]
    for head, marker, version in zip(heads, ("---", "+++"), ("@1", "@current"), strict=True):
        assert head.text_content() == f"{marker} {path}{version}\n"
        words = [marker, "ملاحظات", "2024", "كتاب", ".md", version]
        lefts = head.evaluate(WORD_LEFTS, words)
        assert lefts == sorted(lefts), dict(zip(words, lefts, strict=True))
    assert not watch.errors


def test_a_changed_line_of_dashes_is_a_changed_line(page: tuple[Page, Watch], base: str) -> None:
    """A removed ``-- signed`` (``--- signed`` in the diff) or an added ``++ new`` showed
    grey as the diff's own headings, not as removed or added: only the first two lines
    name the versions."""
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        for text in ("# Dashes\n\n-- signed\nbody\n", "# Dashes\n\nbody\n++ new\n"):
            assert http.put("/rs/notes/dashes.md", content=text.encode(), headers=MD).is_success
    tab, watch = page
    visit(tab, base, "#/rs/history/dashes.md")
    tab.locator("button.diff-current").last.click()
    diff = tab.locator("pre.diff")
    expect(diff).to_contain_text("+++ dashes.md@current")
    spans = diff.locator("> span").all()
    lines = {line.text_content(): line.get_attribute("class") for line in spans}
    assert lines["--- signed\n"] == "del", diff.text_content()
    assert lines["+++ new\n"] == "add", diff.text_content()
    assert lines["--- dashes.md@1\n"] == lines["+++ dashes.md@current\n"] == "hunk"
    assert not watch.errors


def in_order(element: Locator, words: list[str]) -> None:
    """``words`` stand left to right in ``element``, as they come in its text."""
    lefts = element.evaluate(WORD_LEFTS, words)
    assert None not in lefts and lefts == sorted(lefts), dict(zip(words, lefts, strict=True))


OLD = "ملاحظات/2024/كتاب.md"
NEW = "أرشيف/2023/دفتر.md"
OLD_WORDS = ["ملاحظات", "2024", "كتاب", ".md"]
NEW_WORDS = ["أرشيف", "2023", "دفتر", ".md"]


def test_a_right_to_left_path_in_search_results_reads_in_its_order(
    page: tuple[Page, Watch], base: str
) -> None:
    """A search result's path beside its title was one right-to-left run: ``كتاب.md`` at
    the left, ``.md`` after the first folder's name. Each folder's name is an island now."""
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        text = "# كتاب\n\nzebrafinch\n"
        put = http.put("/rp/notes/" + quote(OLD), content=text.encode(), headers=MD)
        assert put.is_success, put.text
    tab, watch = page
    visit(tab, base, "#/rp/search?q=zebrafinch")
    shown = tab.locator("ol.search-results > li span.path")
    assert shown.text_content() == f" {OLD}"
    in_order(shown, OLD_WORDS)
    assert not watch.errors


def test_a_right_to_left_path_moved_to_or_from_reads_in_its_order(
    page: tuple[Page, Watch], base: str
) -> None:
    """A history's ``moved to`` and ``moved from`` links, the banner of a note moved away
    and the notice of a note moved while its history was open showed the other path as one
    right-to-left run. They read folder by folder now; each link goes where it went."""
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        for text in ("# كتاب\n\nسطر أول.\n", "# كتاب\n\nسطر ثان.\n"):
            put = http.put("/rm/notes/" + quote(OLD), content=text.encode(), headers=MD)
            assert put.is_success, put.text
        tab, watch = page
        visit(tab, base, "#/rm/history/" + quote(OLD))
        moved = http.post("/rm/move", json={"path": OLD, "new_path": NEW})
        assert moved.is_success, moved.text
    tab.locator("button.diff-current").last.click()
    gone = tab.locator("#gone")
    expect(gone).to_contain_text(f"{OLD} was moved to {NEW} since this page showed it")
    in_order(gone, [*OLD_WORDS[:3], "was moved to", *NEW_WORDS[:3]])
    in_order(gone.locator("a"), NEW_WORDS)
    assert gone.locator("a").get_attribute("href") == "#/rm/history/" + quote(NEW)

    tab.reload()  # (the same address: no new view without a reload)
    settled(tab, "#/rm/history/" + quote(OLD))
    banner = tab.locator("p.banner")
    assert banner.text_content() == f"{OLD} was moved to {NEW}; the versions below are from before."
    in_order(banner, [*OLD_WORDS, "was moved to", *NEW_WORDS[:3]])
    to = tab.locator("tr[data-op=move] td", has_text="moved to")
    assert to.text_content() == f"moved to {NEW}"
    in_order(to, ["moved to", *NEW_WORDS])
    assert to.locator("a").get_attribute("href") == "#/rm/note/" + quote(NEW)

    visit(tab, base, "#/rm/history/" + quote(NEW))
    back = tab.locator("td", has_text="moved from")
    assert back.text_content() == f"moved from {OLD}"
    in_order(back, ["moved from", *OLD_WORDS])
    back.locator("a").locator("text=2024").click()  # (a click on a folder's name follows it)
    settled(tab, "#/rm/history/" + quote(OLD))
    assert not watch.errors


def test_a_right_to_left_path_in_a_notice_reads_in_its_order(
    page: tuple[Page, Watch], base: str
) -> None:
    """``Restored version 1 of ملاحظات/2024/كتاب.md.`` above the note showed the path as
    one right-to-left run, as did the notices of a save and a delete."""
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        for text in ("# كتاب\n\nسطر أول.\n", "# كتاب\n\nسطر ثان.\n"):
            put = http.put("/rn/notes/" + quote(OLD), content=text.encode(), headers=MD)
            assert put.is_success, put.text
    tab, watch = page
    visit(tab, base, "#/rn/history/" + quote(OLD))
    watch.accept_dialogs = True
    tab.locator("tr[data-version='1'] button.restore").click()
    settled(tab, "#/rn/note/" + quote(OLD))
    notice = tab.locator("#message")
    assert notice.text_content() == f"Restored version 1 of {OLD}."
    in_order(notice, ["Restored version 1 of", *OLD_WORDS])
    assert not watch.errors


def test_a_right_to_left_path_the_status_names_reads_in_its_order(
    page: tuple[Page, Watch], base: str, server: RunningIndexer
) -> None:
    """The status named a file no tool can reach, ``ملاحظات/2024/نسبة 3:2.md``, as one
    right-to-left run (``نسبة`` at the left), and two Arabic paths in a row as one."""
    with httpx2.Client(base_url=base + "/api/v1", timeout=30) as http:
        assert http.put("/ru/notes/seen.md", content=b"# Seen\n", headers=MD).is_success
        folder = vault_dir(server, "ru") / "ملاحظات" / "2024"
        folder.mkdir(parents=True)
        (folder / "نسبة 3:2.md").write_text("made elsewhere\n")

        def said() -> dict | None:  # (a walk is kept ten times as long as it took)
            return http.get("/status").json()["unreachable"].get("ru")  # type: ignore[no-any-return]

        found = wait_for(said, 10, what="/status to name the file")
    assert found["sample"] == ["ملاحظات/2024/نسبة 3:2.md"], found
    tab, watch = page
    visit(tab, base, "#/status")
    cell = tab.locator("section.status tr", has_text="unreachable files").locator("td")
    assert "ru: 1 files or folders" in (cell.text_content() or "")
    in_order(cell, ["ru: 1", "ملاحظات", "2024", "نسبة", ".md", "; rename"])
    assert not watch.errors
