"""User queries -> safe FTS5 expressions.

User input never reaches FTS5 syntax: every word and phrase is re-quoted here (CJK and
other spaceless runs expanded as ``text.cjk_expand`` indexes them), but for an ``OR`` in
capitals between words and a ``*`` ending a word (a prefix: ``datab*`` is ``"datab" *``);
a query with nothing searchable is refused with ``InvalidArgumentError``.

A prefix walks every word of the index that starts with it: on 10,000 notes
(``bench/gen_vault.py``) ``a*`` took 250 ms, ``an*`` 80 ms, ``the*`` 35 ms, the word
``the`` 26 ms; 64 of the commonest prefixes OR-ed took 950 ms of one character, 750 ms of
two, 410 ms of three (64 of the commonest words: 165 ms; through ``search``, snippets
and all, 690 ms against 480 ms). So a prefix's last word has ``MIN_PREFIX_CHARS``
characters at least (a vowel sign is one: it tells words apart).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, replace

from indexer.index import sara_am
from indexer.index.arabic_article import with_article
from indexer.index.digit_groups import number_spellings, space_grouped_joined
from indexer.index.hebrew_prefixes import with_prefixes
from indexer.index.persian_forms import with_affixes
from indexer.index.text import CJK_RUN, RUN_MARKS, SPACELESS_RUN, WORD, run_units, searchable
from shared.errors import InvalidArgumentError
from shared.utf8 import check_text

__all__ = [
    "LEFT_OUT",
    "MAX_QUERY_BYTES",
    "MAX_TERMS",
    "MIN_PREFIX_CHARS",
    "ParsedQuery",
    "Term",
    "any_keywords",
    "parse_any",
    "parse_query",
]

MAX_QUERY_BYTES = 10 * 1024
MAX_TERMS = 64
MIN_PREFIX_CHARS = 3  # characters of the word before a ``*`` (see the module)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# The marks FTS5's tokenizer drops from a word (remove_diacritics): a prefix is counted
# without them (``l̈̈*`` was the prefix ``l``, which the lang column's token starts, and
# three of them alone the empty prefix: every note).
_DROPPED_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
# a quoted phrase (``-`` before it, at a word's start: left out), or a run of anything else
_QUERY_PART = re.compile(r'(?:(?<!\S)(-))?"([^"]*)"?|([^\s"]+)')
_SYMBOL = re.compile(r"[^\w\s\-\"*]")  # (what the query holds beside words)
# A phrase in typographic quotes, as phones, word processors and other languages write
# one (“java script”, „so“, «ainsi»): read as ASCII quotes when they come in a pair.
_TYPOGRAPHIC = re.compile(
    '[\u201c\u201e\u201f\u00ab]([^\u201c\u201d\u201e\u201f\u00ab\u00bb"]*)[\u201d\u201c\u00bb]'
)
LEFT_OUT = re.compile(r"-(?=[^\W\d_])")  # ``-word``: not ``--flag``, ``-5`` or ``-``
# What joins a clitic or an ending to its word (``it's``, ``don’t``, Hebrew ``ארה״ב``): a
# prefix whose last part after one is short is that word, its ``*`` ignored (a contraction
# or a possessive is whole; ``s*`` would walk every word starting with ``s``).
_APOSTROPHES = frozenset("'\u2019\u05f3\u05f4")


@dataclass(frozen=True)
class Term:
    """One thing the user asked for: a word or a quoted phrase (already cleaned);
    ``prefix``: its last word may go on (``datab*``, ``text`` without the ``*``)."""

    text: str
    phrase: bool
    prefix: bool = False
    left_out: bool = False  # ``-word`` or ``NOT word``: the notes holding it are not found


@dataclass(frozen=True)
class ParsedQuery:
    """The FTS5 MATCH expression of a query, and the terms to highlight; ``walks``: a
    prefix in it may walk many words of the index (``datab*``, one CJK character);
    ``one_walk``: its notes are found in one walk of the index's lists of notes, none
    checked against another (``_one_walk``)."""

    match: str
    terms: tuple[Term, ...]
    walks: bool = False
    one_walk: bool = False


def parse_query(query: object) -> ParsedQuery:
    """Words (all must match) and "phrases" -> a safe FTS5 expression; an ``OR`` in
    capitals between two of them makes alternatives (``cat food OR dog food``: both
    words of either pair), a word ending in ``*`` is a prefix (``datab*`` finds
    ``database``), and ``-`` or ``NOT`` in capitals before a word or phrase leaves out
    the notes holding it (``python -java``, ``python NOT "java script"``), as agents
    write queries. Any other syntax is text (a ``*`` inside quotes or not at a word's
    end too; ``--flag`` and ``-5`` are words).

    Unbalanced quotes close at the end of the query; words with nothing searchable
    (punctuation only) are dropped; nothing left means ``InvalidArgumentError``, and so
    does a query (or an alternative) that only leaves out; an ``OR`` with no word on one
    side is the word "or", a ``NOT`` with none after it the word "not". A prefix of
    fewer than ``MIN_PREFIX_CHARS`` characters is refused (``InvalidArgumentError``), but
    for one whose last part after an apostrophe is short (``it's*``: the word); one
    ending in a CJK or Thai run is the word (a run is found inside longer runs already),
    and so is a number (``5* hotel``: a rating).
    """
    if not isinstance(query, str):
        raise InvalidArgumentError("the query must be a string")
    if len(query.encode("utf-8", "surrogatepass")) > MAX_QUERY_BYTES:
        raise InvalidArgumentError(f"the query is longer than {MAX_QUERY_BYTES} bytes")
    check_text("the query", query)
    cleaned = searchable(_CONTROL.sub(" ", query.replace("\ufeff", " ")))
    cleaned = _TYPOGRAPHIC.sub(r'"\1"', cleaned)
    cleaned = space_grouped_joined(cleaned)  # (``85 000``: one number, not two words)
    parts: list[Term | None] = []  # None: an OR between words
    for minus, quoted, bare in _QUERY_PART.findall(cleaned):
        if bare in ("OR", "NOT"):
            parts.append(None if bare == "OR" else Term(bare, phrase=False))
            continue
        phrase = bool(quoted.strip()) and bare == ""
        left_out = bool(minus) or LEFT_OUT.match(bare) is not None
        if phrase and _has_word(quoted):
            parts.append(Term(" ".join(quoted.split()), phrase=True, left_out=left_out))
        elif not phrase and _has_word(bare):
            parts.append(replace(_word(bare[1:] if left_out else bare), left_out=left_out))
    groups = _distinct(_alternatives(_nots(parts)))
    terms = list(dict.fromkeys(t for group in groups for t in group if not t.left_out))
    if not any(groups):
        raise InvalidArgumentError(_nothing_searchable(query))
    if any(all(t.left_out for t in group) for group in groups):
        raise InvalidArgumentError(
            "the query only leaves words out: give a word or phrase to find beside them"
        )
    if sum(map(len, groups)) > MAX_TERMS:
        raise InvalidArgumentError(f"the query has more than {MAX_TERMS} words and phrases")
    matches = [_group_match(group) for group in groups]
    walks = _walks([t for group in groups for t in group])
    match = matches[0] if len(matches) == 1 else " OR ".join(f"({m})" for m in matches)
    return ParsedQuery(match, _with_spellings(terms), walks, _one_walk(groups))


def _walks(terms: list[Term]) -> bool:
    """Whether a prefix among ``terms`` may walk many words of the index: a word's start
    (``datab*``) or a lone CJK or Thai character, not a bigram that may go on with marks."""
    return any(t.prefix or _query_text(t.text)[1] == _WIDE for t in terms)


def _one_walk(groups: list[list[Term]]) -> bool:
    """Whether each alternative is one word (or a word's start), nothing left out: the
    notes are then found in one walk of each word's list. Others (``a b``, ``"a b"``,
    ``a -b``, a CJK run of two bigrams) check one list against another, costly to walk
    a second time to count them (``reads.search``)."""
    return all(
        len(group) == 1 and not group[0].left_out and _one_token(group[0]) for group in groups
    )


def _one_token(term: Term) -> bool:
    """Whether ``term`` is one token of the index in each of its spellings (those with
    what a script joins to a word are too)."""
    spellings = (term.text, *sara_am.other_spellings(term.text))
    return all(WORD.fullmatch(_query_text(text)[0]) is not None for text in spellings)


def _has_word(text: str) -> bool:
    """Whether ``text`` holds something to search: a letter, digit or mark, but not the
    marks of a Thai-like run alone (``่``: they belong to a letter before them)."""
    return WORD.search(text) is not None and WORD.search(_query_text(text)[0]) is not None


def _nothing_searchable(query: str) -> str:
    """Why a query found no word to search, and what finds what it holds: emoji,
    symbols and punctuation are word breaks to the index, but ``grep`` reads them."""
    message = "the query has no searchable words (give words or a quoted phrase)"
    if _SYMBOL.search(query):
        shown = " ".join(query.split())[:40]
        message += (
            f"; emoji, symbols and punctuation are not searched as words: grep {shown!r} finds them"
        )
    return message


def _nots(parts: list[Term | None]) -> list[Term | None]:
    """The ``NOT`` in capitals before a word or phrase taken as its ``-``; one with none
    after it (at the end, before an ``OR``) is the word "not"."""
    out: list[Term | None] = []
    leave_out = False
    for i, part in enumerate(parts):
        if part is not None and part == Term("NOT", phrase=False):
            if i + 1 < len(parts) and parts[i + 1] is not None:
                leave_out = True
                continue
        elif part is not None and leave_out:
            part = replace(part, left_out=True)
        leave_out = False
        out.append(part)
    return out


def _group_match(group: list[Term]) -> str:
    """One alternative's FTS5 expression: its words all required, those left out not."""
    found = " AND ".join(_fts_term(t) for t in group if not t.left_out)
    left_out = [_fts_term(t) for t in group if t.left_out]
    if not left_out:
        return found
    return f"({found}) NOT ({' OR '.join(left_out)})"


def _word(bare: str) -> Term:
    """A word as written (``datab*``: a prefix, see ``parse_query``; ``**bold**``, as
    Markdown's emphasis is pasted, the word)."""
    stem = bare.rstrip("*")
    if stem == bare or bare.startswith("*") or not WORD.search(stem[-1:]):
        return Term(bare, phrase=False)
    if CJK_RUN.search(stem[-1:]):
        return Term(stem, phrase=False)  # (``東京*``: ``東京`` finds ``東京都`` already)
    parts = list(WORD.finditer(stem))
    last = parts[-1].group(0)
    last = last[_last_run_end(last) :]  # (``東京data*``: the prefix is ``data``)
    if last.isdecimal():
        return Term(bare, phrase=False)  # (``5*`` is a rating: the number, as before)
    if _kept_length(last) < MIN_PREFIX_CHARS:
        if len(parts) > 1 and stem[parts[-2].end() : parts[-1].start()] in _APOSTROPHES:
            return Term(stem, phrase=False)  # (``it's*``: the word ``it's``)
        part = f" (its last part, {last!r})" if len(parts) > 1 or last != parts[0][0] else ""
        raise InvalidArgumentError(
            f"the prefix {bare!r} is too short{part}: give at least {MIN_PREFIX_CHARS}"
            " characters before the * (datab*), or the whole word"
        )
    return Term(stem, phrase=False, prefix=True)


def _kept_length(word: str) -> int:
    """The characters of ``word`` FTS5 keeps (``_DROPPED_MARKS`` left out, each letter's
    own too: ``é`` is ``e`` there)."""
    return len(_DROPPED_MARKS.sub("", unicodedata.normalize("NFD", word)))


def _last_run_end(word: str) -> int:
    """Where the last CJK (or Thai...) run in ``word`` ends, 0 when it has none."""
    runs = list(CJK_RUN.finditer(word))
    return runs[-1].end() if runs else 0


def _alternatives(parts: list[Term | None]) -> list[list[Term]]:
    """The query's words grouped by its ORs (each group's words all required, a word
    once a group); an OR at either end, or beside another, is the word "or"."""
    groups: list[list[Term]] = [[]]
    for i, part in enumerate(parts):
        if part is None:
            before, after = (
                parts[i - 1] if i else None,
                parts[i + 1] if i + 1 < len(parts) else None,
            )
            if before is not None and after is not None:  # (``a OR OR b``: two words "or")
                groups.append([])
                continue
            part = Term("OR", phrase=False)
        if part not in groups[-1]:
            groups[-1].append(part)
    return groups


def _distinct(groups: list[list[Term]]) -> list[list[Term]]:
    """Each alternative once (``the OR the OR ...``: FTS5 walked every copy, 32 of them
    0.9 s at 10,000 notes where one took 37 ms)."""
    seen: set[frozenset[Term]] = set()
    out = []
    for group in groups:
        if frozenset(group) not in seen:
            seen.add(frozenset(group))
            out.append(group)
    return out


def any_keywords(keywords: object) -> ParsedQuery | None:
    """``parse_any`` of ``keywords``, None when none is searchable (recall asks with the
    words it found: none is no error); ``InvalidArgumentError`` for what is no list of
    strings or holds a lone surrogate (it was a ``TypeError`` or ``UnicodeEncodeError``)."""
    if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
        raise InvalidArgumentError("keywords must be a list of strings")
    for keyword in keywords:
        check_text("a keyword", keyword)
    try:
        return parse_any(keywords)
    except InvalidArgumentError:
        return None


def parse_any(keywords: list[str]) -> ParsedQuery:
    """Keywords (words, "phrases" in quotes, or a word's start before a ``*``) -> an
    FTS5 expression matching notes that hold ANY of them (recall ranks them by BM25);
    ``InvalidArgumentError`` when none is searchable."""
    terms: list[Term] = []
    for keyword in (_CONTROL.sub(" ", k).strip() for k in keywords):  # (``\x00`` broke FTS5)
        phrase = len(keyword) > 2 and keyword.startswith('"') and keyword.endswith('"')
        start = keyword[:-1] if not phrase and keyword.endswith("*") else None
        prefix = (  # (a word's start alone: ``**bold**`` stays the word)
            start is not None and _kept_length(start) >= MIN_PREFIX_CHARS and start[-1:].isalnum()
            and not any(char in start for char in ' *"')
        )  # fmt: skip
        text = start if prefix and start is not None else keyword
        text = " ".join((text[1:-1] if phrase else text).replace('"', " ").split())
        text = searchable(text)
        term = Term(text, phrase, prefix)
        if text and _has_word(text) and term not in terms:
            terms.append(term)
    if not terms:
        raise InvalidArgumentError("no searchable keywords")
    terms = terms[:MAX_TERMS]
    match = " OR ".join(_fts_term(t) for t in terms)
    one_walk = _one_walk([[t] for t in terms])
    return ParsedQuery(match, _with_spellings(terms), _walks(terms), one_walk)


def _fts_term(term: Term) -> str:
    """One term as an FTS5 string, found in each of its spellings of Thai's or Lao's
    SARA AM too (``sara_am``)."""
    forms = [_fts_form(term, text) for text in (term.text, *sara_am.other_spellings(term.text))]
    return forms[0] if len(forms) == 1 else "(" + " OR ".join(forms) + ")"


def _fts_form(term: Term, written: str) -> str:
    """``term`` spelled ``written`` as an FTS5 string, CJK runs as in the index (see
    ``_query_text``); a prefix's last word may go on (``"datab" *``: FTS5 reads the ``*``
    after a phrase so); an Arabic-script word is also found with the article
    (``arabic_article``) and the Persian plural and verb prefixes (``persian_forms``), a
    Hebrew word with the one-letter words joined to it (``hebrew_prefixes``)."""
    text, prefix = _query_text(written)
    quoted = '"' + text.replace('"', '""') + '"'
    if prefix is not None or term.prefix:
        return quoted + " *"
    spellings = () if term.phrase else joined_spellings(written)
    if not spellings:
        return quoted
    return "(" + " OR ".join([quoted, *(f'"{spelling}"' for spelling in spellings)]) + ")"


def joined_spellings(word: str) -> tuple[str, ...]:
    """The other spellings of ``word`` with what its script joins to it: Arabic's
    article, Persian's plural and verb prefixes, Hebrew's one-letter words; a number's
    groupings (``digit_groups``: ``85000`` and ``$85000`` are ``85,000``)."""
    return (
        (*with_article(word), *with_affixes(word)) or with_prefixes(word) or number_spellings(word)
    )


def _with_spellings(terms: list[Term]) -> tuple[Term, ...]:
    """``terms``, and their other spellings after them: a snippet marks the word the note
    holds (``البيانات`` for ``بيانات``, ``הנתונים`` for ``נתונים``, ``น้ํา`` for ``น้ำ``)."""
    spelled = [
        replace(term, text=text) for term in terms for text in sara_am.other_spellings(term.text)
    ]
    joined = [
        Term(spelling, phrase=False)
        for term in [*terms, *spelled]
        if not term.phrase and not term.prefix
        for spelling in joined_spellings(term.text)
    ]
    return tuple(dict.fromkeys([*terms, *spelled, *joined]))


# What a query's last token is when it is a prefix (``_query_text``).
_WIDE = "a character"  # a lone CJK or Thai character: any bigram it starts
_MARKS = "a bigram"  # a Thai-like bigram: the same with marks on its last letter


@functools.lru_cache(maxsize=1024)  # (asked of each term three times: word, match, walk)
def _query_text(text: str) -> tuple[str, str | None]:
    """Expand CJK runs the way ``cjk_expand`` does, minus what the text may not have.

    In the index a run ends with its last character as a token; a query run that is
    followed by nothing (``東京``) must not require it, since the text may go on
    (``東京都``); one followed by another token (``東京 tower``) must. A lone CJK
    character at the end becomes a prefix (it may start a longer run's bigram: ``_WIDE``),
    and so does the last bigram of a Thai-like run there (its last letter may carry
    marks in the text, ``กินข`` of ``กินข้าว``: ``_MARKS``); the marks a run starts on
    belong to a letter before it, and are left out (``่า``: ``า``).
    """
    out: list[str] = []
    last = 0
    prefix: str | None = None
    for run in CJK_RUN.finditer(text):
        out.append(text[last : run.start()])
        chars = run_units(run.group(0))  # (a character as seen is one: ``text.run_units``)
        if chars[0][0] in RUN_MARKS:
            chars = chars[1:]
            if not chars:  # (marks alone: no character to find)
                out.append(" ")
                last = run.end()
                continue
        followed = WORD.search(text, run.end()) is not None
        tokens = [chars[i] + chars[i + 1] for i in range(len(chars) - 1)]
        if len(chars) == 1 or followed:
            tokens.append(chars[-1])
        prefix = None
        if not followed:
            marked = SPACELESS_RUN.match(chars[-1]) is not None
            prefix = _WIDE if len(chars) == 1 else _MARKS if marked else None
        out.append(" " + " ".join(tokens) + " ")
        last = run.end()
    out.append(text[last:])
    return " ".join("".join(out).split()), prefix
