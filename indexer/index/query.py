"""User queries -> safe FTS5 expressions, and the snippets that show their hits.

User input never reaches FTS5 syntax: every word and phrase is re-quoted here (CJK and
other spaceless runs expanded as ``text.cjk_expand`` indexes them), and a query with
nothing searchable is refused with ``InvalidArgumentError``.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass

from indexer.index.text import CJK_RUN, WORD, searchable, without_ignored_marks
from shared.errors import InvalidArgumentError
from shared.graphemes import character_start

MAX_QUERY_BYTES = 10 * 1024
MAX_TERMS = 64
# How far into a note a snippet looks for a hit through accents (a few ms at most), and
# for a hit at all (64 terms over a 4 MiB note took 21 s: about 1 s over this many).
LOOSE_SCAN_CHARS = 16_384
HIT_SCAN_CHARS = 262_144
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_QUERY_PART = re.compile(r'"([^"]*)"?|([^\s"]+)')


@dataclass(frozen=True)
class Term:
    """One thing the user asked for: a word or a quoted phrase (already cleaned)."""

    text: str
    phrase: bool


@dataclass(frozen=True)
class ParsedQuery:
    """The FTS5 MATCH expression of a query, and the terms to highlight."""

    match: str
    terms: tuple[Term, ...]


def parse_query(query: object) -> ParsedQuery:
    """Words (all must match) and "phrases" -> a safe FTS5 expression.

    Unbalanced quotes close at the end of the query; words with nothing searchable
    (punctuation only) are dropped; nothing left means ``InvalidArgumentError``.
    """
    if not isinstance(query, str):
        raise InvalidArgumentError("the query must be a string")
    if len(query.encode("utf-8", "surrogatepass")) > MAX_QUERY_BYTES:
        raise InvalidArgumentError(f"the query is longer than {MAX_QUERY_BYTES} bytes")
    cleaned = searchable(_CONTROL.sub(" ", query.replace("\ufeff", " ")))
    terms: list[Term] = []
    seen: set[tuple[str, bool]] = set()
    for quoted, bare in _QUERY_PART.findall(cleaned):
        phrase = bool(quoted.strip()) and bare == ""
        text = " ".join((quoted if phrase else bare).split())
        if not text or not WORD.search(text) or (text, phrase) in seen:
            continue
        seen.add((text, phrase))
        terms.append(Term(text, phrase))
    if not terms:
        raise InvalidArgumentError(
            "the query has no searchable words (give words or a quoted phrase)"
        )
    if len(terms) > MAX_TERMS:
        raise InvalidArgumentError(f"the query has more than {MAX_TERMS} words and phrases")
    return ParsedQuery(" AND ".join(_fts_term(t) for t in terms), tuple(terms))


def parse_any(keywords: list[str]) -> ParsedQuery:
    """Keywords (words, or "phrases" in quotes) -> an FTS5 expression matching notes that
    hold ANY of them (recall ranks them by BM25); ``InvalidArgumentError`` when none is
    searchable."""
    terms: list[Term] = []
    for keyword in keywords:
        phrase = len(keyword) > 2 and keyword.startswith('"') and keyword.endswith('"')
        text = " ".join((keyword[1:-1] if phrase else keyword).replace('"', " ").split())
        text = searchable(text)
        if text and WORD.search(text) and Term(text, phrase) not in terms:
            terms.append(Term(text, phrase))
    if not terms:
        raise InvalidArgumentError("no searchable keywords")
    terms = terms[:MAX_TERMS]
    return ParsedQuery(" OR ".join(_fts_term(t) for t in terms), tuple(terms))


def _fts_term(term: Term) -> str:
    """One term as an FTS5 string, CJK runs as in the index (see ``_query_text``)."""
    text, prefix = _query_text(term.text)
    quoted = '"' + text.replace('"', '""') + '"'
    return quoted + " *" if prefix else quoted


def _query_text(text: str) -> tuple[str, bool]:
    """Expand CJK runs the way ``cjk_expand`` does, minus what the text may not have.

    In the index a run ends with its last character as a token; a query run that is
    followed by nothing (``東京``) must not require it, since the text may go on
    (``東京都``); one followed by another token (``東京 tower``) must. A lone CJK
    character at the end becomes a prefix (it may start a longer run's bigram).
    """
    out: list[str] = []
    last = 0
    prefix = False
    for run in CJK_RUN.finditer(text):
        out.append(text[last : run.start()])
        chars = run.group(0)
        followed = WORD.search(text, run.end()) is not None
        tokens = [chars[i : i + 2] for i in range(len(chars) - 1)]
        if len(chars) == 1 or followed:
            tokens.append(chars[-1])
        prefix = len(chars) == 1 and not followed
        out.append(" " + " ".join(tokens) + " ")
        last = run.end()
    out.append(text[last:])
    return " ".join("".join(out).split()), prefix


def _loose(term: Term) -> Term:
    """``term`` as it is looked for in a text without the marks search ignores."""
    text = without_ignored_marks(term.text)[0]
    return Term(text or term.text, term.phrase)


@functools.lru_cache(maxsize=64)
def highlight_patterns(terms: tuple[Term, ...], loose: bool = False) -> re.Pattern[str]:
    """One regex finding any term in the original text (for snippets); cached, since
    every snippet of a page of results needs the same one. ``loose``: the terms without
    the marks search ignores, for a text without them (``text.without_ignored_marks``)."""
    if loose:
        terms = tuple(_loose(term) for term in terms)
    parts = []
    for term in sorted(terms, key=lambda t: -len(t.text)):
        words = WORD.findall(term.text)  # what search matched: not the punctuation around
        if not words:
            continue
        units = [_spelled(w) for w in words]  # each word, as letters that match it
        if not CJK_RUN.match(words[0][0]):
            first = units[0][0]
            if first == _DOUBLE_S:  # one letter or two: the boundary is checked before
                units[0][0] = r"(?<![^\W_])" + first
            else:
                # Not preceded by a letter or digit, checked after the first character (on
                # the two characters up to there): a lookbehind first would be tried at
                # every position of the text, a character first lets the engine skip to
                # its places.
                units[0][0] = first + r"(?<![^\W_][\s\S])"
        joined = r"[\W_]+".join("".join(u) for u in units)  # foo_bar: two words, one hit
        right = "" if CJK_RUN.match(words[-1][-1]) else r"(?![^\W_])"
        parts.append(joined + right)
    return re.compile("|".join(parts) or "(?!)", re.IGNORECASE)


# Letters ``searchable`` folds, as a highlight finds them: ``Straße`` for ``strasse``.
_FOLDED_SPELLINGS = {"i": "[iıİ]", "l": "[lł]", "o": "[oø]", "d": "[dđ]", "h": "[hħ]"}
_DOUBLE_S = "(?:ss|ß|ẞ)"


def _spelled(word: str) -> list[str]:
    """``word`` (as ``searchable`` left it) as regexes, one a letter (``ss``: one for
    both), that match its spellings in a text."""
    units: list[str] = []
    for piece in re.split("(ss)", word, flags=re.IGNORECASE):
        if piece.lower() == "ss":
            units.append(_DOUBLE_S)
        else:
            units += [_FOLDED_SPELLINGS.get(c.lower(), re.escape(c)) for c in piece]
    return units


def make_snippet(body: str, terms: tuple[Term, ...], width: int = 200, mark: str = "**") -> str:
    """A one-line excerpt around the first hit, every hit inside wrapped in ``mark``.

    Hits are looked for in the first ``HIT_SCAN_CHARS`` characters. When those hold no
    hit as they are, the hits search found through accents or points (``cafe`` in
    "Café") are looked for in the first ``LOOSE_SCAN_CHARS`` characters read as search
    reads them (``text.without_ignored_marks``)."""
    text = " ".join(body.split())
    if not text:
        return ""
    if not unicodedata.is_normalized("NFC", text):  # as the terms are (``searchable``)
        text = unicodedata.normalize("NFC", text)
    pattern = highlight_patterns(terms)  # one alternative a term: each tried at each place
    hits: Iterator[tuple[int, int]] = (m.span() for m in pattern.finditer(text, 0, HIT_SCAN_CHARS))
    first = next(hits, None)
    more = False
    if first is None and not (text.isascii() and all(t.text.isascii() for t in terms)):
        scanned = text[:LOOSE_SCAN_CHARS]
        loose_hits = _loose_hits(scanned, highlight_patterns(terms, loose=True))
        first = next(loose_hits, None)
        if first is not None:
            more = len(text) > LOOSE_SCAN_CHARS
            text, hits = scanned, loose_hits
    start = 0
    if first is not None and first[0] > width // 3:
        start = first[0] - width // 3
        space = text.rfind(" ", start - 20, start)
        start = space + 1 if space != -1 else character_start(text, start)
    end = min(len(text), start + width)
    if end < len(text):
        space = text.find(" ", end, end + 20)
        end = space if space != -1 else max(start, character_start(text, end))
    window, done = [], start
    for hit_start, hit_end in itertools.chain([first] if first else [], hits):
        if hit_start >= end:
            break
        if hit_start >= done and hit_end <= end:
            window += [text[done:hit_start], mark, text[hit_start:hit_end], mark]
            done = hit_end
    window.append(text[done:end])
    more = more or end < len(text)
    snippet = ("…" if start > 0 else "") + "".join(window) + ("…" if more else "")
    return snippet


def _loose_hits(text: str, pattern: re.Pattern[str]) -> Iterator[tuple[int, int]]:
    """The spans in ``text`` of ``pattern``'s hits in it as search reads it; a hit's span
    takes in the points that follow its last letter."""
    bare, removed = without_ignored_marks(text)
    where = [start - before for start, before in _removed_before(removed)]
    total = list(itertools.accumulate((end - start for start, end in removed), initial=0))

    def place(index: int) -> int:
        return index + total[bisect.bisect_right(where, index)]

    for match in pattern.finditer(bare):
        yield place(match.start()), place(match.end())


def _removed_before(removed: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    """Each removed span's start, with how many characters were removed before it."""
    before = 0
    for start, end in removed:
        yield start, before
        before += end - start
