"""What recall quotes of one note: a ``Source`` and the paragraphs it is quoted from.

A note is quoted from its top, from its end (a day file of events: the newest), or, for
a search hit, from the first paragraph holding a keyword (``recall_focus``). What only
repeats the header is left out: the title line, and a first heading that repeats the
title (``## 2026-05-18: <title>``, as the agent client's fallback merge writes them).

A day file of events (``events/YYYY/MM/DD.md``, written by the agent client) is read as
its ``## Event`` sections: its preamble line and each event's ``tags:`` and ``entry:``
lines are bookkeeping, not memory, and are left out; a hit quotes the one section that
matches (the next events are other matters, and a cut left their heading dangling), the
newest that does (a later event of a matter corrects or updates the earlier ones).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from indexer.index.text import as_read
from indexer.jobs.recall_focus import MAX_QUOTED_LINES, from_focus, keyword_window, read_keyword
from indexer.jobs.tokens import HEADING, iter_paragraphs, paragraphs_of

GIST_CHARS = 2000  # two sources quoting the same first this many characters are one
_DATED = re.compile(r"\d{4}-\d{2}-\d{2}\s*[:：-]?\s*")  # the date of a merged section
_SECTION = re.compile(r"##[ \t]")  # an event's section (its text's headings are escaped)
_BOOKKEEPING = re.compile(r"- (?:tags|entry):")
_METADATA = re.compile(r"- (?:time|title|tags|entry):")
EVENT_LABELS = re.compile(r"- (?:time|title):")  # they say which event the text is
_CLOSING_HASHES = re.compile(r"[ \t]+#+[ \t]*$")  # ``## Title ##``: the #s closing it


@dataclass(frozen=True)
class Source:
    """One candidate: a note (or a folder abstract) to quote."""

    path: str
    title: str
    body: str
    from_end: bool = False  # its newest part matters (a day file of events)
    focus: tuple[str, ...] = ()  # keywords: start at the first paragraph holding one
    lines: int = MAX_QUOTED_LINES  # as many as the budget could show (``lines_shown``)
    events: bool = False  # a day file of events: read as its sections
    compact: bool = False  # a count-only folder abstract: its header line alone

    @functools.cached_property
    def paragraphs(self) -> list[list[str]]:
        """The paragraphs to quote, split once a recall (a source is rendered several times
        while fitting): the title line left out, from the focus on; only ``lines`` lines,
        and with a focus only as far as it is (4 MB notes were split whole, at each render
        or to quote a hit in their first line)."""
        if self.compact:
            return []
        if self.events:
            return self._event_paragraphs()
        if not self.focus:
            shown = paragraphs_of(self.body, self.lines, from_end=self.from_end)
            return _without_repeat(list(_first_untitled(shown, self.title)), self.title)
        each = iter_paragraphs(self.body, MAX_QUOTED_LINES)  # (the focus is read as cut)
        found = from_focus(_first_untitled(each, self.title), self.focus, self.lines)
        return _without_repeat(found, self.title)

    def _event_paragraphs(self) -> list[list[str]]:
        if not self.focus:
            shown = paragraphs_of(self.body, self.lines, from_end=self.from_end)
            sections = list(_sections(_first_untitled(shown, self.title)))
            return [paragraph for section in sections for paragraph in section]
        # Each section read as one paragraph ("" between its own) to find the focus in,
        # newest first: a later event often corrects an earlier one of the same matter
        each = _newest_sections(self.body, self.title)
        flat = ([line for p in section for line in ("", *p)][1:] for section in each)
        found = from_focus(flat, self.focus, self.lines)
        if not found:
            return []
        section = [list(group) for group in _split_at_blanks(found[0])]
        if (
            len(section) > 1
            and len(section[0]) == 1
            and HEADING.match(section[0][0].removeprefix("… "))
        ):
            section = section[1:]  # (its "## Event" heading: the time line says it)
        return section

    @functools.cached_property
    def renders(self) -> dict[tuple[int, int], str]:
        """What ``recall_block`` rendered of this source, by room and quote need: fitting
        a layer renders a source with the same room several times."""
        return {}

    @functools.cached_property
    def openings(self) -> dict[int, str]:
        """The start of what it quotes as ``recall_copies`` compares it, by the most
        characters a block shows: a note quoted at every turn is read for it once."""
        return {}

    @functools.cached_property
    def words(self) -> list[str]:
        """The focus keywords as a reader takes them in (as search found them)."""
        return [w for w in map(read_keyword, self.focus) if w and "\n" not in w]

    @functools.cached_property
    def windowed(self) -> list[list[str]] | None:
        """The paragraphs from the line holding the first keyword on, that line from a few
        words before it ("… " marks the skip): what a room too small for that line shows
        of the hit (its start cut before the keyword, ``… go-to for…``); None when the
        keyword is at the quote's start."""
        if not self.words or not self.paragraphs:
            return None
        # (a note's focus is its first paragraph; an event's text is past its facts)
        for at, paragraph in enumerate(self.paragraphs if self.events else self.paragraphs[:1]):
            for number, line in enumerate(paragraph):
                window = keyword_window(line, self.words)
                if window is None:
                    continue
                if window == line and number == 0 and at == 0:
                    return None
                if window == line and not line.startswith("… "):
                    window = f"… {line}"
                return [[window, *paragraph[number + 1 :]], *self.paragraphs[at + 1 :]]
        return None

    @functools.cached_property
    def gist(self) -> str | None:
        """The text quoted, as compared between sources (the same event logged on many
        days is quoted once): its first ``GIST_CHARS`` characters of text, without
        headings, an event's bookkeeping, the skip marks and the spacing. Only a day
        file's: two notes of the same text are two places a reader may want named."""
        if not self.events:
            return None
        kept: list[str] = []
        size = 0
        for paragraph in self.paragraphs:
            for line in paragraph:
                if HEADING.match(line) or _METADATA.match(line):
                    continue
                kept.append(line.removeprefix("… "))
                size += len(line)
            if size >= GIST_CHARS:
                break
        text = " ".join(" ".join(kept).split())[:GIST_CHARS].casefold()
        return text or None


def _first_untitled(paragraphs: Iterable[list[str]], title: str) -> Iterator[list[str]]:
    """``paragraphs`` without the title line when they start with it."""
    stream = iter(paragraphs)
    first = next(stream, None)
    if first is None:
        return
    if _CLOSING_HASHES.sub("", first[0].strip()) == f"# {title}".strip():
        first = first[1:]
    if first:
        yield first
    yield from stream


def _without_repeat(paragraphs: list[list[str]], title: str) -> list[list[str]]:
    """``paragraphs`` without a first heading that only repeats the title (a date before
    it or not): the header names the title already."""
    if paragraphs and len(paragraphs[0]) == 1 and _repeats(paragraphs[0][0], title):
        return paragraphs[1:]
    return paragraphs


def _repeats(line: str, title: str) -> bool:
    """Whether ``line`` is a heading saying ``title`` (and perhaps a date) alone."""
    if not HEADING.match(line) or not title.strip():
        return False
    text = _CLOSING_HASHES.sub("", line.strip()).lstrip("#").strip()
    text = _DATED.sub("", text, count=1)
    return as_read(text.strip()) == as_read(title.strip())


def _sections(paragraphs: Iterable[list[str]]) -> Iterator[list[list[str]]]:
    """The ``## `` sections of a day file of events, each without its bookkeeping lines;
    what comes before the first (the file's preamble) is left out, unless there is no
    section at all."""
    current: list[list[str]] = []
    seen = False
    for paragraph in _at_sections(paragraphs):
        if _SECTION.match(paragraph[0]):
            if current and seen:
                yield _untitled_event(current)
            current, seen = [], True
            current.append(paragraph)
            continue
        if seen and len(current) == 1:  # the list of the event's facts
            paragraph = [line for line in paragraph if not _BOOKKEEPING.match(line)]
            if not paragraph:
                continue
        current.append(paragraph)
    if current:
        yield _untitled_event(current) if seen else current


def _newest_sections(body: str, title: str) -> Iterator[list[list[str]]]:
    """The sections of a day file's text as ``_sections`` gives them, the newest (last)
    first, found from the text's end: a long day file is not split to its end to reach
    its newest events. The preamble is left out, unless there is no section at all."""
    end = len(body)
    seen = False
    for start in itertools.chain(_section_starts(body), [0]):
        text, end = body[start:end], start
        if not text.strip():
            continue
        paragraphs = iter_paragraphs(text, MAX_QUOTED_LINES)
        if not start:  # (the text's start: its title line is left out, as at the top)
            paragraphs = _first_untitled(paragraphs, title)
        if not _SECTION.match(text) and seen:
            return
        for section in _sections(paragraphs):
            seen = True
            yield section


def _section_starts(body: str) -> Iterator[int]:
    """Where the lines opening with ``## `` or ``##<tab>`` start, the last first; each
    spelling is looked for again only once passed (one scan of the text in all)."""
    found = {opening: body.rfind(opening) for opening in ("\n## ", "\n##\t")}
    while True:
        opening, at = max(found.items(), key=lambda item: item[1])
        if at < 0:
            return
        yield at + 1
        found[opening] = body.rfind(opening, 0, at)


def _at_sections(paragraphs: Iterable[list[str]]) -> Iterator[list[str]]:
    """``paragraphs``, each ``## `` line a paragraph of its own (another program may write
    an event's facts right under its heading, with no blank line)."""
    for paragraph in paragraphs:
        if len(paragraph) == 1:
            yield paragraph
            continue
        group: list[str] = []
        for line in paragraph:
            if _SECTION.match(line):
                if group:
                    yield group
                yield [line]
                group = []
            else:
                group.append(line)
        if group:
            yield group


def _untitled_event(section: list[list[str]]) -> list[list[str]]:
    """An event's section without its ``- title:`` line when its text starts with the
    title (the agent client writes both: the same words twice); a title-only event's
    title as its text."""
    if len(section) == 2 and section[1][-1].startswith("- title: "):
        title = section[1][-1][9:].strip()
        return (
            [section[0], section[1][:-1], [title]] if len(section[1]) > 1 else [section[0], [title]]
        )
    if len(section) < 3:
        return section
    facts, text = section[1], section[2][0]
    kept = [
        line
        for line in facts
        if not (line.startswith("- title: ") and text.startswith(line[9:].strip().rstrip(".")))
    ]
    return [section[0], kept, *section[2:]] if kept else [section[0], *section[2:]]


def _split_at_blanks(lines: list[str]) -> Iterator[list[str]]:
    group: list[str] = []
    for line in lines:
        if line:
            group.append(line)
        elif group:
            yield group
            group = []
    if group:
        yield group


# A note up to this size that recurs unchanged (USER.md, PROJECT.md, the recent notes,
# quoted at every turn) is split and rendered once: ``known``
_KNOWN_BODY_CHARS = 1 << 15
_KNOWN_SOURCES = 64  # (a few MB at most: a dozen a vault and folder)


def known(source: Source) -> Source:
    """The instance of ``source`` an earlier recall made, with what it split and rendered
    (a third of a recall was splitting and fitting the resident and recent notes anew);
    ``source`` itself for a hit (its focus is the turn's query) or a long note."""
    if source.focus or len(source.body) > _KNOWN_BODY_CHARS:
        return source
    return _known(source)


@functools.lru_cache(maxsize=_KNOWN_SOURCES)
def _known(source: Source) -> Source:
    return source
