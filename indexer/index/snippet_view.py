"""A snippet's text as the highlight regex reads it: what search drops inside a word
taken out, and a space put where search splits a CJK (or Thai...) run from a word glued
to it; ``View.place`` maps the view's places back to the text's.

The index reads a text through ``text.searchable`` and ``cjk_expand``; the highlight
looks for hits in the text as written. Where the two differ inside a word
(``data\u00adbase`` is one word, ``planet東京`` two), the regex is run on a view that
reads as search does, and the hits are marked at the text's own places.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass

import re2

from indexer.index.text import CJK_RUN, FORMAT_CHARS, FORMAT_RUNS, SHOWING_NOTHING, WORD


def words_as_searched(text: str) -> list[str]:
    """The words search matches in ``text`` (``WORD``), cut where a CJK (or Thai...) run
    meets a letter or digit of another script: ``cjk_expand`` puts spaces around every
    run (``API를`` is ``API`` and ``를``, and ``view_of`` spaces a text so too)."""
    words: list[str] = []
    for word in WORD.findall(text):
        cut = 0
        if not word.isascii() and CJK_RUN.search(word) and not CJK_RUN.fullmatch(word):
            for at in range(1, len(word)):
                if _glued(word[at - 1], word[at]):
                    words.append(word[cut:at])
                    cut = at
        words.append(word[cut:])
    return words


def _glued(before: str, after: str) -> bool:
    """Whether search splits two adjacent characters that the highlight regex reads as
    one word: a CJK run's character and a letter or digit of another script."""
    if CJK_RUN.match(before):
        return after.isalnum() and not CJK_RUN.match(after)
    return before.isalnum() and CJK_RUN.match(after) is not None


def blank_keycaps(text: str) -> str:
    """``text`` with each keycap (``1️⃣``) as spaces of its length: search reads one as a
    break, so a phrase goes on across it (the hits' places are the same in ``text``)."""
    if "\u20e3" not in text:
        return text
    return _KEYCAP_RUNS.sub(lambda keycap: " " * len(keycap.group()), text)


_KEYCAP_RUNS = re.compile("(?:[#*0-9]?\ufe0f?\u20e3)+")  # (as ``searchable`` reads them)


@dataclass(frozen=True)
class View:
    """A text as the highlight regex reads it (``text``): without what search drops
    inside words (``data\\u00adbase`` is ``database``), and with a space where search
    splits a CJK run from a word glued to it (``planet東京``); ``place`` maps its places
    back to the text's."""

    text: str
    spaces: tuple[int, ...] = ()  # the places of the spaces put in
    where: tuple[int, ...] = ()  # places (in ``text`` without spaces) that lost characters
    total: tuple[int, ...] = (0,)  # characters taken out before each of those

    @classmethod
    def of(cls, bare: str, removed: list[tuple[int, int]]) -> View:
        """The view of a text that is ``bare`` once the spans ``removed`` (of the text,
        in order) are taken out."""
        glued = _glued_places(bare)
        text = " ".join(bare[a:b] for a, b in itertools.pairwise([0, *glued, len(bare)]))
        before = [0, *itertools.accumulate(end - start for start, end in removed)]
        return cls(
            text,
            tuple(at + count for count, at in enumerate(glued)),
            tuple(start - before[n] for n, (start, _) in enumerate(removed)),
            tuple(before),
        )

    @classmethod
    def joined(cls, views: list[View]) -> View:
        """The view of the texts of ``views`` one after the other."""
        if len(views) == 1:
            return views[0]
        spaces: list[int] = []
        where: list[int] = []
        total = [0]
        length = bare = 0
        for view in views:
            spaces += (length + at for at in view.spaces)
            where += (bare + at for at in view.where)
            removed = total[-1]  # (before this view: its own counts start at 0)
            total += (removed + count for count in view.total[1:])
            length += len(view.text)
            bare += len(view.text) - len(view.spaces)
        return cls("".join(view.text for view in views), tuple(spaces), tuple(where), tuple(total))

    def place(self, index: int) -> int:
        """The place in the text of the place ``index`` of ``text`` (a place that lost
        characters: after them)."""
        index -= bisect.bisect_left(self.spaces, index)
        return index + self.total[bisect.bisect_right(self.where, index)]

    def span(self, span: tuple[int, int]) -> tuple[int, int]:
        """``place`` of both ends."""
        return self.place(span[0]), self.place(span[1])


# Where a text and its view differ, found by RE2 at a few ns a character: a letter or
# digit glued to a CJK (or Thai...) run's character (``_glued``), and an invisible format
# character inside a word. (For RE2, the ``\\u`` of ``CJK_RUN`` are spelled ``\\x``.)
RUN_CHARS = re.sub(r"\\u([0-9a-f]{4})", r"\\x{\1}", CJK_RUN.pattern[1:-2])
_OTHER_WORD = rf"(?:[^\PL{RUN_CHARS}]|[^\PN{RUN_CHARS}])"
_GLUED = rf"[{RUN_CHARS}]{_OTHER_WORD}|{_OTHER_WORD}[{RUN_CHARS}]"
_FORMAT_IN_WORD = rf"[\pL\pN\pM][{SHOWING_NOTHING}]+(?:[\pL\pN\pM]|$)"


@functools.cache
def view_patterns() -> tuple[re2._Regexp, re2._Regexp]:
    """``_GLUED`` and where a view differs, compiled at the first snippet past ASCII or
    once serving (``indexer.daemon``): 5-10 ms of every start."""
    return re2.compile(_GLUED), re2.compile(f"{_GLUED}|{_FORMAT_IN_WORD}")


# The view of a text is made this many characters at a time (a few ms at most), until
# the snippet's CPU time is spent (hits past the part made are not looked for).
_VIEW_BLOCK = 16_384


def differs(text: str) -> bool:
    """Whether ``text`` may differ from its view (a part of a text: it may, when a format
    character after a letter is its end)."""
    return not text.isascii() and view_patterns()[1].search(text) is not None


def view_of(text: str, spent: Callable[[], bool]) -> View:
    """The view of ``text`` (keycaps blanked) for the highlight regex: format characters
    taken out as ``searchable`` takes them out, spaces put in where ``cjk_expand`` puts
    them; of its start only once ``spent`` says the time is spent."""
    views: list[View] = []
    at = 0
    while at < len(text) and not (views and spent()):
        end = _block_end(text, at)
        views.append(_block_view(text[at:end]))
        at = end
    return View.joined(views) if views else View(text)


def _block_end(text: str, at: int) -> int:
    """Where a block of ``text`` from ``at`` on ends: ``_VIEW_BLOCK`` characters on or a
    little more, at a space or between two CJK characters (no word goes on across), or
    (no such place near: a hostile text) just there."""
    end = at + _VIEW_BLOCK
    if end + 64 >= len(text):
        return len(text)
    for cut in range(end, end + 64):
        if text[cut] == " " or CJK_RUN.fullmatch(text, cut - 1, cut + 1):
            return cut
    return end


def _block_view(text: str) -> View:
    """The view of ``text`` (a block of a text, see ``view_of``)."""
    if FORMAT_CHARS.search(text) is None:
        return View.of(text, [])
    removed = [found.span() for found in FORMAT_RUNS.finditer(text)]
    starts = [0, *(end for _, end in removed)]
    ends = [*(start for start, _ in removed), len(text)]
    bare = "".join(text[start:end] for start, end in zip(starts, ends, strict=True))
    return View.of(bare, removed)


def _glued_places(text: str) -> list[int]:
    """The places in ``text`` where search splits a CJK run from a letter or digit of
    another script glued to it (``_glued``), in order."""
    places: list[int] = []
    if text.isascii() or view_patterns()[0].search(text) is None:
        return places
    for run in CJK_RUN.finditer(text):
        start, end = run.span()  # (the characters around are no run's)
        if start > 0 and text[start - 1].isalnum():
            places.append(start)
        if end < len(text) and text[end].isalnum():
            places.append(end)
    return places
