"""Notes of the same text (a note copied to another folder, a template filled twice):
recall quotes the text once and names each other note holding it right under it, its
header line and ``SAME_TEXT``, so an agent reads the lines once and may open either.

"The same text" is what a reader would call so: what each note would quote, from where
it is quoted on (and the keyword's window a small room shows), without the skip marks
and the spacing, composed (NFC), as far as a block of the budget could show any of it.
A note quoted from another place of the same body (another window: a hit's focus, a
recent note's top) quotes lines the reader has not seen: it is quoted. A day file of
events has its own rule (``Source.gist``: the same event logged on many days is quoted
once, the other days left out).

A note is named where the block would have listed it (among the sources a layer looks
at), under the source of its text wherever that is printed: a recent note of a hit's
text is named under the hit, below the recent notes.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from indexer.jobs.recall_source import Source

# The line under a note's header naming it as holding the text quoted above it: the
# block's own words (every line of a note's starts with "> ", or is a "### " header)
SAME_TEXT = "(same text as above)\n"
OPENING_CHARS = 200  # texts are told apart by their start, and compared whole if alike

Picked = list[tuple[Source, str]]


class Said:
    """What a source quotes, as a reader compares it with another's: equal when the
    texts are; hashed by their start, so that only texts that start alike are read
    whole (a recall looks at a few dozen sources, rarely two of one text)."""

    __slots__ = ("_hash", "_whole", "chars", "opening", "source")

    def __init__(self, source: Source, chars: int, opening: str) -> None:
        self.source, self.chars, self.opening = source, chars, opening
        self._hash = hash(opening)
        self._whole: str | None = None

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Said):
            return NotImplemented
        return self.opening == other.opening and self.whole() == other.whole()

    def whole(self) -> str:
        if self._whole is None:
            source = self.source
            self._whole = as_said(source.paragraphs, self.chars, self.chars)
            if source.windowed is not None:  # (what a room too small for its line shows)
                self._whole += "\n" + as_said(source.windowed, self.chars, self.chars)
        return self._whole


def said(source: Source, chars: int) -> Said | None:
    """What ``source`` quotes, as far as a block shows (``chars``); None for a day file
    (``gist``), a count-only abstract, or a source with nothing to quote."""
    if source.events or source.compact:
        return None
    opening = source.openings.get(chars)
    if opening is None:
        opening = source.openings[chars] = as_said(source.paragraphs, chars, OPENING_CHARS)
    return Said(source, chars, opening) if opening else None


def as_said(paragraphs: list[list[str]], chars: int, most: int) -> str:
    """The first ``most`` characters of ``paragraphs`` (each line up to ``chars``, what
    a block may show of it) as a reader compares them: the skip marks and the spacing
    left out, composed (NFC). Read as far as needed, a few characters past ``most``
    (composing may join the last ones), so that a text's start is its whole's."""
    reach = most + most // 2 + 8  # (characters as written: more where spacing was)
    while True:
        pieces: list[str] = []
        size = 0
        for line in (line for paragraph in paragraphs for line in paragraph):
            piece = line.removeprefix("… ")[:chars]
            if size + len(piece) >= reach:
                pieces.append(piece[: reach - size])
                break
            pieces.append(piece)
            size += len(piece) + 1
        else:
            reach = 0  # (all of it)
        text = " ".join(" ".join(pieces).split())
        if not text.isascii():
            text = unicodedata.normalize("NFC", text)
        if not reach or len(text) > most + 4:
            return text[:most]
        reach *= 4


@dataclass
class Naming:
    """What a layer being picked names rather than quotes."""

    saids: dict[int, Said | None]  # what each source quotes (by its id), as found
    chars: int  # the most characters of a source a block of the budget shows
    elsewhere: dict[Said, Source]  # the sources other layers quote, by what they quote
    under: dict[str, list[Source]]  # notes named under a source (by its path) by others
    late: list[tuple[Source, Source]] = field(default_factory=list)  # (note, its source)

    def said(self, source: Source) -> Said | None:
        key = id(source)
        if key not in self.saids:
            self.saids[key] = said(source, self.chars)
        return self.saids[key]


def quoting(naming: Naming, picked: dict[str, Picked], but: str) -> dict[Said, Source]:
    """The sources the parts other than ``but`` quote, by what they quote."""
    found: dict[Said, Source] = {}
    for part, got in picked.items():
        for source, text in got:
            quoted = naming.said(source) if part != but and not named(text) else None
            if quoted is not None:
                found.setdefault(quoted, source)
    return found


def named(text: str) -> bool:
    """Whether a picked source's text names it under another (no quote ends so)."""
    return text.endswith(SAME_TEXT)


def under(got: Picked, source: Source, note: tuple[Source, str]) -> Picked:
    """``got`` with ``note`` named under ``source``, after the notes named there."""
    at = next(number for number, (each, _) in enumerate(got) if each is source) + 1
    while at < len(got) and named(got[at][1]):
        at += 1
    return [*got[:at], note, *got[at:]]
