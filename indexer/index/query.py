"""The snippets that show a query's hits (``query_parse`` reads the query)."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
import time
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from indexer.index.query_parse import Term
from indexer.index.snippet_markup import without_markup
from indexer.index.snippet_spaces import one_space_a_run
from indexer.index.snippet_view import (
    View,
    blank_keycaps,
    differs,
    view_of,
    words_as_searched,
)
from indexer.index.text import (
    CJK_RUN,
    folded_from,
    stream_safe,
    without_ignored_marks,
)
from shared.graphemes import character_end, character_start
from shared.reader_folds import DEAD_CONSONANTS, YIDDISH_LIGATURES

# How far into a note a snippet looks for a hit through accents (a few ms at most), and
# for a hit at all (64 terms over a 4 MiB note took 21 s: about 1 s over this many).
LOOSE_SCAN_CHARS = 16_384
HIT_SCAN_CHARS = 262_144
# What a snippet reads of a note: twice the hits' reach, as runs of white space shrink.
SNIPPET_SOURCE_CHARS = 2 * HIT_SCAN_CHARS
# CPU time one snippet may spend looking for hits (ordinary ones take a few ms over the
# whole reach; 64 phrases of 70 one-letter words over "a a a ..." took 25 s).
SNIPPET_CPU_SECONDS = 0.05
# ... and all the snippets of one page (100 hostile results took seconds).
PAGE_SNIPPETS_CPU_SECONDS = 0.5
# What a search loads of each result's body for its snippet: as UTF-8 bytes (SQLite's
# substr of text stops at a NUL), enough for the characters a snippet reads; loading
# every body whole held 100 x 8 MiB at once.
SNIPPET_SOURCE_BYTES = 4 * SNIPPET_SOURCE_CHARS
# (``coalesce``: SQLite before 3.41 gives NULL for any ``substr`` of an empty blob)
SNIPPET_SOURCE_SQL = f"coalesce(substr(CAST(body AS BLOB), 1, {SNIPPET_SOURCE_BYTES + 1}), x'')"
_NOT_SPACE = re.compile(r"\S")
# How much of a note a snippet reads, in turn: most notes and most first hits are short.
_READS = (16_384, 131_072, SNIPPET_SOURCE_CHARS)


def _loose(term: Term) -> Term:
    """``term`` as it is looked for in a text without the marks search ignores."""
    text = without_ignored_marks(term.text)[0]
    return dataclasses.replace(term, text=text or term.text)


@dataclass(frozen=True)
class Highlighter:
    """The regex finding any term (``pattern``), and one finding where a hit may start
    (``starts``: a term's first character, not inside a word), for ``_hits``."""

    pattern: re.Pattern[str]
    starts: re.Pattern[str]
    reach: int  # characters a try of the pattern reads from where it starts, at most
    chunk: int  # places ``pattern`` is searched at in one call (0: one call a start)
    check_every: int  # starts between two looks at the clock (fewer for costly terms)


def highlight_patterns(terms: tuple[Term, ...], loose: bool = False) -> re.Pattern[str]:
    """One regex finding any term in the original text (for snippets). ``loose``: the
    terms without the marks search ignores, for a text without them
    (``text.without_ignored_marks``)."""
    return highlighter(terms, loose).pattern


@functools.lru_cache(maxsize=64)
def highlighter(terms: tuple[Term, ...], loose: bool = False) -> Highlighter:
    """The regexes of ``highlight_patterns``; cached, since every snippet of a page of
    results needs the same ones.

    No part of them backtracks more than a few characters, so one try at one place
    costs at most about the length of the terms: the words of a phrase are apart by
    at most ``MAX_SEPARATOR_CHARS`` characters (taken possessively where the next word
    cannot start inside them), ``ss`` is one group (``ß`` was tried twice: 2^n tries).
    """
    if loose:
        terms = tuple(_loose(term) for term in terms)
    parts, starts, reach = [], [], 2
    for term in sorted(terms, key=lambda t: -len(t.text)):
        words = words_as_searched(term.text)  # what search matched: not the punctuation around
        if words:
            part, start = _term_regex(words, term.prefix)
            parts.append(part)
            if start not in starts:
                starts.append(start)
            # A letter is one character, or two for one (ß: ss, デ: ﾃﾞ); the lookarounds
            # one more; a prefix's word goes on for PREFIX_REST_CHARS at most.
            rest = PREFIX_REST_CHARS if term.prefix else 0
            reach = max(reach, 2 * len(term.text) + len(words) * MAX_SEPARATOR_CHARS + 2 + rest)
    pattern = "|".join(parts) or "(?!)"
    # A search call tries each alternative at each place: its cost is bounded by about
    # the places it may try times the pattern's length (a class of characters, however
    # long, is one look: a prefix's rest counts as a few characters).
    weight = len(pattern)
    if any(term.prefix for term in terms):
        weight -= pattern.count(_word_goes_on()) * (len(_word_goes_on()) - 8)
    cheap = (_CHUNK + reach) * weight <= _CHUNK_WORK
    return Highlighter(
        re.compile(pattern, re.IGNORECASE),
        re.compile("|".join(starts) or "(?!)", re.IGNORECASE),
        reach,
        _CHUNK if cheap else 0,
        max(1, 4096 // len(pattern)),
    )


_CHUNK = 4096
_CHUNK_WORK = 1 << 22  # a few ms at most


def _kana_spellings() -> dict[str, str]:
    """Each kana that a half-width letter and sound mark stand for (``ﾃﾞ``: ``デ``), as
    the text may spell it: itself, the two half-width characters, or what the loose
    reading leaves of them (``テ`` and U+3099, ``text.without_ignored_marks``)."""
    found: dict[str, str] = {}
    for code in range(0xFF66, 0xFF9E):  # the half-width katakana letters
        for mark in "\uff9e\uff9f":  # the voiced and semi-voiced sound marks
            pair = chr(code) + mark
            kana = unicodedata.normalize("NFKC", pair)
            if len(kana) == 1:
                spellings = dict.fromkeys((kana, pair, without_ignored_marks(pair)[0]))
                found[kana] = "(?:" + "|".join(map(re.escape, spellings)) + ")"
    return found


@functools.cache
def folded_spellings() -> dict[str, str]:
    """Letters ``searchable`` folds, as a highlight finds them: ``Straße`` for ``strasse``,
    ``أحمد`` for ``احمد`` (``ss`` apart: ``_DOUBLE_S``), ``ﾃﾞｰﾀ`` for ``データ``. (The
    spellings of a letter never start alike: none is tried twice.) Built at the first
    highlight past ASCII, or once serving (``indexer.daemon``): the loose reading's
    table it needs was 30 ms of every start."""
    return {
        **{folded: f"[{re.escape(spellings)}]" for folded, spellings in folded_from().items()},
        **_kana_spellings(),
    }


_DOUBLE_S = "(?>ss|ß)"  # ignoring case, ``ß`` is also ``ẞ``
# Two letters a text may write as one ligature (``searchable`` reads each as its two
# letters): ``ss`` and ``ß``, and Armenian's everyday ``և`` (``Երևան``, ``բարև``) and its
# ``ﬓ ﬔ ﬕ ﬖ ﬗ``, Malayalam's chillus, Bengali's khanda ta and Yiddish's ``װ ױ ײ``. The
# query ``Երևան`` found ``Երևան`` and highlighted nothing.
_PAIRS = {
    "ss": _DOUBLE_S,
    **{unicodedata.normalize("NFKC", lig): f"(?>{unicodedata.normalize('NFKC', lig)}|{lig})"
       for lig in "\u0587\ufb13\ufb14\ufb15\ufb16\ufb17"},
    **{pair: f"(?>{pair}|{one})" for one, pair in DEAD_CONSONANTS.items()},  # (ൻ, ৎ)
    **{pair: f"(?>{pair}|{lig})" for lig, pair in YIDDISH_LIGATURES.items()},
}  # fmt: skip
_PAIR_SPLIT = re.compile("(" + "|".join(_PAIRS) + ")", re.IGNORECASE)
# A pair's unit -> its first character's regex (where a hit may start), and a
# prefix's last letter -> the ligatures that letter may begin (``stras*``: Straße).
_PAIR_STARTS = {
    unit: f"[{pair[0]}{unit[-2]}]" if pair != "ss" else "(?:s|ß)" for pair, unit in _PAIRS.items()
}
_LIGATURES_AFTER = {"s": "ß", "ե": "և", "մ": "ﬓﬔﬕﬗ", "վ": "ﬖ", "ו": "װױ", "י": "ײ"}
# Not preceded by a letter or digit, checked after the first character (on the two
# characters up to there): a lookbehind first would be tried at every position of the
# text, a character first lets the engine skip to its places.
_AFTER_BOUNDARY = r"(?<![^\W_][\s\S])"
# A keycap (``1️⃣``: a digit, an optional U+FE0F, U+20E3) is a symbol to search, so a
# break: its digit is no part of the word before it. (A snippet's text has its keycaps
# blanked, ``snippet_view.blank_keycaps``; a phrase's separator taking one tripled the compile of
# the largest hostile queries.)
_KEYCAP = "[0-9]\ufe0f?\u20e3"
_NO_WORD_AFTER = rf"(?!(?!{_KEYCAP})[^\W_]|\ufe0f?\u20e3)"  # (nor a keycap's own digit)
# Letters that, case ignored, also match a character that is no letter (so may be in
# the separator before them): Greek iota and the combining ypogegrammeni.
_MATCH_A_MARK = frozenset("\u0399\u03b9\u1fbe")
MAX_SEPARATOR_CHARS = 64
_SEPARATOR = rf"[\W_]{{1,{MAX_SEPARATOR_CHARS}}}"
# How far a prefix's hit goes on past the prefix, at most (``datab*``: **database**): a
# try reads no further (``Highlighter.reach``); a longer word is marked that far.
PREFIX_REST_CHARS = 64


@functools.cache
def _word_goes_on() -> str:
    """A character the word of a prefix goes on with, as search reads it: a letter, a
    digit or a combining mark (a token character, ``schema``), not a CJK (or Thai...)
    run's (``cjk_expand`` cuts a word there) nor a keycap's digit (a break). Made once,
    when a prefix is first highlighted (the marks' table, a few tens of ms)."""
    marks: list[list[int]] = []
    for code in range(0x300, 0x20000):  # (no mark lies elsewhere but selectors, dropped)
        if unicodedata.category(chr(code))[0] == "M":
            if marks and marks[-1][1] == code - 1:
                marks[-1][1] = code
            else:
                marks.append([code, code])
    spelled = "".join(
        re.escape(chr(low)) + (f"-{re.escape(chr(high))}" if high > low else "")
        for low, high in marks
    )
    run = CJK_RUN.pattern[:-1]  # (its class, without the ``+``)
    return rf"(?:(?!{_KEYCAP}|{run})(?:[^\W_]|[{spelled}]))"


def _term_regex(words: list[str], prefix: bool = False) -> tuple[str, str]:
    """The regex of a term of ``words`` (``foo_bar``: two words, one hit), and the regex
    of its first character where a hit may start. ``prefix``: the last word may go on
    (the hit takes in the rest of it); a prefix's last word never ends a CJK run
    (``query_parse``)."""
    units = [_spelled(w) for w in words]  # each word, as letters that match it
    first = units[0][0]
    start = _PAIR_STARTS.get(first, first)
    if not CJK_RUN.match(words[0][0]):
        start += _AFTER_BOUNDARY
        if first in _PAIR_STARTS:  # one letter or two: the boundary is checked before
            units[0][0] = r"(?<![^\W_])" + first
        else:
            units[0][0] = first + _AFTER_BOUNDARY
    right = "" if CJK_RUN.match(words[-1][-1]) else _NO_WORD_AFTER
    if prefix:
        right = f"{_word_goes_on()}{{0,{PREFIX_REST_CHARS}}}+"
        ligatures = _LIGATURES_AFTER.get(words[-1][-1].lower())
        if ligatures and units[-1][-1] not in _PAIR_STARTS:  # (``stras*``: Straße)
            units[-1][-1] = f"(?:{units[-1][-1]}|[{ligatures}])"
    regex = "".join(units[0])
    for index in range(1, len(words)):
        word = "".join(units[index])
        if words[index][0].isalnum() and words[index][0] not in _MATCH_A_MARK:
            regex += _SEPARATOR + "+" + word  # the word starts where the separator ends
        else:
            # A word that may start inside the separator (a combining mark): the longest
            # separator after which it fits, never tried shorter once the word was found.
            follows = right if index == len(words) - 1 else r"[\W_]"
            regex += f"(?>{_SEPARATOR}(?={word}{follows})){word}"
    return regex + right, start


def _spelled(word: str) -> list[str]:
    """``word`` (as ``searchable`` left it) as regexes, one a letter (``ss``: one for
    both), that match its spellings in a text."""
    units: list[str] = []
    spellings = folded_spellings()
    for piece in _PAIR_SPLIT.split(word):
        if piece.lower() in _PAIRS:
            units.append(_PAIRS[piece.lower()])
        else:
            units += [spellings.get(c.lower(), re.escape(c)) for c in piece]
    return units


def snippet_source(data: bytes) -> tuple[str, bool]:
    """The start of a body loaded by ``SNIPPET_SOURCE_SQL`` as text for ``make_snippet``,
    and whether the body goes on past it."""
    cut = len(data) > SNIPPET_SOURCE_BYTES
    text = data[:SNIPPET_SOURCE_BYTES].decode("utf-8", "ignore")  # (a character cut at the end)
    return text[:SNIPPET_SOURCE_CHARS], cut or len(text) > SNIPPET_SOURCE_CHARS


_WIDEN = 32  # characters a highlight is widened by, at most, to hold whole characters


def make_snippet(
    body: str,
    terms: tuple[Term, ...],
    width: int = 200,
    mark: str = "**",
    *,
    seconds: float = SNIPPET_CPU_SECONDS,
    cut: bool = False,
) -> str:
    """A one-line excerpt around the first hit, every hit inside wrapped in ``mark``.

    Only the first ``SNIPPET_SOURCE_CHARS`` characters of ``body`` are read, and of
    those first as few as hold the first hit and the excerpt (``_READS``). Hits are
    looked for in the first ``HIT_SCAN_CHARS`` characters. When those hold no hit as
    they are, the hits search found through accents or points (``cafe`` in "Café") are
    looked for in the first ``LOOSE_SCAN_CHARS`` characters read as search reads them
    (``text.without_ignored_marks``). The looking stops after ``seconds`` of CPU (a
    hostile query over a hostile note): the hits not found by then are not marked.
    ``cut``: ``body`` is the start of a longer text (the snippet ends with "…")."""
    if seconds <= 0 and len(body) > 4 * width:  # (the page's budget is spent: even the
        body, cut = body[: 4 * width], True  # NFC of 512 Ki characters cost 0.1 s a note)
    found = highlighter(terms)
    budget = _Budget(seconds)
    begin = 0  # no hit starts before (in what was read so far, so in what is read next)
    for size in _READS:
        source = _source(body, size)
        if source is None:
            continue
        text, more = source
        view, first, hits = _first_hits(text, found, begin, width, budget)
        # Read on unless the excerpt and every try of a hit in it lie well inside.
        last = view.place(len(view.text) - found.reach)  # (no try from before reads on)
        if size >= len(body) or (first is not None and view.place(first[0]) + width < last):
            break
        begin = max(0, min(first[0] if first else len(view.text), len(view.text) - found.reach))
    if not text:
        return ""
    if first is not None:
        if view.spaces or view.where:  # (most texts are their own view)
            first, hits = view.span(first), map(view.span, hits)
    elif not (text.isascii() and all(t.text.isascii() for t in terms)):
        scanned = text[:LOOSE_SCAN_CHARS]
        loose_hits = _loose_hits(blank_keycaps(scanned), highlighter(terms, loose=True), budget)
        first = next(loose_hits, None)
        if first is not None:
            more = more or len(text) > LOOSE_SCAN_CHARS
            text, hits = scanned, loose_hits
    start = 0
    if first is not None and first[0] > width // 3:
        start = first[0] - width // 3
        space = text.rfind(" ", start - 20, start)
        if space != -1:
            start = space + 1
        else:  # (a letter under hundreds of marks: from the hit's place, not the letter's)
            back = character_start(text, start)
            start = back if first[0] - back < width else character_end(text, start, first[0])
    end = min(len(text), start + width)
    if end < len(text):
        space = text.find(" ", end, end + 20)
        end = space if space != -1 else max(start, character_start(text, end))
    window: list[str] = []
    done = start

    def own(piece: str) -> str:
        """The note's text without the mark (its own ``**bold**``): a snippet's marks
        are the hits alone (``**Create **note**** now`` showed "Create " marked)."""
        return piece.replace(mark, "") if mark else piece

    for hit_start, hit_end in itertools.chain([first] if first else [], hits):
        if hit_start >= end:
            break
        # (a mark never left outside its letter: ``**الطالب**ُ``; a few at most: a hit
        # before a million marks)
        hit_start = character_start(text, hit_start, max(start, hit_start - _WIDEN))
        hit_end = character_end(text, hit_end, min(end, hit_end + _WIDEN))
        if hit_start <= done < hit_end <= end and window and window[-1] == mark:
            # (one with the hit it overlaps or touches: ``**数据****库**`` read as text)
            window[-1:] = [own(text[done:hit_end]), mark]
            done = hit_end
        elif hit_start >= done and hit_end <= end:
            window += [own(text[done:hit_start]), mark, own(text[hit_start:hit_end]), mark]
            done = hit_end
    window.append(own(text[done:end]))
    more = more or end < len(text) or cut
    snippet = ("…" if start > 0 else "") + "".join(window) + ("…" if more else "")
    return snippet


def _first_hits(
    text: str, found: Highlighter, begin: int, width: int, budget: _Budget
) -> tuple[View, tuple[int, int] | None, Iterator[tuple[int, int]]]:
    """The view of ``text`` (a snippet's source) that hits are looked for in, its first
    hit from ``begin`` on, and the others. Most texts read as they are (are their own
    view) up to past the excerpt around their first hit, the part a snippet shows: the
    view of one that does not is made (a scan of all of it). (The view of a prefix is a
    prefix of the view of the whole text.)"""
    view = View(blank_keycaps(text))
    margin = width + found.reach + 24  # past a hit: its excerpt (to a space), tries there
    checked = begin + 2 * margin  # (most first hits are there: one look at the text)
    if not differs(view.text[:checked]):
        hits = _hits(view.text, found, begin, HIT_SCAN_CHARS, budget)
        first = next(hits, None)
        end = len(view.text) if first is None else first[0] + margin
        if end <= checked or not differs(view.text[checked - 1 : end]):
            return view, first, hits
    view = view_of(view.text, budget.spent)
    hits = _hits(view.text, found, begin, HIT_SCAN_CHARS, budget)
    return view, next(hits, None), hits


def _source(body: str, size: int) -> tuple[str, bool] | None:
    """The first ``size`` characters of ``body`` (ending before white space, so that no
    word is cut: a prefix of what more characters would give), without the Markdown
    marks that say nothing (``snippet_markup``), one space for each run of white space
    (a no-break space kept: ``snippet_spaces``),
    NFC as the terms are (``searchable``); and whether text follows.
    None when ``size`` characters hold no such end (the last size cuts anyway)."""
    more = False
    piece = body
    if len(body) > size:
        more = _NOT_SPACE.search(body, size) is not None
        end = size
        while end > size - 64 and not body[end].isspace():
            end -= 1
        if body[end].isspace():
            piece = body[:end]
        elif size < SNIPPET_SOURCE_CHARS:
            return None
        else:
            piece = body[:size]
    text = one_space_a_run(without_markup(piece, body))
    if not unicodedata.is_normalized("NFC", text):
        text = unicodedata.normalize("NFC", stream_safe(text))
    return text, more


class _Budget:
    """The CPU time a snippet may take (its thread's, from when it began). The thread's
    CPU clock costs a system call (0.5 us: a page of snippets read it a thousand times,
    half a millisecond a search); the wall clock costs 50 ns, and a thread's CPU time
    is never more than the time that passed: it is read only once that passed."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.began = time.perf_counter()
        self.cpu_began = time.thread_time()

    def spent(self) -> bool:
        """Whether the snippet's CPU time is spent."""
        if time.perf_counter() - self.began < self.seconds:
            return False
        return time.thread_time() - self.cpu_began >= self.seconds


def _hits(
    text: str, found: Highlighter, begin: int, end: int, budget: _Budget
) -> Iterator[tuple[int, int]]:
    """The spans of ``found.pattern``'s hits in ``text[begin:end]``, as ``finditer``
    finds them, until the budget is spent (the clock is read between calls of bounded
    cost; a regex call cannot be stopped, and holds the GIL).

    A cheap pattern is searched for ``found.chunk`` places at a time: a hit found there
    is the one a search of all the text finds, since no try reads past ``found.reach``
    characters. A costly one (long phrases, many terms) is tried only where
    ``found.starts`` says a hit may start, one call a start."""
    if budget.seconds <= 0:  # (the page's budget is spent: nothing is looked for)
        return
    if found.chunk:
        yield from _searched(text, found, begin, end, budget)
        return
    done = begin
    for count, candidate in enumerate(found.starts.finditer(text, begin, end), 1):
        at = candidate.start()
        if at < done:
            continue
        if count % found.check_every == 0 and budget.spent():
            return
        hit = found.pattern.match(text, at, end)
        if hit is not None:
            done = hit.end()
            yield hit.span()


def _searched(
    text: str, found: Highlighter, at: int, end: int, budget: _Budget
) -> Iterator[tuple[int, int]]:
    """``_hits`` of a cheap pattern, ``found.chunk`` places a call."""
    end = min(end, len(text))  # (no search past the text: a short note took 64 calls)
    while at < end:
        stop = min(end, at + found.chunk + found.reach)
        hit = found.pattern.search(text, at, stop)
        spent = budget.spent()
        if hit is not None and (stop == end or hit.start() + found.reach < stop):
            yield hit.span()
            at = hit.end()
        elif stop == end:
            return
        else:  # no hit starts before: the tries there read nothing past ``stop``
            at = stop - found.reach
        if spent:
            return


def _loose_hits(text: str, found: Highlighter, budget: _Budget) -> Iterator[tuple[int, int]]:
    """The spans in ``text`` of ``found``'s hits in it as search reads it; a hit's span
    takes in the points that follow its last letter."""
    if budget.seconds <= 0:
        return
    view = View.of(*without_ignored_marks(text))
    for span in _hits(view.text, found, 0, len(view.text), budget):
        yield view.span(span)
