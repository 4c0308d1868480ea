"""NFKC at the cost of what it changes: a reader's text (``text.as_read``) is normalized
for every hit of every recall, and ``unicodedata.normalize`` costs about 75 ns a
character once a text holds one character it changes, as Chinese and Japanese text
always does (its full-width ``，：（）``): two thirds of reading a hit's paragraphs.

A text that is NFC and holds no character NFKC could change but the full-width and
ideographic forms of ASCII (``，`` is ``,``, U+3000 a space) is its NFKC with those
replaced: every other character is one NFKC keeps as it is, and with no combining mark
anywhere (they are all in the class looked for) nothing composes with the ASCII put in.
Any other text is normalized whole.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import re2

from indexer.canonical import re2_class

# Every character with a decomposition or a combining class is in the first three planes
# (checked by a test over all of Unicode): only these are looked at to build the class.
_PLANES_WITH_CHANGES = 0x30000
# The forms that are ASCII characters in another width, NFKC's most common change by far
_WIDE_ASCII = {chr(code): chr(code - 0xFEE0) for code in range(0xFF01, 0xFF5F)}
_WIDE_ASCII["\u3000"] = " "
_SHORT = 64  # characters normalized at once (an RE2 call costs a few microseconds)
_WIDE = re.compile(f"[{''.join(map(re.escape, _WIDE_ASCII))}]")


def nfkc(text: str) -> str:
    """``unicodedata.normalize("NFKC", text)``, the same string."""
    if text.isascii():
        return text
    if len(text) <= _SHORT:  # (looking costs more than normalizing)
        return unicodedata.normalize("NFKC", text)
    if not unicodedata.is_normalized("NFC", text) or _changed().search(text) is not None:
        return unicodedata.normalize("NFKC", text)
    for wide in set(_WIDE.findall(text)):
        text = text.replace(wide, _WIDE_ASCII[wide])
    return text


def warm() -> None:
    """Build the class ``nfkc`` looks for in a long text now (see ``text.build_tables``)."""
    _changed()


@functools.cache
def _changed() -> re2._Regexp:
    """Any of ``changed_codes`` (built at the first use: 30 ms)."""
    return re2.compile(re2_class(sorted(changed_codes())))


def changed_codes() -> set[int]:
    """The characters NFKC may change or join to the one before, but the wide forms of
    ASCII: those with a decomposition, the combining marks, and the ones a canonical
    pair ends with (Hangul's vowels and final consonants included: a syllable is made
    of them)."""
    codes: set[int] = set()
    for code in range(0x80, _PLANES_WITH_CHANGES):
        char = chr(code)
        decomposition = unicodedata.decomposition(char)
        if decomposition:
            codes.add(code)
            parts = decomposition.split()
            if not decomposition.startswith("<") and len(parts) == 2:
                codes.add(int(parts[1], 16))
        elif unicodedata.combining(char):
            codes.add(code)
    codes.update(range(0x1161, 0x1176))  # Hangul vowels
    codes.update(range(0x11A8, 0x11C3))  # Hangul final consonants
    codes.difference_update(map(ord, _WIDE_ASCII))
    return codes
