"""The letters a reader takes as one, for both sides: search reads words so
(``indexer.index.text.searchable``), and the Memory Writer compares titles so
(``agent_client.merge.paths.title_key``); a title search finds as the same is then one
note, not two (``كتب`` and ``كَتَبَ``, ``İstanbul`` and ``Istanbul``).

Plain data and ``re`` only: the indexer adds its own faster scans (RE2) around them.
A tag is compared by ``tag_key`` on both sides too: the tags filter of search, and a
note keeping each tag once.
"""

from __future__ import annotations

import re
import unicodedata

from shared.invisible import SHOW_NOTHING

# Vowel points that Arabic and Hebrew text may carry or not (harakat and tatweel; niqqud
# and cantillation), never their letters or punctuation (maqaf, sof pasuq).
OPTIONAL_MARKS = re.compile(
    "[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7"
    "\u0610-\u061a\u0640\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8"
    "\u06ea-\u06ed]+"
)
# Invisible format characters (category Cf, Unicode 14: a test checks the list against
# Python's tables) and variation selectors (which choose a glyph: ``❤️`` is ``❤``):
# dropped from words (``data\u200bbase`` is ``database``).
FORMAT_RANGES = (
    (0x00AD, 0x00AD), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD),
    (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x180E, 0x180E),
    (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x2064), (0x2066, 0x206F),
    (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0x110BD, 0x110BD), (0x110CD, 0x110CD),
    (0x13430, 0x13438), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A), (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
    (0xFE00, 0xFE0F), (0xE0100, 0xE01EF),  # the variation selectors
    (0x034F, 0x034F), (0x180B, 0x180D), (0x180F, 0x180F),  # marks that show nothing: the
    # grapheme joiner (``ירושלַ͏ִם``, as Unicode spells Jerusalem pointed), Mongolian's
    # free variation selectors
)  # fmt: skip
FORMAT_CLASS = "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in FORMAT_RANGES)
FORMAT_RUNS = re.compile(f"[{FORMAT_CLASS}]+")
# Letters case folding and accent removal leave apart (no decomposition), and the
# Arabic-script letters a reader takes as one: the alef with or without its hamza or
# madda, teh marbuta and heh, alef maksura and yeh, and the Persian keheh and yeh typed
# for the Arabic kaf and yeh (and the other way round).
ARABIC_FOLDS = {"آ": "ا", "أ": "ا", "إ": "ا", "ٱ": "ا", "ة": "ه", "ى": "ي", "ی": "ي", "ک": "ك"}
# Russian ``ё`` is optional in print (``еще`` is ``ещё``): it is ``е``. The modifier
# letter apostrophe (Ukrainian's ``мʼясо``) is the apostrophe typed for it (``м'ясо``).
# Yiddish's ligatures of two letters are those letters (``װאַסער`` is typed ``וואסער``
# too; Unicode gives them no decomposition, so NFKC keeps them apart).
YIDDISH_LIGATURES = {"װ": "וו", "ױ": "וי", "ײ": "יי"}
# Malayalam's atomic chillus are their consonant and virama (``അവൻ`` is also typed
# ``അവന്‍``, the ZWJ after the virama: Unicode has them searched alike).
CHILLUS = {
    "ൺ": "ണ്", "ൻ": "ന്", "ർ": "ര്",
    "ൽ": "ല്", "ൾ": "ള്", "ൿ": "ക്",
    "ൔ": "മ്", "ൕ": "യ്", "ൖ": "ഴ്",
}  # fmt: skip
# Bengali's khanda ta is its ta and virama (``উৎসব`` was typed ``উত্\u200dসব``, the ZWJ after
# the virama, before Unicode 4.1, and still is: Unicode has them searched alike), as a
# chillu is; the dead consonant forms of both scripts together.
KHANDA_TA = {"ৎ": "ত্"}
DEAD_CONSONANTS = {**CHILLUS, **KHANDA_TA}
# The zero of every script's decimal digits past ASCII (category Nd, Unicode 14: a test
# checks the list against Python's tables; each script's ten digits follow its zero).
# A digit is its ASCII digit (``٢٠٢٤``, ``۲۰۲۴``, ``२०२४``, ``๒๕๖๗`` are ``2024`` and
# ``2567``): a reader of those scripts types either kind, and notes hold both. (Not in
# ``LETTER_FOLDS``: ``searchable`` replaces them script by script, faster than a
# translate; a title's key reads them as search does.)
DIGIT_ZEROS = (
    0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66,
    0x0CE6, 0x0D66, 0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810,
    0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0,
    0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10, 0x104A0, 0x10D30, 0x11066, 0x110F0,
    0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650, 0x116C0, 0x11730, 0x118E0,
    0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50, 0x1D7CE, 0x1D7D8,
    0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
)  # fmt: skip
DIGIT_FOLDS = {chr(zero + value): str(value) for zero in DIGIT_ZEROS for value in range(10)}
# The letters of ``LETTER_FOLDS`` and ``ARABIC_FOLDS`` that are one letter to their
# readers, typed either way by their keyboards: a tag's key folds them (``tag_key``),
# so a note keeps one of ``كتاب`` and ``کتاب``, and the filter finds it by either. Not
# ``đ ł ø ħ``, letters of their own that search folds as it folds accents (a tag keeps
# its accents: ``résumé`` is not ``resume``); ``ß`` and the Turkish ``ı İ`` are case
# folding's (``CASE_FIXES``).
TAG_LETTER_FOLDS = {
    **ARABIC_FOLDS, "ё": "е", "ʼ": "'", **YIDDISH_LIGATURES, **DEAD_CONSONANTS
}  # fmt: skip
_TAG_LETTERS = str.maketrans(TAG_LETTER_FOLDS)
# (looked for before a translate: most tags hold none, and a translate by a dict is
# slower than the look)
_ANY_TAG_LETTER = re.compile(f"[{''.join(TAG_LETTER_FOLDS)}]")
LETTER_FOLDS = str.maketrans(
    {"ß": "ss", "ẞ": "ss", "ı": "i", "İ": "i", "đ": "d", "Đ": "d", "ł": "l", "Ł": "l",
     "ø": "o", "Ø": "o", "ħ": "h", "Ħ": "h", "ё": "е", "Ё": "е", "ʼ": "'",
     **YIDDISH_LIGATURES, **DEAD_CONSONANTS}
)  # fmt: skip


def _greek_bases() -> dict[int, str]:
    """Each Greek letter with accents (tonos, dialytika, the polytonic marks) -> the bare
    letter: Greek is read without its accents (``ΚΑΛΗΜΕΡΑ`` is written without them), as
    Latin is by unicode61."""
    table: dict[int, str] = {}
    for code in (*range(0x0370, 0x0400), *range(0x1F00, 0x2000)):
        decomposed = unicodedata.normalize("NFD", chr(code))
        base, marks = decomposed[0], decomposed[1:]
        if marks and base.isalpha() and all(unicodedata.category(m) == "Mn" for m in marks):
            table[code] = base
    return table


GREEK_BASES = _greek_bases()
# Compatibility forms a reader takes for the plain letters: Latin ligatures and digraphs
# (``ĳ``, ``ǆ``, a long ``ſ``), the Armenian ``և``, super- and subscripts, letterlike
# symbols, number forms, enclosed letters and digits (``ⓒ``, ``①``), mathematical
# letters (``𝐒𝐭𝐫𝐚𝐬𝐬𝐞``, pasted from social media), CJK compatibility ideographs,
# ligatures, Arabic presentation forms, full- and half-width forms. (Not NFKC as a
# whole: it would also split Thai and Lao ``ำ``, which their bigrams keep whole.)
COMPATIBLE_CLASS = (
    "\u0132\u0133\u013f\u0140\u0149\u017f\u01c4-\u01cc\u01f1-\u01f3\u0587"
    "\u2070-\u209f\u2100-\u2189\u2460-\u24ff"
    "\uf900-\ufaff\ufb00-\ufdff\ufe70-\ufefe\uff00-\uffef\U0001d400-\U0001d7ff"
)
COMPATIBLE = re.compile(f"[{COMPATIBLE_CLASS}]+")
# str.casefold plus the Turkish dotted/dotless i, so that any case-insensitive match (RE2
# or Python re) is a substring after folding. A NUL becomes U+FFFD (on both sides): the
# trigram tokenizer stops at a NUL, and the text after it was never a grep candidate.
CASE_FIXES = str.maketrans({"\u0130": "i", "\u0131": "i", "\u0307": None, "\x00": "\ufffd"})
_CASE_FIX_PAIRS = (("\u0130", "i"), ("\u0131", "i"), ("\u0307", ""), ("\x00", "\ufffd"))


def case_fixed(text: str) -> str:
    """``text.translate(CASE_FIXES)``, the same text, by a replace of each of its four
    characters the text holds: a translate looks every character of a text past ASCII up
    in its table (35 ns each: 124 us of a 3.6 KB note, twice a write for the trigram
    table), where looking for four characters is a memchr each. (No replacement holds one
    of the four, so one after the other is the translate's all at once.)"""
    for char, fixed in _CASE_FIX_PAIRS:
        if char in text:
            text = text.replace(char, fixed)
    return text


# What a tag's key leaves out: what shows nothing (format characters such as a zero-width
# space, joiner or bidi mark, variation selectors, the letters that show nothing), so that
# a tag made only of them is none and ``a\u200b`` is ``a``; and the vowel points Arabic
# and Hebrew tags are typed with or without, as search reads words (``שָׁלוֹם`` is ``שלום``).
_UNSEEN_IN_TAGS = re.compile(
    f"[{FORMAT_CLASS}{''.join(sorted(SHOW_NOTHING))}]+|{OPTIONAL_MARKS.pattern}"
)
# Longer tags are compared as written: no filter takes them (``MAX_TAG_CHARS`` of
# ``shared.models``), and NFC of a long run of marks takes quadratic time.
_MAX_FOLDED_TAG = 256


def tag_key(tag: str) -> str:
    """A tag as the tags filter of search compares it, the index keeps it, and a note
    keeps each tag once by: ``café`` typed composed or not, ``ＡＢＣ`` and ``abc``,
    ``Ärger`` and ``ärger``, ``ΣΟΦΟΣ`` and ``σοφος`` are one tag (a full-width ``＃``, as
    Japanese input types it, is the ``#`` a tag may start with), and so are ``a`` and
    ``a\u200b``, ``שלום`` and ``שָׁלוֹם`` (``_UNSEEN_IN_TAGS``), and the letters one to
    their readers (``TAG_LETTER_FOLDS``: ``كتاب``, typed on an Arabic keyboard, is
    ``کتاب``; ``ёлка`` is ``елка``). Latin accents stay: ``résumé`` is not ``resume``.
    An empty key: no tag."""
    if tag.isascii() and "\x00" not in tag:
        return tag.lower()
    if len(tag) > _MAX_FOLDED_TAG:
        return tag
    text = unicodedata.normalize("NFC", tag)
    text = COMPATIBLE.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), text)
    text = _UNSEEN_IN_TAGS.sub("", text)
    text = case_fixed(text).casefold()
    if _ANY_TAG_LETTER.search(text):
        text = text.translate(_TAG_LETTERS)
    return unicodedata.normalize("NFC", text).strip().lstrip("#").strip()
