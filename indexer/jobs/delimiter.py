"""Note text quoted inside the recall block, with the block's delimiter defused.

The block is framed by ``<vault-memory-recall>`` and ``</vault-memory-recall>``; a note
may hold a line a model would read as that closing tag (and then take what follows for
instructions), spelled in any way a reader still takes in: invisible characters,
look-alike letters and separators (``look_alikes``: Unicode's confusables), elongation
marks, tag characters (read as ASCII by models), entities and escapes.
Such a line has every "<" it holds turned into "["; the rest of it, and every line that
does not name the block, stays as written, unless the line so defused still reads as
holding a "<" once decoded (``&#38lt;``, ``%26lt;``, ``&NotLess;``): then its every "&",
"%" and "\\" becomes "[" too. Control characters become spaces.
"""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from urllib.parse import unquote

from indexer.jobs.look_alikes import look_alikes
from shared.control_chars import BIDI_CONTROLS, CONTROLS
from shared.invisible import SHOW_NOTHING

__all__ = ["clean_line"]

# The name as a reader takes it in, on the line's skeleton: ASCII drawn like one of its
# letters (``vauIt``, ``rn`` for ``m``), any separators between its words
_L = r"[l1|i]"
# (signs only: entities and escapes are read before the name is looked for; an entity
# alternative here read "&_;" every way, and "&vault;" swallowed the next name's letters),
# and what reads as "l" or "|" (the skeleton reads "∣" as "l"): the next word never starts
# with one of them, so a run of separators ends in one place only (linear)
_SEP = r"[\W_l1|i]*"
_NAMED = re.compile(rf"vau{_L}t{_SEP}(?:m|rn)em[o0]ry{_SEP}reca{_L}{_L}", re.I)
# An ampersand however often escaped itself (``&amp;amp;``, ``&#38;``): read with the
# reference after it, in one pass (decoding "&#38;" first made a new reference of the
# text after it: "&#38;#000…60;", and html.unescape's int() of its digits raised)
_AMPERSAND = r"&(?:amp;|#0*38;|#x0*26;)*"
_ESCAPED_OPENERS = (  # entities and escapes (references, bytes: _defused)
    rf"{_AMPERSAND}(?:LeftAngleBracket|lsaquo|laquo|lang|lt);?"
    r"|%u0*3c|\\U0*3c|\\0?74|\\N\{LESS-THAN SIGN\}"
    r"|\\0*3c\b|=3c"
)
# A backslash escape of a character: \u2039, \u{2039}, \x3c (braces: 6 digits at most)
_BACKSLASHED = re.compile(r"\\[ux]\{0*([0-9a-f]{1,6})\}|\\u([0-9a-f]{4})|\\x([0-9a-f]{2})", re.I)
_NUMERIC_REF = re.compile(rf"{_AMPERSAND}#(?:x([0-9a-f]+)|([0-9]+));?", re.I)
# A reference, numeric or named (a name as html.unescape reads one), after its ampersands
_REFERENCE = re.compile(
    rf"{_AMPERSAND}(?:#(?:x([0-9a-f]+)|([0-9]+));?|([^\t\n\f <&#;]{{1,32}};?))", re.I
)
_UNKNOWN_ENTITY = re.compile(r"&\w{1,32};")  # (the known ones are read by html.unescape)
# How often a line is decoded (``_decodings``): "&#37;3C" is "%3C" once, "<" twice
_DECODING_ROUNDS = 4
# Percent-encoded bytes, once or more (%25 encodes the %): UTF-8 of a character read as "<"
_PERCENT_BYTE = re.compile(r"%(?:25)*([0-9a-f]{2})", re.I)
_PERCENT_RUN = r"(?:%(?:25)*[0-9a-f]{2})+"
# Controls (C0 and C1), and the bidi overrides and isolates
# (``\u202e<llacer-yromem-tluav/>`` is shown as the closing tag): spaces.
_CONTROL = re.compile(f"[{CONTROLS}\\u2028\\u2029{BIDI_CONTROLS}]")
# Tag characters mirror ASCII (U+E0020-E007E): invisible to people, read as the ASCII
# they mirror by models ("ASCII smuggling"), so read so here
_TAG_FIRST, _TAG_LAST = 0xE0020, 0xE007E
_TAGS_AS_ASCII = {code: chr(code - 0xE0000) for code in range(_TAG_FIRST, _TAG_LAST + 1)}
# What a line that still reads as holding a "<" once decoded has turned into "[" as well:
# the signs that start an escape or reference, and the tag characters mirroring them
_DECODING_SIGNS = "&%\\"
_DECODABLE = str.maketrans(
    dict.fromkeys([*_DECODING_SIGNS, *(chr(0xE0000 + ord(sign)) for sign in _DECODING_SIGNS)], "[")
)


@functools.lru_cache(maxsize=32)  # a recall renders a line several times while fitting
def clean_line(text: str) -> str:
    """The line with control characters as spaces, and every "<" of a line naming the
    block (as a reader would take it in) defused."""
    if not text.isprintable():
        text = _CONTROL.sub(" ", text)
    if _names_block(text):
        text = _openers().sub(_defused, text)
        if _still_reads_opener(text):
            text = text.translate(_DECODABLE)
    return text.rstrip()


def _names_block(text: str) -> bool:
    """Whether ``text``, read as a reader takes it in, names the block (a skeleton is made
    only of a line holding something read as a "v": NFKD and NFKC of a long line are
    slow, and hold the GIL). Letters written as references or escapes are read first
    (``&#118;ault``, ``%76ault``, ``\\u0076ault``), as often as a reader would
    (``_decodings``), tag characters as their ASCII."""
    text = _tags_read(text)
    if not _decodable(text):
        return _read_as_name(text)
    return any(map(_read_decoded_as_name, _decodings(text)))


def _read_decoded_as_name(text: str) -> bool:
    """Whether decoded ``text`` names the block, with its unknown entities read as they
    are, as separators (``vault&x;memory``) or as nothing (``vau&x;lt``)."""
    if _read_as_name(text):
        return True
    if "&" not in text or not _UNKNOWN_ENTITY.search(text):
        return False
    return any(_read_as_name(_UNKNOWN_ENTITY.sub(by, text)) for by in ("-", ""))


def _tags_read(text: str) -> str:
    """``text`` with its tag characters read as the ASCII they mirror."""
    if max(text, default="") >= chr(_TAG_FIRST):
        return text.translate(_TAGS_AS_ASCII)
    return text


def _decodable(text: str) -> bool:
    """Whether decoding may change ``text`` (most lines hold none of these signs)."""
    return "&" in text or "%" in text or "\\" in text


@functools.lru_cache(maxsize=4)  # (a line with nothing to defuse is decoded twice)
def _decodings(text: str) -> tuple[str, ...]:
    """``text`` decoded as a reader would, once, then again while that changes it (at most
    ``_DECODING_ROUNDS`` times): percent-encoded bytes, references, backslash escapes."""
    decoded: list[str] = []
    while _decodable(text) and len(decoded) < _DECODING_ROUNDS:
        read = _BACKSLASHED.sub(_escaped_char, _REFERENCE.sub(_read_reference, unquote(text)))
        if decoded and read == text:
            break
        decoded.append(text := read)
    return tuple(decoded)


def _still_reads_opener(text: str) -> bool:
    """Whether ``text`` (a defused line), decoded as a reader would, holds a "<" after all
    (``&#38lt;``, ``%26lt;``, ``&#37;3C``, ``&NotLess;``), or is decoded into something
    else still after the last round (deeper than any reader goes: taken as holding one)."""
    decoded = _decodings(_tags_read(text))
    if len(decoded) == _DECODING_ROUNDS and _decodable(decoded[-1]):
        return True
    return any(map(_spells_opener, decoded))


def _spells_opener(text: str) -> bool:
    """Whether ``text`` holds a spelling of "<" (what ``_defused`` turns into "[")."""
    return any(_defused(match) == "[" for match in _openers().finditer(text))


def _read_as_name(text: str) -> bool:
    if text.isascii():
        return _NAMED.search(text) is not None
    if _may_name().search(text) is None:
        return False
    return _NAMED.search(_skeleton(text)) is not None


def _read_reference(match: re.Match[str]) -> str:
    """What a reference stands for: a numeric one read here (``_numbered``), a named one
    by ``html.unescape`` (given the name alone: it never sees a number)."""
    hexadecimal, decimal, name = match.groups()
    if name is not None:
        return html.unescape(f"&{name}")
    return _numbered(hexadecimal, decimal)


def _referenced(match: re.Match[str]) -> str:
    """The character a numeric reference names (``_numbered``)."""
    return _numbered(*match.groups())


def _numbered(hexadecimal: str | None, decimal: str | None) -> str:
    """The character a reference's number names, or a space for one that names none (read
    here, not by ``html.unescape``: its ``int()`` of thousands of digits raised)."""
    digits = (hexadecimal or decimal or "").lstrip("0") or "0"
    if len(digits) > 7:
        return " "
    code = int(digits, 16 if hexadecimal else 10)
    return chr(code) if code < 0x110000 else " "


def _escaped_char(match: re.Match[str]) -> str:
    """The character a backslash escape (``\\u2039``, ``\\x3c``) stands for."""
    code = int(next(digits for digits in match.groups() if digits), 16)  # (6 at most)
    return chr(code) if code < 0x110000 else match.group(0)


def _defused(match: re.Match[str]) -> str:
    """ "[" for a spelling of "<"; a character reference or backslash escape decoded
    first (``&#8249;``, ``\\u2039``)."""
    ref, escape, encoded = match.group("ref"), match.group("esc"), match.group("pct")
    if encoded is not None:
        return _defused_percent(encoded)
    if escape is not None:
        found = _BACKSLASHED.fullmatch(escape)
        return "[" if found and _escaped_char(found) in _opener_chars() else escape
    if ref is None:
        return "["
    found = _NUMERIC_REF.fullmatch(ref)
    return "[" if found and _referenced(found) in _opener_chars() else ref


def _defused_percent(run: str) -> str:
    """A run of percent-encoded bytes with each character read as "<" (``%3C``,
    ``%EF%BC%9C``) as "["; the other bytes stay as written."""
    found = list(_PERCENT_BYTE.finditer(run))
    spelled = [match.group(0) for match in found]
    data = bytes(int(match.group(1), 16) for match in found)
    out, at = [], 0
    for char in data.decode("utf-8", "surrogateescape"):
        size = len(char.encode("utf-8", "surrogateescape"))
        out.append("[" if char in _opener_chars() else "".join(spelled[at : at + size]))
        at += size
    return "".join(out)


def _skeleton(text: str) -> str:
    """``text`` as a reader takes it in, near enough: look-alikes are read before NFKD
    (it takes some elsewhere: ϲ -> ς), accents go with the marks, then NFKC."""
    if text.isascii():
        return text
    table = _skeleton_table()
    bare = unicodedata.normalize("NFKD", text.translate(table)).translate(table)
    return unicodedata.normalize("NFKC", bare).translate(table)


@functools.cache
def _openers() -> re.Pattern[str]:
    """Every spelling of "<" a line may hold: the entities and escapes (first: ``&#38;``
    is a reference too, ``&#38;lt;`` an entity), a character reference (told by
    ``_defused``), and each character that reads as one (``_opener_chars``)."""
    signs = re.escape("".join(sorted(_opener_chars())))
    ref, escape = rf"(?P<ref>{_NUMERIC_REF.pattern})", rf"(?P<esc>{_BACKSLASHED.pattern})"
    encoded = rf"(?P<pct>{_PERCENT_RUN})"
    return re.compile(rf"{_ESCAPED_OPENERS}|{ref}|{escape}|{encoded}|[{signs}]", re.I)


@functools.cache
def _opener_chars() -> frozenset[str]:
    """ "<" and each character read as one: "<" in its skeleton (＜, ﹤, ≮, ぐ, ‹, ᐸ), or an
    opening bracket or quote outside ASCII (❨, 「, «)."""
    brackets = (
        char
        for char in map(chr, range(0x80, 0x30000))
        if unicodedata.category(char) in ("Ps", "Pi")
    )
    return frozenset({"<", *_drawn_as("<"), *brackets})


@functools.cache
def _may_name() -> re.Pattern[str]:
    """A character a reader may take for the name's first letter."""
    return re.compile(f"[vV{re.escape(''.join(sorted(_drawn_as('v'))))}]")


@functools.cache
def _drawn_as(sign: str) -> frozenset[str]:
    """The characters outside ASCII whose skeleton holds ``sign`` ("v" or "<", in any
    case): those with a decomposition or a look-alike, and the tag character mirroring
    it (0.1 s, once)."""
    table = _skeleton_table()
    return frozenset(
        char
        for char in map(chr, (*range(0x80, 0x30000), *range(_TAG_FIRST, _TAG_LAST + 1)))
        if (unicodedata.decomposition(char) or ord(char) in table)
        and sign in _skeleton(char).lower()
    )


@functools.cache
def _skeleton_table() -> dict[int, str | None]:
    """Marks, format characters, fillers, modifier letters that are no letter of their own
    (no decomposition: the tatweel and other elongation marks, tone letters) and code
    points shown as nothing though unassigned (U+2065, U+FFF0-FFF8, U+E0000-E0FFF) ->
    nothing; tag characters -> the ASCII they mirror, look-alikes -> Latin or the sign
    they are drawn like (built at the first line that is not ASCII: 50 ms)."""
    table: dict[int, str | None] = {ord(c): None for c in SHOW_NOTHING}
    for code in (*range(0x30000), *range(0xE0000, 0xE1000)):
        char = chr(code)
        kind = unicodedata.category(char)
        if (
            kind in ("Mn", "Me", "Cf")
            or (kind == "Lm" and not unicodedata.decomposition(char))
            or (kind == "Cn" and (code == 0x2065 or 0xFFF0 <= code <= 0xFFF8 or code >= 0xE0000))
        ):
            table[code] = None
    table.update(_TAGS_AS_ASCII)
    for char, latin in look_alikes().items():
        table[ord(char)] = latin
    return table
