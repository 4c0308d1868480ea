"""The deterministic merge puts each entry into the note of its topic, end to end against
a real ``indexer serve``: never into a note whose body merely has a ``title:`` line, a
note about another person or place, a note of a number of the other sign, or a note that
another writer created for another title of the same slug meanwhile."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer, vault_dir

from agent_client.merge import fallback
from agent_client.notes import split_note
from agent_client.notices import CollectingNoticeSink, SystemNotice
from agent_client.settings import ClientSettings
from agent_client.vault import Vault
from agent_client.writer import MemoryWriter
from shared.models import MemoryEntry
from shared.workspace import OVERVIEW_FILE

T0 = datetime(2026, 11, 29, 20, 0, 0, tzinfo=UTC)
_langs = itertools.count()


@pytest.fixture
def lang() -> str:
    return f"en-t{next(_langs):03d}"


def remember(
    writer: MemoryWriter, sink: CollectingNoticeSink, lang: str, title: str, content: str
) -> SystemNotice:
    writer.submit([MemoryEntry(lang, "knowledge", title, content, timestamp=T0)])
    assert writer.flush(60)
    notice = sink.notices[-1]
    assert notice.ok and notice.method == "fallback", notice
    return notice


def title_of(server: RunningIndexer, lang: str, path: str) -> str:
    return str(split_note((vault_dir(server, lang) / path).read_text())[0]["title"])


def test_a_title_line_in_a_note_body_is_not_the_notes_title(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    example = "Example:\n\n```yaml\ntitle: Shopping list\n```"
    remember(writer, sink, lang, "How to write frontmatter", example)
    items = vault_dir(server, lang) / "items"
    (items / "yaml.md").write_text(f"{example}\n")  # no frontmatter: its name is its title
    before = (items / "how-to-write-frontmatter.md").read_text()

    notice = remember(writer, sink, lang, "Shopping list", "milk, eggs")
    assert notice.updated_files == ["items/shopping-list.md"]
    assert (items / "how-to-write-frontmatter.md").read_text() == before
    assert (items / "yaml.md").read_text() == f"{example}\n"
    # the frontmatter title still finds a note whose file name is another
    (items / "lists").mkdir()
    (items / "lists/weekly.md").write_text("---\ntitle: Weekly groceries\n---\n# Weekly\n")
    notice = remember(writer, sink, lang, "weekly GROCERIES", "bread")
    assert notice.updated_files == ["items/lists/weekly.md"]


@pytest.mark.parametrize(
    ("first", "content", "second"),
    [
        ("Favourite drink of Carol", "Carol drinks tea, unlike Dave.", "Favourite drink of Dave"),
        ("Flight to Paris on May 3", "AF123; Berlin is booked apart.", "Flight to Berlin on May 3"),
        ("Train to Paris", "The train from Paris is at 6.", "Train from Paris"),
    ],
)
def test_titles_about_other_people_or_places_get_notes_of_their_own(
    server: RunningIndexer,
    writer: MemoryWriter,
    sink: CollectingNoticeSink,
    lang: str,
    first: str,
    content: str,
    second: str,
) -> None:
    """The first note holds every word of the second title: the search finds it."""
    (one,) = remember(writer, sink, lang, first, content).updated_files
    (two,) = remember(writer, sink, lang, second, "the second fact").updated_files
    assert one != two
    assert title_of(server, lang, one) == first and title_of(server, lang, two) == second
    assert "the second fact" not in (vault_dir(server, lang) / one).read_text()


def test_a_title_with_a_function_word_more_still_finds_its_note(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    (path,) = remember(writer, sink, lang, "The past tense of go", "went").updated_files
    notice = remember(writer, sink, lang, "Past tense of go", "gone")
    assert notice.updated_files == [path] and notice.update_summary.startswith("Added")


def test_signed_numbers_and_punctuation_titles_are_topics_of_their_own(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    titles = ["-5 degrees", "5 degrees", "..", "---", "?", "!"]
    paths = [remember(writer, sink, lang, t, f"fact about {t}").updated_files for t in titles]
    assert len({tuple(p) for p in paths}) == len(titles)
    for title, (path,) in zip(titles, paths, strict=True):
        assert title_of(server, lang, path) == title
    again = remember(writer, sink, lang, "?", "another fact about ?")
    assert again.updated_files == paths[titles.index("?")]
    assert again.update_summary.startswith("Added")


@pytest.mark.parametrize(("other", "expected"), [("C++", "items/c-2.md"), ("C#", "items/c.md")])
def test_a_note_created_meanwhile_is_merged_into_only_when_it_is_this_titles(
    server: RunningIndexer,
    writer: MemoryWriter,
    sink: CollectingNoticeSink,
    lang: str,
    monkeypatch: pytest.MonkeyPatch,
    other: str,
    expected: str,
) -> None:
    """Another writer creates ``items/c.md`` for ``other`` between this merge choosing
    the name and creating the note there (as two processes racing do)."""
    choose = fallback.new_note_path
    raced: list[str] = []

    async def racing(vault: Vault, title: str) -> str:
        path = await choose(vault, title)
        if not raced:
            raced.append(path)
            text = f"---\ntitle: {other}\ntype: item\n---\n# {other}\n\nthe other writer\n"
            await vault.write(path, text, if_match="")
        return path

    monkeypatch.setattr(fallback, "new_note_path", racing)
    notice = remember(writer, sink, lang, "C#", "a fact about C#")
    assert raced == ["items/c.md"]
    assert notice.updated_files == [expected]
    assert title_of(server, lang, "items/c.md") == other
    assert title_of(server, lang, expected) == "C#"
    assert "a fact about C#" in (vault_dir(server, lang) / expected).read_text()
    if expected != "items/c.md":
        assert "a fact about C#" not in (vault_dir(server, lang) / "items/c.md").read_text()


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Python tip", "Python tips"),
        ("Cats", "Cat"),
        ("Project plan", "The project plan"),
        ("The project plan", "Project plan"),
        ("ılık", "ILIK"),  # (search's folds: Turkish's dotless i, Greek capitals, ё)
        ("Καλημέρα σημειώσεις", "ΚΑΛΗΜΕΡΑ ΣΗΜΕΙΩΣΕΙΣ"),
        ("Ёлка", "Елка"),
        ("داده\u200cهای من", "داده های من"),
    ],
)
def test_a_plural_or_an_article_more_is_the_same_topic(
    server: RunningIndexer,
    writer: MemoryWriter,
    sink: CollectingNoticeSink,
    lang: str,
    first: str,
    second: str,
) -> None:
    """A note was found by a search for every word of the new title: "Python tips" (or
    "The project plan") never found "Python tip", and each made a note of its own."""
    made = remember(writer, sink, lang, first, "one").updated_files
    again = remember(writer, sink, lang, second, "two").updated_files
    assert again == made, (made, again)
    text = (vault_dir(server, lang) / made[0]).read_text()
    assert "one" in text and "two" in text


def test_a_full_note_says_so_and_how_to_go_on(tmp_path: Path) -> None:
    """A note at the size limit refused every later entry of its topic with the limit's
    words alone ("too_large: ... more than the limit"), whatever the entry."""
    server = start_indexer(tmp_path / "ws", env={"INDEXER_MAX_FILE_BYTES": "4096"})
    sink = CollectingNoticeSink()
    writer = MemoryWriter(ClientSettings(workspace=server.workspace, tz=UTC), sink)
    try:
        remember(writer, sink, "en", "Reading list", "x" * 3000)
        writer.submit([MemoryEntry("en", "knowledge", "Reading list", "y" * 1500, timestamp=T0)])
        assert writer.flush(60)
        failed = sink.notices[-1]
        assert not failed.ok and "items/reading-list.md is full" in (failed.error or "")
        assert "split it into notes of their own" in (failed.error or "")
        assert "y" * 100 not in (vault_dir(server, "en") / "items/reading-list.md").read_text()
    finally:
        writer.close()
        server.stop()


def test_a_person_s_infinite_number_in_frontmatter_keeps_the_note_theirs(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    """``max_pages: .inf`` made the block unreadable to the writer (no JSON number for it):
    the next entry of that topic made ``reading-goal-2.md`` beside the person's note."""
    items = vault_dir(server, lang) / "items"
    items.mkdir(parents=True)
    block = "---\ntitle: Reading goal\nmax_pages: .inf\nmin: -.Inf\n---\n"
    (items / "reading-goal.md").write_text(f"{block}Twelve books a year.\n")
    notice = remember(writer, sink, lang, "Reading goal", "One of them in Spanish.")
    assert notice.updated_files == ["items/reading-goal.md"]
    meta, body = split_note((items / "reading-goal.md").read_text())
    assert (meta["max_pages"], meta["min"]) == (".inf", "-.Inf")  # as text, written quoted
    assert "Twelve books" in body and "Spanish" in body


def test_a_person_s_note_without_frontmatter_is_titled_by_its_heading(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    """A note without a frontmatter title took any entry whose slug is its file name,
    whatever its heading said: a 東京 fact went into 東京.md headed "大阪旅行の計画"."""
    items = vault_dir(server, lang) / "items"
    items.mkdir(parents=True)
    people = {
        "note.md": "# Shopping list\n\nmilk, eggs\n",
        "東京.md": "# 大阪旅行の計画\n\n新幹線で行く\n",
        "京都.md": "# 京都\n\n寺が多い\n",
        "paris.md": "The Eiffel tower.\n",  # no heading either: its name is its title
    }
    for name, text in people.items():
        (items / name).write_text(text)

    assert remember(writer, sink, lang, "Note", "a note").updated_files == ["items/note-2.md"]
    tokyo = remember(writer, sink, lang, "東京", "東京の人口は1400万人")
    assert tokyo.updated_files == ["items/東京-2.md"]
    for name in ("note.md", "東京.md"):
        assert (items / name).read_text() == people[name]
    assert title_of(server, lang, "items/東京-2.md") == "東京"
    # a heading or a file name of the entry's title is its note
    kyoto = remember(writer, sink, lang, "京都", "金閣寺がある")
    paris = remember(writer, sink, lang, "Paris", "The Louvre.")
    assert (kyoto.updated_files, paris.updated_files) == (["items/京都.md"], ["items/paris.md"])
    assert "金閣寺がある" in (items / "京都.md").read_text()
    assert "The Louvre." in (items / "paris.md").read_text()


def test_titles_of_symbols_only_are_named_by_their_symbols(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    """Every title without a letter or digit went to note.md, note-2.md...; "Travel 🇯🇵"
    and "Travel 🇫🇷" to travel.md and travel-2.md."""
    named = {
        "🎉": "items/party-popper.md",
        "🎉🎉": "items/party-popper-party-popper.md",
        "❤️": "items/heavy-black-heart.md",
        "?!": "items/question-mark-exclamation-mark.md",
        "🇯🇵": "items/jp.md",
        "Travel 🇯🇵": "items/travel-jp.md",
        "Travel 🇫🇷": "items/travel-fr.md",
        "Note": "items/note.md",
    }
    for title, path in named.items():
        assert remember(writer, sink, lang, title, f"about {title}").updated_files == [path]
        assert title_of(server, lang, path) == title
    again = remember(writer, sink, lang, "🎉", "party on Friday")
    assert again.updated_files == ["items/party-popper.md"]
    assert again.update_summary.startswith("Added")


def test_a_title_whose_names_are_all_taken_is_refused_with_what_to_do(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    """After ``MAX_SLUG_TWINS`` notes of other titles at a slug's names, an entry was
    refused ``conflict``, as if something changed meanwhile: trying again met the same."""
    items = vault_dir(server, lang) / "items"
    items.mkdir(parents=True)
    names = ["cap.md", *(f"cap-{n}.md" for n in range(2, fallback.MAX_SLUG_TWINS + 1))]
    for n, name in enumerate(names, 1):
        (items / name).write_text(f"---\ntitle: Cap {n}\n---\n# Cap {n}\n")
    writer.submit([MemoryEntry(lang, "knowledge", "Cap", "a fact", timestamp=T0)])
    assert writer.flush(60)
    refused = sink.notices[-1]
    assert not refused.ok
    assert (refused.error or "").startswith("invalid_argument: items/cap.md to items/cap-100.md")
    assert "give the entry a title with more words of its own" in (refused.error or "")
    assert sorted(p.name for p in items.iterdir() if p.name != OVERVIEW_FILE) == sorted(names)
