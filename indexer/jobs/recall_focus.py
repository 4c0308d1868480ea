"""Where a search hit is quoted from: the first paragraph holding a keyword, and in a
line too long for the room, a window that starts a few words before the keyword.

A keyword that is part of another (a bigram of a Chinese word, a window of a long Thai
chunk) counts only where the paragraphs looked at together hold none of the whole ones:
``ทุเรียนหมอนทอง`` was quoted from a paragraph about school (``เรียน``, one of its
windows) before the one about durian. Of the pieces, the paragraph holding the most of
them (in the first run of paragraphs holding any) is quoted, and so is the paragraph
holding the most of a question's chunks when it has two or more (``ราคา ทองคำ``).

A keyword is looked for as search found it (``as_read``: ``cafe`` in "Café",
``projectx`` in "ＰＲＯＪＥＣＴＸ"), in the note's first ``FOCUS_READ_CHARS`` as read (a
hit past them: from the note's top).
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable, Iterator

from indexer.index.nfkc import nfkc
from indexer.index.text import CJK_RUN, as_read, run_units, stream_safe
from indexer.jobs.tokens import HEADING, quarters, take_lines
from indexer.vault.no_wait import may_take_long
from shared.graphemes import character_start, cut_chars
from shared.models import MAX_RECALL_BUDGET

MAX_QUOTED_CHARS = 4 * MAX_RECALL_BUDGET  # a character costs a quarter token at least
# A quoted line costs two quarters at least (">\n"): this many lines never fit, not even
# one fewer (the title line left out), so no line past them is ever shown
MAX_QUOTED_LINES = MAX_QUOTED_CHARS // 2 + 2
# How much of a note, read as a reader would, a hit is looked for in to quote it from (a
# hit past it: from the note's top): reading a note of U+FDFA (18 characters in NFKC)
# whole took seconds a recall. Read a run of paragraphs of this many characters at a time.
FOCUS_READ_CHARS = 1 << 20
_FOCUS_RUN_CHARS = 1 << 16
# A window shows this much (quarters) before the keyword: the words that lead to it
WINDOW_LEAD = 60
# The first characters of a line a keyword is looked for in to open a window there: as
# written (case folded) in the first ``FOCUS_READ_CHARS``, as read (a prefix at a time)
# in the first ``_WINDOW_SEARCH``; past them, the line is quoted from its start
_WINDOW_SEARCH = 1 << 14
_SENTENCE_START = re.compile(r"(?:[.!?]\s+|[。！？]\s*)")
_LAST_SPACE = re.compile(r".*\s", re.DOTALL)
_LINK = re.compile(r"!?\[[^\]\n]*\]\([^)\n]*\)")  # a Markdown link (or image)


def from_focus(
    paragraphs: Iterable[list[str]], keywords: tuple[str, ...], lines: int = MAX_QUOTED_LINES
) -> list[list[str]]:
    """The paragraphs from the first one holding a keyword on ("…" before its first line
    marks the skip: a line of its own was all a small share could show), up to ``lines``
    lines; a keyword is looked for as search found it (``cafe`` in "Café", ``projectx``
    in "ＰＲＯＪＥＣＴＸ"). ``paragraphs`` are taken only as far as the focus and the lines
    after it (a 4 MiB note of short paragraphs was split whole to quote its first line)."""
    stream = iter(paragraphs)
    top: list[list[str]] = []  # what is read of the note's first lines
    words = [read_keyword(k) for k in keywords]
    found = _focus(_kept(stream, top, lines), [word for word in words if "\n" not in word])
    if found is None:
        return take_lines(itertools.chain(top, stream), lines)
    number, (paragraph, *rest) = found
    if number and not HEADING.match(paragraph[0]):  # (a heading says it starts there)
        paragraph = [f"… {paragraph[0]}", *paragraph[1:]]
    return take_lines(itertools.chain([paragraph], rest, stream), lines)


@functools.lru_cache(maxsize=1024)
def read_keyword(keyword: str) -> str:
    """A keyword (a phrase's quotes dropped) as a reader takes it in: the same few, for
    each source of every recall (``as_read`` was a third of a recall's time)."""
    return as_read(keyword.strip('"'))


def _kept(paragraphs: Iterator[list[str]], top: list[list[str]], lines: int) -> Iterator[list[str]]:
    """``paragraphs``, the first of them kept in ``top`` up to ``lines`` lines."""
    kept = 0
    for paragraph in paragraphs:
        if kept < lines:
            top.append(paragraph)
            kept += len(paragraph)
        yield paragraph


def _focus(paragraphs: Iterator[list[str]], words: list[str]) -> tuple[int, list[list[str]]] | None:
    """The number of the first paragraph (each read as quoted: cut) holding one of
    ``words`` in the note's first ``FOCUS_READ_CHARS``, and the paragraphs taken from
    ``paragraphs`` from it on (the rest follow there). The paragraphs are read as a
    reader would a run at a time, one a line, and each word looked for once a run (read
    one by one, for each hit at each render, 25,000 paragraphs of four journals took 6 s
    a recall)."""
    if not words:
        return None
    first = read = 0
    for run, texts, after in _runs(paragraphs):
        may_take_long()  # (on the event loop: past its time there, recall moves to a thread)
        found, read = _holding(texts, words, read)
        if found is not None:
            return first + found, run[found:] + after
        if read >= FOCUS_READ_CHARS:
            return None
        first += len(run)
    return None


def _runs(
    paragraphs: Iterator[list[str]],
) -> Iterator[tuple[list[list[str]], list[str], list[list[str]]]]:
    """``paragraphs`` in runs of up to ``_FOCUS_RUN_CHARS`` characters, each with its
    paragraphs' texts as quoted (cut), and the paragraph taken after it if one was (the
    one too long to join it). A full run is given before the next paragraph is split."""
    run: list[list[str]] = []
    texts: list[str] = []
    size = 0
    for paragraph in paragraphs:
        text = cut_chars(" ".join(paragraph), MAX_QUOTED_CHARS)
        if run and size + len(text) >= _FOCUS_RUN_CHARS:
            yield run, texts, [paragraph]
            run, texts, size = [], [], 0
        run.append(paragraph)
        texts.append(text)
        size += len(text) + 1
        if size >= _FOCUS_RUN_CHARS:  # (no paragraph could join it)
            yield run, texts, []
            run, texts, size = [], [], 0
    if run:
        yield run, texts, []


def _holding(texts: list[str], words: list[str], read: int) -> tuple[int | None, int]:
    """The number of the first of ``texts`` holding one of ``words`` as read (up to
    ``FOCUS_READ_CHARS`` read in all), and how much is read with them."""
    run = "\n".join(texts)
    if not run.isascii():  # NFKC may make a character 18 (U+FDFA): what is read counts
        run = nfkc(stream_safe(run))
    run = run[: FOCUS_READ_CHARS - read]
    read += max(len(run), sum(map(len, texts)))
    folded = as_read(run)
    if folded.count("\n") != run.count("\n"):  # (never: a line is read on its own)
        lines = map(as_read, run.split("\n"))
        found = (n for n, text in enumerate(lines) if any(w in text for w in words))
        return next(found, None), read
    looked = tiers(tuple(words))
    for number, tier in enumerate(looked):
        at = [at for at in (folded.find(word) for word in tier) if at >= 0]
        if at and (number or (len(at) > 1 and _chunks(tier) > 1)):  # (where the most are)
            return _most_held(folded.split("\n"), tier, looked[0]), read
        if at:
            return folded.count("\n", 0, min(at)), read
    return None, read


def _most_held(texts: list[str], pieces: tuple[str, ...], whole: tuple[str, ...]) -> int:
    """The number of the first of ``texts`` holding the most of ``pieces`` (by their
    length), then of the whole words' bigrams: ``ราคา`` (price), a window of
    ``ราคาทองคำวันนี้`` (today's gold price), quoted the oil price's paragraph before the
    one holding ``ราคาทอง`` and ``ทองคำ``."""
    units = [run_units(word) for word in whole if CJK_RUN.fullmatch(word)]
    pairs = {a + b for each in units for a, b in itertools.pairwise(each)}
    held = [
        (sum(len(piece) for piece in pieces if piece in text), sum(p in text for p in pairs))
        for text in texts
    ]
    return held.index(max(held))


def _chunks(words: tuple[str, ...]) -> int:
    """How many of ``words`` are chunks of a script written without spaces: a question
    of two (``ราคา ทองคำ``, price, gold) is quoted where the most of them are, not from
    the first paragraph holding either (the oil price's, before the gold price's); words
    written with spaces keep the first paragraph holding one."""
    return sum(CJK_RUN.fullmatch(word) is not None for word in words)


@functools.lru_cache(maxsize=256)
def tiers(words: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """``words`` as looked for: the pieces of longer ones in a script written without
    spaces (a Chinese word's bigrams, a Thai chunk's windows: what search ranks a partial
    match by) after the others, if any."""
    pieces = tuple(
        word
        for word in words
        if CJK_RUN.fullmatch(word) and any(word in other and word != other for other in words)
    )
    whole = tuple(word for word in words if word not in pieces)
    return (whole, pieces) if pieces else (whole,)


def keyword_window(line: str, words: list[str]) -> str | None:
    """``line`` from a few words before the first of ``words`` it holds (as read), "… "
    marking the skip; ``line`` itself when the keyword is near its start; None when the
    line holds none where it is looked for (``_WINDOW_SEARCH``)."""
    at = _keyword_at(line[:FOCUS_READ_CHARS], words)
    if at is None:
        return None
    start = at
    while start > 0 and quarters(line[start:at]) < WINDOW_LEAD:
        start -= 1
    if start == 0:
        return line
    lead = line[start:at]
    sentences = list(_SENTENCE_START.finditer(lead))
    if sentences:  # a sentence's start, else a word's, else a character's
        start += sentences[-1].end()
    elif (space := re.search(r"\s+", lead)) is not None and space.end() < len(lead):
        start += space.end()
    else:  # (a URL's or a path's: from its start, or from the keyword's own word)
        space = _LAST_SPACE.match(line, 0, start)
        word = space.end() if space else 0
        if quarters(line[word:at]) <= 2 * WINDOW_LEAD:
            start = word
        else:
            least, start = start, at
            while start > least and line[start - 1].isalnum():
                start -= 1
            start = character_start(line, start)
    if "](" in line[:at]:  # never inside a Markdown link either
        for link in _LINK.finditer(line, max(0, start - _WINDOW_SEARCH), at):
            if link.start() < start < link.end():
                start = link.start()
    if start == 0:
        return line
    return f"… {line[start:]}"


@functools.lru_cache(maxsize=256)
def _ignoring_case(word: str) -> re.Pattern[str]:
    return re.compile(re.escape(word), re.IGNORECASE)


def _keyword_at(line: str, words: list[str]) -> int | None:
    """Where the first of ``words`` starts in ``line`` (of the whole ones, else of the
    pieces: ``tiers``), near enough (``_word_at``)."""
    for tier in tiers(tuple(words)):
        at = _word_at(line, tier)
        if at is not None:
            return at
    return None


def _word_at(line: str, words: tuple[str, ...]) -> int | None:
    """Where the first of ``words`` starts in ``line``, near enough: as written, case
    folded (or ignored letter by letter when folding changes the line's length), else
    found as read, a prefix at a time (in its first ``_WINDOW_SEARCH`` characters: each
    prefix is read anew)."""
    folded = line.casefold()
    if len(folded) == len(line):
        found = [at for at in (folded.find(word) for word in words) if at >= 0]
    else:  # (a ß or an İ anywhere: case ignored letter by letter, places kept)
        hits = (_ignoring_case(word).search(line) for word in words)
        found = [hit.start() for hit in hits if hit is not None]
    if found:
        return min(found)
    line = line[:_WINDOW_SEARCH]
    if not any(word in as_read(line) for word in words):
        return None
    low, high = 0, len(line)
    while low < high:  # the shortest prefix holding a keyword as read
        mid = (low + high) // 2
        if any(word in as_read(line[:mid]) for word in words):
            high = mid
        else:
            low = mid + 1
    return max(0, low - max(map(len, words)))
