"""Which of a question's words Vietnamese writes, for the stop words that depend on the
question's language (``question_language``).

Vietnamese is written in syllables, each a word of its own: an initial consonant, a
vowel (or two or three) and a final consonant, marked with a tone. Its marks show it:
the letters it alone writes (ơ, ư, đ, a hook or a dot under a vowel: ``động``), and,
in a question written wholly in syllables, the accents it shares with French and
Portuguese (``cà phê an toàn``: à, ê). A stop word of another language written as
such a syllable without marks (``an`` of ``an toàn``, safe; ``in``, to print; ``em``,
``nem``, ``voi``) is a Vietnamese word where the question is Vietnamese, unless the
question shows that language in words Vietnamese does not write (``Where is the phở
in Hà Nội?``: ``where``, ``is``). A syllable carries its tone where Vietnamese puts it
(``ái``; Portuguese ``aí``, there, is none). Vietnamese's own stop words capitalized
inside a sentence, or opening it before another capitalized syllable, are a name's
syllables (``Ai Cập``, Egypt; ``ai``, who).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Set

from indexer.jobs.stop_words import AMBIGUOUS, LISTS_OF, STOP_WORDS

VIETNAMESE = "vi"
_NONE: frozenset[str] = frozenset()
# Letters Vietnamese alone of the listed languages writes: ơ, ư, đ, ĩ, ũ and the vowels
# with a hook above or a dot below (U+1EA0-U+1EF9: ả, ạ, ộ, ở). Not à, á, ã, ê, ô, ă:
# French's, Portuguese's, Romanian's too.
_VIETNAMESE_LETTERS = re.compile("[\u01a1\u01b0\u0111\u0129\u0169\u1ea0-\u1ef9]")
# A syllable as written without its tone: an initial consonant, a vowel (or two or
# three: oa, uy, oai, ươi) and a final consonant, each as Vietnamese spells them (``di``,
# ``ti``, ``in``, ``tai``, ``an``, ``the``: vải the, gauze; ``toàn``, ``người``; not
# ``and``, ``you``, ``is``, ``café``). (Unmarked, the spellings typed for marked ones:
# ``uoi`` for ``uôi``.)
_SYLLABLE = re.compile(
    "(ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdghklmnprstvx\u0111])?"
    "(oai|oay|oao|oeo|uay|uya|uyu|uoi|i\u00eau|y\u00eau|u\u00e2y|u\u00f4i|\u01b0\u01a1i"
    "|\u01b0\u01a1u|uy\u00ea|ai|ao|au|ay|\u00e2u|\u00e2y|eo|\u00eau|ia|i\u00ea|iu|oa|o\u0103|oe"
    "|oi|\u00f4i|\u01a1i|ua|u\u00e2|ue|u\u00ea|ui|uo|u\u00f4|u\u01a1|\u01b0\u01a1|\u01b0a"
    "|\u01b0i|\u01b0u|uy|y\u00ea|[aeiouy\u0103\u00e2\u00ea\u00f4\u01a1\u01b0])"
    "(ch|ng|nh|[cmnpt])?"
)
# The initials French, Portuguese, Spanish and Italian do not open a word with
_OWN_INITIALS = frozenset("kh ng ngh nh gh ph tr".split())
# The tones, after a vowel (or its circumflex, breve or horn) as NFD writes them: grave,
# acute, tilde, hook above, dot below (a tilde on n is Spanish's ñ)
_TONES = re.compile("(?<=[aeiouy\u0302\u0306\u031b])[\u0300\u0301\u0303\u0309\u0323]")
# The letters of a syllable (``_SYLLABLE``) and its vowels each with a tone, as NFC writes
# them (``à``, ``ậ``, ``ợ``): one character each -> the vowel without it
_SYLLABLE_LETTERS = frozenset("abcdeghiklmnopqrstuvxy\u0103\u00e2\u00ea\u00f4\u01a1\u01b0\u0111")
_TONE_OFF = {
    unicodedata.normalize("NFC", vowel + tone): vowel
    for vowel in "aeiouy\u0103\u00e2\u00ea\u00f4\u01a1\u01b0"
    for tone in "\u0300\u0301\u0303\u0309\u0323"
}
# The vowels with a hat, breve or horn, which carry the tone of theirs (``người``, ``cửa``)
_HATTED = frozenset("\u00e2\u0103\u00ea\u00f4\u01a1\u01b0")
# The vowel pairs whose tone goes on either, also opening three (the old ``hòa``,
# ``thủy``; the new ``hoà``, ``thuỷ``; typed so before a final too: ``tòan``, ``ngòai``);
# any other open pair carries it on its first (``tài``, ``mía``, ``của``)
_EITHER = frozenset("oa oe uy".split())
# Portuguese's nasal vowels (pão, põe): Vietnamese writes them too (bão), but they show
# no more Vietnamese than Portuguese
_NASAL = re.compile("[\u00e3\u00f5]")
# Words written alike in every language, loanwords from English: they show no language
# (the stop words ``ok``, ``okay``), nor keep a question from being written wholly in
# Vietnamese syllables (``wifi máy in màu``, ``mật khẩu email``)
EVERY_LANGUAGE = frozenset(
    """ok okay email e-mail wifi wi-fi internet online offline web website app apps laptop
    smartphone video videos pdf usb""".split()
)


def vietnamese_count(present: Set[str], names: Set[str]) -> int:
    """How many of the question's words (``present``, lower-cased) show Vietnamese, its
    stop words aside (they count already): those holding a letter Vietnamese alone
    writes; and in a question written wholly in syllables (its ``names``, capitalized
    inside a sentence, aside: ``Canon``, ``Hà Nội``, typed in any language), those
    marked with an accent Vietnamese shares with French and Portuguese and in no stop
    list (``_marked``), on a syllable they do not write (``_own``: ``toàn``, ``máy``,
    ``phê``; not ``pé``, ``dá``, ``thé``), or once one such or a letter Vietnamese alone
    writes shows it, on any (``cà`` of ``cà phê``, ``bé`` of ``em bé bị ho``)."""
    count = sum(1 for word in present if _letters(word))
    words = [w for w in present - names - EVERY_LANGUAGE if any(char.isalpha() for char in w)]
    if all(syllable(word) for word in words):
        marked = [word for word in words if _marked(word)]
        if any(_own(word) for word in marked) or any(_only_ours(word) for word in present):
            count += len(marked)
    return count


def vietnamese_kept(present: Set[str], languages: Set[str], names: Set[str]) -> frozenset[str]:
    """The stop words of other languages that a Vietnamese question (of ``languages``)
    writes as Vietnamese syllables without marks (``di`` of ``di động``; ``an`` of
    ``an toàn``): those of no language the question shows, either among its
    ``languages`` or by a stop word Vietnamese does not write (English ``is``, ``where``,
    ``from``: ``Giá vé from Hà Nội to Đà Nẵng`` drops ``to``), its ``names`` aside."""
    if VIETNAMESE not in languages:
        return _NONE
    foreign = {
        lang
        for word in present - names - EVERY_LANGUAGE
        if word in LISTS_OF and not syllable(word)
        for lang in LISTS_OF[word]
    }
    shown = languages | foreign
    return frozenset(
        word
        for word in STOP_WORDS.intersection(present)
        if word.isascii() and shown.isdisjoint(LISTS_OF[word]) and syllable(word)
    )


def vietnamese_names(names: Set[str], languages: Set[str]) -> frozenset[str]:
    """Vietnamese's own stop words among the ``names`` of a Vietnamese question (of
    ``languages``), capitalized inside a sentence: a name's syllables there (``Ai Cập``,
    Egypt; ``núi Ba Vì``; ``Cao Bằng``), since Vietnamese capitalizes nothing else;
    stop words elsewhere (``Ai đi Ai Cập?``: who goes to Egypt?)."""
    if VIETNAMESE not in languages:
        return _NONE
    return frozenset(
        word for word in names if VIETNAMESE in LISTS_OF.get(word, ()) and syllable(word)
    )


def syllable(word: str) -> bool:
    """Whether the lower-cased ``word`` is written as one Vietnamese syllable, with or
    without its tone, and that on the vowel Vietnamese puts it (``an``, ``toàn``,
    ``người``; not Portuguese ``aí``, there, nor ``baú``: ``ái``, ``báu``)."""
    return _spelled(word) is not None


def _own(word: str) -> bool:
    """Whether the syllable ``word`` is one French, Portuguese, Spanish and Italian
    rarely write as a word: closed by a consonant (``toàn``, ``khóc``), of two or three
    vowels (``máy``, ``màu``), or opened by an initial of Vietnamese's (``phê``), not a
    consonant and a vowel (``pé``, ``là``, ``thé``, ``chá``)."""
    spelled = _spelled(word)
    if spelled is None:
        return False
    initial, vowels, final = spelled.groups()
    return initial in _OWN_INITIALS or len(vowels) > 1 or final is not None


def _spelled(word: str) -> re.Match[str] | None:
    """``word`` read as a syllable (``_SYLLABLE``, its tone aside), if it is one: one
    tone at most, on the vowel that carries it (``_placed``). Read letter by letter as
    NFC writes them (``_TONE_OFF``); decomposed only where a mark stands alone."""
    if word.isascii():
        return _SYLLABLE.fullmatch(word)
    at = -1
    for number, char in enumerate(word):
        if char in _TONE_OFF:
            if at >= 0:
                return None  # (two tones)
            at = number
        elif char not in _SYLLABLE_LETTERS:
            # (a letter no syllable writes: none, unless a mark apart composes one)
            return _decomposed(word) if any(map(unicodedata.combining, word)) else None
    if at < 0:
        return _SYLLABLE.fullmatch(word)
    spelled = _SYLLABLE.fullmatch(word[:at] + _TONE_OFF[word[at]] + word[at + 1 :])
    return spelled if spelled is not None and _placed(spelled, at) else None


def _decomposed(word: str) -> re.Match[str] | None:
    """``_spelled`` for a word holding a mark apart (``to\\u0300an``): its tone found
    in NFD."""
    decomposed = unicodedata.normalize("NFD", word)
    tone = _TONES.search(decomposed)
    if tone is None:
        return _SYLLABLE.fullmatch(unicodedata.normalize("NFC", decomposed))
    start, end = tone.span()
    if _TONES.search(decomposed, end) is not None:
        return None
    # (a dot below comes before a hat in NFD: ``ậ`` is a, dot, hat; composed again whole)
    toneless = unicodedata.normalize("NFC", decomposed[:start] + decomposed[end:])
    spelled = _SYLLABLE.fullmatch(toneless)
    # (the letter carrying the tone: the last before it)
    letter = len(unicodedata.normalize("NFC", decomposed[:start])) - 1
    return spelled if spelled is not None and _placed(spelled, letter) else None


def _placed(spelled: re.Match[str], letter: int) -> bool:
    """Whether the tone on the ``letter``-th letter of the syllable ``spelled`` sits
    where Vietnamese writes it: on its vowel with a hat or horn (the last: ``người``,
    ``cửa``); else on a lone vowel, on the last before a final consonant (``toàn``), the
    middle of three (``ngoài``), the first of two (``tài``, ``mía``; ``oa``, ``oe``,
    ``uy`` either: ``hòa``, ``hoà``; and the ``u`` of ``qu``, as often typed: ``qúa``).
    Portuguese ``aí`` is no Vietnamese syllable."""
    initial, vowels, final = spelled.groups()
    at = letter - len(initial or "")  # (the syllable is the whole word: its vowels' start)
    if initial == "qu" and at == -1:
        at = 0
    if not 0 <= at < len(vowels):
        return False
    for number in range(len(vowels) - 1, -1, -1):  # (the last with a hat or horn)
        if vowels[number] in _HATTED:
            return at == number
    if len(vowels) == 1 or (vowels[:2] in _EITHER and at < 2):
        return True
    if final is not None:
        return at == len(vowels) - 1
    return at == (1 if len(vowels) == 3 else 0)


def _only_ours(word: str) -> bool:
    return not word.isascii() and _VIETNAMESE_LETTERS.search(word) is not None


def _letters(word: str) -> bool:
    """Whether ``word``, no stop word of Vietnamese's (those count already), holds a
    letter Vietnamese alone writes."""
    if word.isascii() or VIETNAMESE in LISTS_OF.get(word, ()):
        return False
    return _VIETNAMESE_LETTERS.search(word) is not None


def _marked(word: str) -> bool:
    """Whether ``word``, a syllable, shows Vietnamese by an accent it shares with French
    and Portuguese: in no stop list, no letter Vietnamese alone writes (counted), no
    Portuguese nasal vowel."""
    if word.isascii() or word in STOP_WORDS or word in AMBIGUOUS:
        return False
    return _VIETNAMESE_LETTERS.search(word) is None and _NASAL.search(word) is None
