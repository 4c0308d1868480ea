"""Text as the index sees it: scripts without spaces cut into bigrams, case folding.

Why bigrams: FTS5's ``unicode61`` tokenizer keeps a run of Chinese or Japanese as one
huge token, and a ``trigram`` table cannot find 2-character words. So before indexing
(and before querying, see ``query``) every CJK run becomes its overlapping bigrams plus
its last character (``東京都`` -> ``東京 京都 都``): a CJK word of n >= 2 characters is then
the phrase of its n-1 bigrams, which matches exactly where the word occurs as a
substring; a single character is the prefix query ``都*``. The measurements behind this
choice are in ``bench/index_search.py`` (``--cjk-designs``).

Thai, Lao, Khmer and Myanmar are also written without spaces between words, so their
runs are cut into bigrams the same way, of characters as seen: a letter with the vowel
signs and tone marks written on it is one (``ก่า`` is the one bigram ``ก่ า``; by code
point it was two, ``ก่ ่า``, and ``่า`` is in most Thai texts: ranking a 3-character query
cost what a common word's does). A query's last bigram is a prefix (``"ก่า" *``): the text
may write marks on its last letter that the query stopped before; a query that starts
on a mark is searched without it (no segmenter, nothing to download).
Their combining marks (categories Mn/Mc) are separators to unicode61, which would cut
``น้ำ`` into ``น`` and ``ำ`` and lose the tone: the index declares every character of
these runs a token character (``TOKEN_CHARS``, see ``schema``).

Marks in general: unicode61 (by default) cuts words at every combining mark, so a Hindi
word lost its vowel signs (``दिल`` and ``दाल`` were the same two tokens). The word table
keeps marks inside words (``categories 'L* N* Co M*'``), and what is indexed or queried
is first ``searchable``: NFC (a decomposed Hangul syllable or accent is the same word
as the composed one), compatibility forms as their plain letters (full-width ``ＡＢＣ``
is ``ABC``, half-width ``ｱｲｳ`` is ``アイウ``),
Greek without its accents (``καλημερα`` finds ``Καλημέρα``, as ``cafe`` finds ``café``)
and without the vowel points Arabic and Hebrew may carry or not (``كتب`` finds
``كَتَبَ``), as a reader of those scripts expects.

unicode61 knows Unicode 6.1 only, so ``searchable`` also does what it would do with
newer text and what it cannot do: a symbol or punctuation mark newer than 6.1 (most
emoji: ``party🥳`` was one word) is a word break; an invisible format character (a
zero-width space or joiner, a soft hyphen, a bidi mark or isolate) is no break and is
dropped (``data\u200bbase`` is ``database``, as Unicode's word rules read it); and the
letters that case and accent folding leave apart in some languages are folded as a
reader folds them: ``ß`` is ``ss``, the Turkish dotless ``ı`` and dotted ``İ`` are ``i``,
and ``đ ł ø ħ`` are ``d l o h`` (as ``é`` is ``e``).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import unicodedata
from collections.abc import Iterator

import re2

from indexer.canonical import composed, stream_safe
from indexer.canonical import warm as build_canonical
from indexer.index.nfkc import nfkc
from indexer.index.nfkc import warm as build_nfkc_class
from indexer.sqlite_lib import sqlite3
from shared.reader_folds import (
    ARABIC_FOLDS,
    COMPATIBLE,
    COMPATIBLE_CLASS,
    DEAD_CONSONANTS,
    DIGIT_FOLDS,
    DIGIT_ZEROS,
    FORMAT_CLASS,
    FORMAT_RANGES,
    FORMAT_RUNS,
    GREEK_BASES,
    LETTER_FOLDS,
    OPTIONAL_MARKS,
    case_fixed,
    tag_key,
)

# Letters and numbers of the CJK scripts (punctuation and symbols excluded, since
# unicode61 treats those as separators): kana, han, hangul, iteration marks.
CJK_CHARS = (
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
CJK_RUN = re.compile(f"[{CJK_CHARS}{_SPACELESS_CHARS}]+")
# The spaceless kind apart (keyword extraction compiles the CJK kind's own: its 40,000
# characters in ``re``'s Python-built bitmap cost 2-3 ms of every start).
SPACELESS_RUN = re.compile(f"[{_SPACELESS_CHARS}]+")
# What the word table keeps as token characters, near enough: letters, digits, marks.
WORD = re2.compile(r"[\pL\pN\pM]+")
_MARK_LEADS = (b"\xd6", b"\xd7", b"\xd8", b"\xd9", b"\xdb")
# (RE2's class of) what ``searchable`` takes out as showing nothing: format characters,
# variation selectors, the marks that show nothing (``reader_folds.FORMAT_RANGES``)
SHOWING_NOTHING = "".join(f"\\x{{{low:x}}}-\\x{{{high:x}}}" for low, high in FORMAT_RANGES)
FORMAT_CHARS = re2.compile(rf"[{SHOWING_NOTHING}\x{{20e3}}]")  # (and a keycap's sign)
_KEYCAPS = re.compile("[#*0-9]?\u20e3")  # once its selector is gone: ``1\u20e3``


def _one_letter_folds() -> Iterator[tuple[str, str]]:
    """(letter, the letter it folds to) of every fold of one letter into one (not
    ``ß`` -> ``ss``): the Latin ones and the Arabic-script ones."""
    for code, folded in LETTER_FOLDS.items():
        if isinstance(folded, str) and len(folded) == 1:
            yield chr(code), folded
    yield from ARABIC_FOLDS.items()


def folded_from() -> dict[str, str]:
    """Each letter the one-letter folds fold to, with the letters folded to it
    (``ا``: ``اآأإٱ``): what a highlight of a folded query must match."""
    found: dict[str, str] = {}
    for letter, folded in _one_letter_folds():
        found[folded] = found.get(folded, folded) + letter
    return {folded: "".join(dict.fromkeys(letters)) for folded, letters in found.items()}


# Where Unicode added symbols and punctuation after 6.1: currency signs from U+20BA,
# number forms, technical symbols from U+23F4, arrows and shapes, supplemental
# punctuation from U+2E3B, and plane 1's emoji and symbol blocks (most emoji).
_NEWER_SYMBOL_BLOCKS = (
    (0x20BA, 0x20CF), (0x218A, 0x218F), (0x23F4, 0x23FF), (0x2B00, 0x2BFF),
    (0x2E3B, 0x2E7F), (0x1F000, 0x1FBFF),
)  # fmt: skip


def _newer_symbol_ranges() -> list[list[int]]:
    """The symbols, punctuation and spaces in those blocks (in plane 1 also the code
    points Python's tables do not know yet: symbols to come), as ranges. unicode61
    reads the ones newer than 6.1 as letters; the older ones it breaks at already."""
    ranges: list[list[int]] = []
    for low, high in _NEWER_SYMBOL_BLOCKS:
        for code in range(low, high + 1):
            kind = unicodedata.category(chr(code))
            if kind[0] in "SPZ" or (kind == "Cn" and code >= 0x1F000):
                if ranges and ranges[-1][1] == code - 1:
                    ranges[-1][1] = code
                else:
                    ranges.append([code, code])
    return ranges


def _regex_class(ranges: list[list[int]], escape: str) -> str:
    """``[...]`` of ``ranges``, each code point spelled with ``escape``."""
    return "[" + "".join(escape.format(lo) + "-" + escape.format(hi) for lo, hi in ranges) + "]"


@functools.cache
def _newer_symbols() -> tuple[re2._Regexp, re.Pattern[str]]:
    """Patterns of those symbols (built at first use: 10 ms of every start): one to find
    one, and one of their runs to replace. RE2 finds them at a few ns a character; re
    replaces them faster (RE2's Python binding costs about 5 us a match, and emoji come
    many to a note)."""
    ranges = _newer_symbol_ranges()
    found = re2.compile(_regex_class(ranges, r"\x{{{:x}}}"))
    return found, re.compile(_regex_class(ranges, r"\U{:08x}") + "+")


_GREEK_LEADS = (b"\xce", b"\xcf", b"\xe1\xbc", b"\xe1\xbd", b"\xe1\xbe", b"\xe1\xbf")


def greek_bare(text: str, data: bytes) -> str:
    """``text`` (``data`` its UTF-8, surrogates passed) with ``GREEK_BASES`` applied only
    between its first and last character of ``_GREEK_LEADS``: a translate looks up every
    character past ASCII (~35 ns each), and a note of a few Greek words spends most of it
    on the rest (~100 us a 3.6 KB note with two Greek letters); every letter the table
    changes is in that span (U+0386-03FF, U+1F00-1FFF), so the text is the same."""
    first, end = len(data), -1
    for lead in _GREEK_LEADS:  # (each look bounded by the best so far: a Greek text's
        at = data.find(lead, 0, first + len(lead) - 1)  # are a few bytes each)
        if at >= 0:
            first = at
        at = data.rfind(lead, max(end - 1, 0))
        if at >= 0:
            end = max(end, at + (2 if len(lead) == 1 else 3))
    if end < 0:
        return text
    head = len(data[:first].decode("utf-8", "surrogatepass"))
    tail = len(text) - len(data[end:].decode("utf-8", "surrogatepass"))
    return text[:head] + text[head:tail].translate(GREEK_BASES) + text[tail:]


def _compatible_codes() -> Iterator[int]:
    """The code points of ``COMPATIBLE``'s ranges (the highlight's table maps those NFKC
    makes one other character)."""
    for low, high in re.findall("(.)(?:-(.))?", COMPATIBLE_CLASS, re.DOTALL):
        yield from range(ord(low), ord(high or low) + 1)


@functools.cache
def _loose_table() -> dict[int, str]:
    """For ``without_ignored_marks`` (built at its first use): each Latin or Greek letter
    with accents -> the bare letter (unicode61 folds Latin ones, ``searchable`` Greek
    ones), ``ı ł ø đ ħ`` -> ``i l o d h``, every script's digits -> the ASCII ones (a
    hit of ``2024`` in ``٢٠٢٤`` is found here only), full- and half-width forms -> their
    plain letter, and Arabic and Hebrew points -> nothing, as a ``str.translate`` table (a
    regex of them all read 1 MB in 0.7 s: past U+FFFF its class is a list). Only one
    letter for one, or none for a mark: the spans of the text stay where they were."""
    table: dict[str, str] = {}
    for code in (*range(0x00C0, 0x0250), *range(0x0370, 0x0400), *range(0x1E00, 0x2000)):
        decomposed = unicodedata.normalize("NFD", chr(code))
        base, marks = decomposed[0], decomposed[1:]
        if marks and base.isalpha() and all(unicodedata.category(m) == "Mn" for m in marks):
            table[chr(code)] = base
    for code in range(0x0590, 0x0700):
        if OPTIONAL_MARKS.fullmatch(chr(code)):
            table[chr(code)] = ""
    table.update(_one_letter_folds())
    # Every script's digits as the ASCII ones: a hit of ``2024`` in ``٢٠٢٤`` is found here,
    # not by a class of 65 spellings for each digit of the highlight (a snippet of
    # ``10 20 30 40 50`` took ten times as long).
    table.update(DIGIT_FOLDS)
    for code in _compatible_codes():  # compatibility forms
        plain = unicodedata.normalize("NFKC", chr(code))
        if len(plain) == 1 and plain != chr(code):
            table[chr(code)] = plain
    for low, high in FORMAT_RANGES:  # invisible, and not read
        for code in range(low, high + 1):
            table[chr(code)] = ""
    table.update(dict.fromkeys(DROPPED_MARKS, ""))  # (a mark no letter composed with)
    return str.maketrans(table)


@functools.cache
def _loose_letters() -> re2._Regexp:
    """Any character ``_loose_table`` changes (RE2: a few ns a character)."""
    return re2.compile("[" + "".join(f"\\x{{{code:x}}}" for code in sorted(_loose_table())) + "]")


def build_tables() -> None:
    """Build the character classes and tables the first search, recall or snippet of
    text past ASCII would build (the case unicode61 leaves apart, NFKC's changes: 40
    ms): on a thread once the server serves, so that no caller waits for them."""
    _searchable_changes()
    _loose_letters()
    build_nfkc_class()
    build_canonical()


# The combining marks unicode61 drops wherever they stand (``remove_diacritics``: SQLite's
# ``sqlite3Fts5UnicodeIsdiacritic``), which NFC leaves apart when no letter composes with
# them: ``i̇stanbul`` (``"İstanbul".lower()``, an ``i`` and U+0307) is searched as
# ``istanbul``, so the loose reading drops them too, or it highlights nothing.
DROPPED_MARKS = "".join(
    chr(code) for code in range(0x300, 0x332) if (0x000361F808029FDF >> (code - 0x300)) & 1
)
# What the loose reading takes out of a text (its spans are mapped back to the text).
_TAKEN_OUT = re.compile(f"{OPTIONAL_MARKS.pattern}|[{FORMAT_CLASS}{DROPPED_MARKS}]+")


def without_ignored_marks(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` (NFC) with its Latin and Greek letters bare, without Arabic and Hebrew
    points and invisible format characters, as search reads them, and the spans of what
    was taken out: ``cafe`` is found in what is left of "Café", ``database`` in
    ``data\u200bbase`` (``query.make_snippet``)."""
    if _loose_letters().search(text) is None:  # (a translate costs 50 ns a character)
        return text, []
    bare = text.translate(_loose_table())
    if len(bare) == len(text):
        return bare, []
    return bare, [m.span() for m in _TAKEN_OUT.finditer(text)]


def searchable(text: str) -> str:
    """``text`` as words are indexed and queried: NFC with compatibility forms as their
    plain letters, Greek without accents, Arabic and Hebrew without vowel points, no
    format characters, newer symbols as breaks, a few letters folded (see the module's
    docstring)."""
    if text.isascii():
        return text
    text = composed(text)
    changes = _searchable_changes()
    found = changes.search(text)  # (one look instead of each step's own)
    while found is not None and _is_other_digit(found.group()):
        text = _script_digits(text, found.group())  # (a text whose only change is
        found = changes.search(text, found.start())  # digits: not all the steps' looks)
    if found is None:
        return text
    return _searchable_steps(text)


def _searchable_steps(text: str) -> str:
    """``searchable``'s steps after NFC, each where its characters are."""
    # A regex costs about 20 ns a character; a byte search for the UTF-8 lead bytes of
    # those scripts costs about 1 ns, and most texts have none.
    data = text.encode("utf-8", "surrogatepass")
    if _COMPATIBLE_ANY.search(text) is not None:
        text = COMPATIBLE.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), text)
        data = text.encode("utf-8", "surrogatepass")
    if any(lead in data for lead in _GREEK_LEADS):
        text = greek_bare(text, data)
    if any(lead in data for lead in _MARK_LEADS):
        text = OPTIONAL_MARKS.sub("", text)
    if FORMAT_CHARS.search(text):
        text = FORMAT_RUNS.sub("", text)
        if "\u20e3" in text:  # a keycap (``1️⃣``) is a symbol: a break
            text = _KEYCAPS.sub(" ", text)
    newer, newer_runs = _newer_symbols()
    if newer.search(text):
        text = newer_runs.sub(" ", text)
    folds, folded = _folds()
    if folded.search(text) is not None:  # (RE2: a few ns a character; most texts have none)
        text = text.translate(folds)
    if _OTHER_DIGIT.search(text) is not None:
        text = _ascii_digits(text)
    for letters, found in ((ARABIC_FOLDS, _ARABIC_FOLDED), (DEAD_CONSONANTS, _DEAD_FOUND)):
        if found.search(text) is not None:  # common there: replace runs at memchr speed
            for letter, folded_letter in letters.items():
                text = text.replace(letter, folded_letter)
    return text


_ARABIC_FOLDED = re2.compile("[" + "".join(ARABIC_FOLDS) + "]")
# Malayalam's chillus and Bengali's khanda ta, replaced as the Arabic letters are (in the
# translate of ``_folds`` a Bengali text with a khanda ta took 2.7 times as long to index)
_DEAD_FOUND = re2.compile("[" + "".join(DEAD_CONSONANTS) + "]")
# A decimal digit of a script past ASCII (``reader_folds.DIGIT_ZEROS``)
_OTHER_DIGIT = re2.compile(
    "[" + "".join(f"\\x{{{z:x}}}-\\x{{{z + 9:x}}}" for z in DIGIT_ZEROS) + "]"
)


def _ascii_digits(text: str) -> str:
    """``text`` with every script's decimal digits as the ASCII ones (``٢٠٢٤`` is ``2024``):
    ten replaces (at memchr speed) for each script whose digits it holds, most one; a
    translate cost 80 ns a character, nearly doubling the index's time of such notes."""
    found = _OTHER_DIGIT.search(text)
    while found is not None:
        text = _script_digits(text, found.group())
        found = _OTHER_DIGIT.search(text, found.start())
    return text


def _is_other_digit(char: str) -> bool:
    """Whether ``char`` is one decimal digit past ASCII."""
    return len(char) == 1 and not char.isascii() and unicodedata.category(char) == "Nd"


def _script_digits(text: str, digit: str) -> str:
    """``text`` with the ten digits of ``digit``'s script as the ASCII ones."""
    zero = ord(digit) - unicodedata.decimal(digit)
    for value in range(10):
        text = text.replace(chr(zero + value), str(value))
    return text


@functools.cache
def _searchable_changes() -> re2._Regexp:
    """Any character one of ``searchable``'s steps after NFC looks for (Greek, Hebrew and
    Arabic by their whole blocks): a text without one, most, is read once, not six
    times."""
    scripts = r"[\x{370}-\x{3ff}\x{1f00}-\x{1fff}\x{580}-\x{6ff}]"
    looked_for = [_COMPATIBLE_ANY, FORMAT_CHARS, _newer_symbols()[0], _folds()[1]]
    looked_for += [_ARABIC_FOLDED, _DEAD_FOUND, _OTHER_DIGIT]
    return re2.compile("|".join([scripts, *(pattern.pattern for pattern in looked_for)]))


# (RE2, a few ns a character: a text without one, most, pays no more)
_COMPATIBLE_ANY = re2.compile(f"[{COMPATIBLE_CLASS}]")


@functools.cache
def _folds() -> tuple[dict[int, str], re2._Regexp]:
    """The letter folds (``LETTER_FOLDS``) and the case unicode61 leaves apart
    (``_newer_case``) as one table, and a pattern finding any letter it folds (a
    translate costs 100 ns a character: only a text holding one pays it)."""
    table = {**LETTER_FOLDS, **_newer_case()}
    for letter in DEAD_CONSONANTS:  # (replaced, see ``_DEAD_FOUND``)
        del table[ord(letter)]
    letters = "".join(f"\\x{{{code:x}}}" for code in sorted(table))
    return table, re2.compile(f"[{letters}]")


@functools.cache
def _newer_case() -> dict[int, str]:
    """The letters whose case unicode61 leaves apart (its tables know Unicode 6.1's: not
    Georgian Mtavruli, Cherokee's small letters, Adlam, Osage...), as their case fold.
    Asked of the SQLite this process links, as the index's own tokenizer would fold them
    (30 ms, once)."""
    cased = [
        char
        for char in map(chr, range(0x80, 0x20000))
        if unicodedata.category(char)[0] in "LN" and len(char.casefold()) == 1
        if char.casefold() != char
    ]
    tokenizer = "unicode61 remove_diacritics 0 categories ''L* N* Co M*''"
    try:
        with contextlib.closing(sqlite3.connect(":memory:")) as conn:
            conn.execute(f"CREATE VIRTUAL TABLE probe USING fts5(t, tokenize='{tokenizer}')")
            conn.execute("CREATE VIRTUAL TABLE terms USING fts5vocab(probe, 'instance')")
            conn.execute("INSERT INTO probe VALUES (?)", (" ".join(cased),))
            terms = dict(conn.execute("SELECT offset, term FROM terms").fetchall())
    except sqlite3.Error as err:  # (an SQLite without FTS5 has no index to fold for)
        logging.getLogger("indexer.index").warning("case folding probe failed: %s", err)
        return {}
    return {ord(char): char.casefold() for at, char in enumerate(cased) if terms.get(at) == char}


def as_read(text: str) -> str:
    """``text`` as a reader takes it in, near enough: compatibility forms as their plain
    letters (NFKC), then as search reads it (``searchable``: invisible characters gone;
    Latin and Greek letters bare, Arabic and Hebrew without points), case folded."""
    if not text.isascii():
        text = nfkc(stream_safe(text))
    return without_ignored_marks(searchable(text))[0].casefold()


def word_text(text: str) -> str:
    """``text`` as the word table indexes it."""
    return cjk_expand(searchable(text))


def cjk_expand(text: str) -> str:
    """``text`` with every CJK (or Thai, Lao, Khmer, Myanmar) run replaced by its bigrams
    and last character."""
    if text.isascii() or not CJK_RUN.search(text):  # (isascii: no scan, 20 us of 2 KB)
        return text
    return CJK_RUN.sub(_expand_run, text)


def _expand_run(match: re.Match[str]) -> str:
    units = run_units(match.group(0))
    if len(units) == 1:
        return f" {units[0]} "
    pairs = " ".join(units[i] + units[i + 1] for i in range(len(units) - 1))
    return f" {pairs} {units[-1]} "


# The combining marks of the spaceless scripts (vowel signs, tone marks, Myanmar's
# medials): each is one character as seen with the letter before it.
RUN_MARKS = "".join(
    chr(code)
    for low, high in _SPACELESS_RANGES
    for code in range(low, high + 1)
    if unicodedata.category(chr(code)).startswith("M")
)
_ANY_RUN_MARK = re.compile(f"[{RUN_MARKS}]")
# A unit of a run's bigrams: a character and the marks on it; a stacking sign and the
# consonant it puts below (Khmer coeng, Myanmar's invisible virama) with the letter
# above, so that a word is not found from inside a stack (``ត្រី``, fish, inside
# ``តន្ត្រី``, music; ``ဘာ`` inside ``ကမ္ဘာ``).
_STACK = "\u17d2[\u1780-\u17ff]|\u1039[\u1000-\u109f]"  # (a consonant of its own script)
_UNIT = re.compile(f"(?:{_STACK}|.)(?:{_STACK}|[{RUN_MARKS}])*", re.DOTALL)


def run_units(run: str) -> list[str]:
    """The characters of a spaceless run as its bigrams pair them: characters as seen,
    a letter with its marks and the consonants stacked below it (a run that starts on a
    mark: that mark and those after it, one)."""
    if _ANY_RUN_MARK.search(run) is None:
        return list(run)
    return _UNIT.findall(run)


def fold(text: str) -> str:
    """Case-folded text for the trigram table (per-character, so substrings survive), in
    NFC as grep reads notes and patterns (``vault.canonical_lines``)."""
    return case_fixed(composed(text)).casefold()


def fold_tag(tag: str) -> str:
    """A tag as the search filter compares tags, the same in any script and either
    normalization (``shared.reader_folds.tag_key``, by which a note keeps each tag once):
    NFC, compatibility forms as their plain letters (``ＡＩ`` is ``AI``; a full-width
    ``＃`` is the ``#`` a tag may start with), case folded like ``fold`` (SQLite's
    ``lower`` folds ASCII only: ``Ärger`` was not ``ärger``)."""
    if tag.isascii() and "\x00" not in tag:
        return tag.lower()
    return tag_key(stream_safe(tag))
