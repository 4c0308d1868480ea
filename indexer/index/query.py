"""User queries -> safe FTS5 expressions, and the snippets that show their hits.

User input never reaches FTS5 syntax: every word and phrase is re-quoted here (CJK and
other spaceless runs expanded as ``text.cjk_expand`` indexes them), and a query with
nothing searchable is refused with ``InvalidArgumentError``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

from indexer.index.text import CJK_RUN, WORD, searchable
from shared.errors import InvalidArgumentError

MAX_QUERY_BYTES = 10 * 1024
MAX_TERMS = 64
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


@functools.lru_cache(maxsize=64)
def highlight_patterns(terms: tuple[Term, ...]) -> re.Pattern[str]:
    """One regex finding any term in the original text (for snippets); cached, since
    every snippet of a page of results needs the same one."""
    parts = []
    for term in sorted(terms, key=lambda t: -len(t.text)):
        joined = r"\W+".join(re.escape(w) for w in term.text.split())
        if not CJK_RUN.match(term.text[0]):
            # Not preceded by a letter or digit, checked after the first character (on
            # the two characters up to there): a lookbehind first would be tried at every
            # position of the text, a character first lets the engine skip to its places.
            first = re.escape(term.text[0])
            joined = first + r"(?<![^\W_][\s\S])" + joined[len(first) :]
        right = "" if CJK_RUN.match(term.text[-1]) else r"(?![^\W_])"
        parts.append(joined + right)
    return re.compile("|".join(parts), re.IGNORECASE)


def make_snippet(body: str, terms: tuple[Term, ...], width: int = 200, mark: str = "**") -> str:
    """A one-line excerpt around the first hit, every hit inside wrapped in ``mark``."""
    text = " ".join(body.split())
    if not text:
        return ""
    if not unicodedata.is_normalized("NFC", text):  # as the terms are (``searchable``)
        text = unicodedata.normalize("NFC", text)
    pattern = highlight_patterns(terms)
    first = pattern.search(text)
    start = 0
    if first is not None and first.start() > width // 3:
        start = first.start() - width // 3
        space = text.rfind(" ", start - 20, start)
        start = space + 1 if space != -1 else start
    end = min(len(text), start + width)
    if end < len(text):
        space = text.find(" ", end, end + 20)
        end = space if space != -1 else end
    window = text[start:end]
    window = pattern.sub(lambda m: f"{mark}{m.group(0)}{mark}", window)
    return ("…" if start > 0 else "") + window + ("…" if end < len(text) else "")
