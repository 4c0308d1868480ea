"""Turning text and user queries into FTS5 input: CJK bigrams, safe quoting, snippets.

Why bigrams: FTS5's ``unicode61`` tokenizer keeps a run of Chinese or Japanese as one
huge token, and a ``trigram`` table cannot find 2-character words. So before indexing
(and before querying) every CJK run becomes its overlapping bigrams plus its last
character (``東京都`` -> ``東京 京都 都``): a CJK word of n >= 2 characters is then the
phrase of its n-1 bigrams, which matches exactly where the word occurs as a substring;
a single character is the prefix query ``都*``. The measurements behind this choice
are in ``bench/index_search.py`` (``--cjk-designs``).

Thai, Lao, Khmer and Myanmar are also written without spaces between words, so their
runs are cut into bigrams the same way (by code point, so that a substring starting or
ending on a vowel sign or tone mark is found too; no segmenter, nothing to download).
Their combining marks (categories Mn/Mc) are separators to unicode61, which would cut
``น้ำ`` into ``น`` and ``ำ`` and lose the tone: the index declares every character of
these runs a token character (``TOKEN_CHARS``, see ``index_schema``).

User input never reaches FTS5 syntax: every word and phrase is re-quoted here, and a
query with nothing searchable is refused with ``InvalidArgumentError``.

Grep acceleration reads a regex with CPython's own parser, ``re._parser``: private, but
it is Python's grammar and rejects what it cannot read, where a parser of our own would
be a second regex grammar to keep right. So it is kept behind a guard: imported in a
``try``, and checked at import on one pattern using every construct ``_sequence`` reads
(``PARSER_OK``). If a Python release drops or reshapes it, grep planning returns None
(every file is read: slower, never wrong) and tests/test_fts_query.py fails saying so.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from shared.errors import InvalidArgumentError

try:  # private CPython modules, see the module docstring
    import re._constants as sre_c
    import re._parser as sre_parse
except ImportError:  # PARSER_OK is then False
    sre_c = sre_parse = None  # type: ignore[assignment]

MAX_QUERY_BYTES = 10 * 1024
MAX_TERMS = 64

# Letters and numbers of the CJK scripts (punctuation and symbols excluded, since
# unicode61 treats those as separators): kana, han, hangul, iteration marks.
_CJK_CHARS = (
    "\u1100-\u11ff\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u303c"
    "\u3041-\u3096\u309d-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3131-\u318e\u31f0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
# Letters, digits and combining marks of Thai, Lao, Myanmar and Khmer (punctuation and
# symbols excluded): scripts without spaces between words, cut into bigrams like CJK.
_SPACELESS_RANGES = (
    (0x0E01, 0x0E3A), (0x0E40, 0x0E4E), (0x0E50, 0x0E59),  # Thai
    (0x0E81, 0x0EBE), (0x0EC0, 0x0ECE), (0x0ED0, 0x0ED9), (0x0EDC, 0x0EDF),  # Lao
    (0x1000, 0x1049), (0x1050, 0x109D),  # Myanmar
    (0x1780, 0x17D3), (0x17D7, 0x17D7), (0x17DC, 0x17DD), (0x17E0, 0x17E9),  # Khmer
    (0x17F0, 0x17F9),
)  # fmt: skip
_SPACELESS_CHARS = "".join(f"\\u{lo:04x}-\\u{hi:04x}" for lo, hi in _SPACELESS_RANGES)
# For the word table's ``tokenchars``: unicode61 (Unicode 6.1 tables) treats the marks,
# and letters newer than 6.1, as separators; listing them all keeps each bigram whole.
TOKEN_CHARS = "".join(chr(c) for lo, hi in _SPACELESS_RANGES for c in range(lo, hi + 1))
CJK_RUN = re.compile(f"[{_CJK_CHARS}{_SPACELESS_CHARS}]+")
# What unicode61 keeps as token characters, near enough: letters and digits, and the
# marks of TOKEN_CHARS.
_WORD = re.compile(f"(?:[^\\W_]|[{_SPACELESS_CHARS}])+")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_QUERY_PART = re.compile(r'"([^"]*)"?|([^\s"]+)')
# Folding for the grep trigram table: str.casefold plus the Turkish dotted/dotless i,
# so that any case-insensitive match (RE2 or Python re) is a substring after folding.
_FOLD_FIXES = str.maketrans({"\u0130": "i", "\u0131": "i", "\u0307": None})


def cjk_expand(text: str) -> str:
    """``text`` with every CJK (or Thai, Lao, Khmer, Myanmar) run replaced by its bigrams
    and last character."""
    if not CJK_RUN.search(text):
        return text
    return CJK_RUN.sub(_expand_run, text)


def _expand_run(match: re.Match[str]) -> str:
    run = match.group(0)
    if len(run) == 1:
        return f" {run} "
    pairs = " ".join(run[i : i + 2] for i in range(len(run) - 1))
    return f" {pairs} {run[-1]} "


def fold(text: str) -> str:
    """Case-folded text for the trigram table (per-character, so substrings survive)."""
    return text.translate(_FOLD_FIXES).casefold()


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
    cleaned = _CONTROL.sub(" ", query.replace("\ufeff", " "))
    terms: list[Term] = []
    seen: set[tuple[str, bool]] = set()
    for quoted, bare in _QUERY_PART.findall(cleaned):
        phrase = bool(quoted.strip()) and bare == ""
        text = " ".join((quoted if phrase else bare).split())
        if not text or not _WORD.search(text) or (text, phrase) in seen:
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
        followed = _WORD.search(text, run.end()) is not None
        tokens = [chars[i : i + 2] for i in range(len(chars) - 1)]
        if len(chars) == 1 or followed:
            tokens.append(chars[-1])
        prefix = len(chars) == 1 and not followed
        out.append(" " + " ".join(tokens) + " ")
        last = run.end()
    out.append(text[last:])
    return " ".join("".join(out).split()), prefix


def highlight_patterns(terms: tuple[Term, ...]) -> re.Pattern[str]:
    """One regex finding any term in the original text (for snippets)."""
    parts = []
    for term in sorted(terms, key=lambda t: -len(t.text)):
        words = [re.escape(w) for w in term.text.split()]
        joined = r"\W+".join(words)
        left = "" if CJK_RUN.match(term.text[0]) else r"(?<![^\W_])"
        right = "" if CJK_RUN.match(term.text[-1]) else r"(?![^\W_])"
        parts.append(left + joined + right)
    return re.compile("|".join(parts), re.IGNORECASE)


def make_snippet(body: str, terms: tuple[Term, ...], width: int = 200, mark: str = "**") -> str:
    """A one-line excerpt around the first hit, every hit inside wrapped in ``mark``."""
    text = " ".join(body.split())
    if not text:
        return ""
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


# -- grep acceleration: literals every match must contain ---------------------------

# A required-literal tree: ("lit", text) | ("and", [nodes]) | ("or", [nodes]); None
# stands for "no requirement known" (every file may match).
Node = tuple[str, Any] | None
MAX_TRIGRAMS_PER_LITERAL = 12
MAX_NODES = 48
# Constructs where Python's parser and RE2 disagree or Python would warn: give up.
_RISKY = ("[:", "[.", "[=", "[[", "--", "&&", "~~", "||")


@dataclass(frozen=True)
class GrepQuery:
    """``match``: an FTS5 expression over the folded-text trigram table that every file
    holding a match satisfies; ``literal``: one string every such file contains (the
    trigram table cannot tell adjacency, so candidates are checked for it), or None."""

    match: str
    literal: str | None


def grep_trigram_match(pattern: str, fixed: bool) -> GrepQuery | None:
    """What the index can prove about files matching a grep pattern (a superset is fine,
    a miss is not), or None when no literal of 3+ characters is provably required.

    The regex is read with Python's ``re`` parser, conservatively: anything it might
    read differently from RE2 gives None, and so does any parse error, or a parser that
    fails the check of ``PARSER_OK``.
    """
    if fixed:
        node = _literal_node(pattern)
    else:
        if not PARSER_OK or ("[" in pattern and any(risky in pattern for risky in _RISKY)):
            return None
        try:
            node = _sequence(sre_parse.parse(pattern))
        except Exception:  # any doubt means "scan everything"
            return None
    match = _to_fts(node)
    if match is None or node is None:
        return None
    return GrepQuery(match, _longest_required(node))


def _longest_required(node: Node) -> str | None:
    if node is None or node[0] == "or":
        return None
    if node[0] == "lit":
        return str(node[1])
    literals = [str(child[1]) for child in node[1] if child is not None and child[0] == "lit"]
    return max(literals, key=len) if literals else None


def _literal_node(text: str) -> Node:
    """A literal must appear; lines never hold CR/LF, so those split it."""
    pieces = [p for p in re.split(r"[\r\n]", text) if len(fold(p)) >= 3]
    return _and([("lit", p) for p in pieces])


def _sequence(items: Any) -> Node:
    parts: list[Node] = []
    run: list[str] = []
    for op, av in items:
        if op is sre_c.LITERAL:
            run.append(chr(av))
            continue
        if run:
            parts.append(_literal_node("".join(run)))
            run = []
        if op is sre_c.SUBPATTERN:
            parts.append(_sequence(av[3]))
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
            if av[0] >= 1:
                parts.append(_sequence(av[2]))
        elif op is sre_c.BRANCH:
            parts.append(_or([_sequence(alt) for alt in av[1]]))
        elif op is sre_c.ATOMIC_GROUP:
            parts.append(_sequence(av))
    if run:
        parts.append(_literal_node("".join(run)))
    return _and(parts)


def _and(parts: list[Node]) -> Node:
    kept = [p for p in parts if p is not None]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else ("and", kept[:MAX_NODES])


def _or(parts: list[Node]) -> Node:
    if not parts or any(p is None for p in parts) or len(parts) > MAX_NODES:
        return None
    return parts[0] if len(parts) == 1 else ("or", parts)


def _to_fts(node: Node) -> str | None:
    if node is None:
        return None
    kind, value = node
    if kind == "lit":
        grams = _trigrams(fold(value))
        return " AND ".join(grams) if grams else None
    children = [_to_fts(child) for child in value]
    if kind == "or":
        if any(c is None for c in children):
            return None
        return "(" + " OR ".join(f"({c})" for c in children if c) + ")"
    kept = [f"({c})" for c in children if c]
    return " AND ".join(kept) if kept else None


def _trigrams(text: str) -> list[str]:
    """Up to MAX_TRIGRAMS_PER_LITERAL quoted trigrams spread over ``text``."""
    grams = [text[i : i + 3] for i in range(len(text) - 2)]
    grams = [g for g in dict.fromkeys(grams) if "\x00" not in g]
    if len(grams) > MAX_TRIGRAMS_PER_LITERAL:
        step = (len(grams) - 1) / (MAX_TRIGRAMS_PER_LITERAL - 1)
        grams = [grams[round(i * step)] for i in range(MAX_TRIGRAMS_PER_LITERAL)]
    return ['"' + g.replace('"', '""') + '"' for g in grams]


# One pattern with every construct ``_sequence`` reads (literal runs, a class, groups,
# alternation, lazy, greedy, possessive and counted repeats, an atomic group) and the
# literals it must give; [xy] and "." cut runs, "ab" and "r" are too short to count.
_PROBE = "ab[xy](cde)(?:fgh|ijk)+?(lmn)*(?>opq)r.(?:stu)++(?:vwx){2}"
_PROBE_NODE = (
    "and",
    [
        ("lit", "cde"),
        ("or", [("lit", "fgh"), ("lit", "ijk")]),
        ("lit", "opq"),
        ("lit", "stu"),
        ("lit", "vwx"),
    ],
)


def _parser_reads_as_expected() -> bool:
    """Whether ``re._parser`` exists and still has the shape ``_sequence`` reads."""
    try:
        return _sequence(sre_parse.parse(_PROBE)) == _PROBE_NODE
    except Exception:
        return False


PARSER_OK = _parser_reads_as_expected()
if not PARSER_OK:
    logging.getLogger("indexer").warning(
        "re._parser of this Python is missing or changed: grep reads every file"
    )
