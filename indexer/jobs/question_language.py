"""Which languages a question shows, for the stop words that depend on it (``keywords``).

The stop word lists (``stop_words``) are one set for every language; two kinds of word
in them are read by the question's language. An ambiguous word (``min``: Swedish "my",
English "minimum") is a stop word only where the question shows that language (``Var är
min katt?``). A stop word of other languages that a Vietnamese question writes as a word
of its own, a syllable written without marks (``di`` of ``di động``, mobile: Indonesian
"at"; ``ti vi``, television: Italian pronouns; ``in`` of ``máy in``, printer), stays a
keyword where the question is Vietnamese: its stop words (``của``, ``tôi``, ``ở``) and
its letters (ơ, ư, đ, a hook or a dot under a vowel: ``động``) show it. A question
showing no language keeps both kinds as they are (the first a keyword, the second not).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from indexer.jobs.stop_words import AMBIGUOUS, AMBIGUOUS_OF, LISTS_OF, STOP_WORDS

_NONE: frozenset[str] = frozenset()
_VIETNAMESE = "vi"
# Letters Vietnamese alone of the listed languages writes: ơ, ư, đ, ĩ, ũ and the vowels
# with a hook above or a dot below (U+1EA0-U+1EF9: ả, ạ, ộ, ở). Not à, á, ã, ê, ô, ă:
# French's, Portuguese's, Romanian's too.
_VIETNAMESE_LETTERS = re.compile("[\u01a1\u01b0\u0111\u0129\u0169\u1ea0-\u1ef9]")
# A Vietnamese syllable without marks: an initial consonant, a vowel (or two or three:
# oa, uy, oai) and a final consonant, each as Vietnamese spells them (``di``, ``ti``,
# ``in``, ``tai``, ``an``, ``the``: vải the, gauze; not ``and``, ``you``, ``is``)
_SYLLABLE = re.compile(
    "(?:ngh|ng|nh|ch|gh|gi|kh|ph|qu|th|tr|[bcdghklmnprstvx])?"
    "(?:oai|oay|oao|oeo|uay|uya|uyu|uoi|ai|ao|au|ay|eo|ia|iu|oa|oe|oi|ua|ue|ui|uo|uy|[aeiouy])"
    "(?:ch|ng|nh|[cmnpt])?"
)
# English has no ambiguous list: the ambiguous words are mostly English ones (go, ten,
# one, die, era), which an English question asks about; a tie with English is no
# evidence against them (``go to market``: Polish "him" and "to")
_ENGLISH = "en"


@dataclass(frozen=True)
class Shown:
    """What a question's language makes of the words of the stop lists: ``stops``, the
    ambiguous ones that are its stop words; ``kept``, other languages' stop words that
    it writes as words (Vietnamese ``di``)."""

    stops: frozenset[str] = _NONE
    kept: frozenset[str] = _NONE


NOTHING_SHOWN = Shown()


def shown_stops(words: Iterable[str]) -> Shown:
    """What a question's lower-cased ``words`` show (``Shown``). The question's
    languages are the lists holding the most of its (unambiguous) stop words, at least
    one, a word of Vietnamese letters counting for Vietnamese; a tie goes to those
    holding the most of its ambiguous words too (``Dove dorme il gatto?``: Italian,
    whose ``dove`` is, not French: ``il`` is both), unless English is tied or nothing
    else would be left to search for (``_languages``). An ambiguous
    word is a stop word when it is ambiguous in each of the question's languages.
    ``Var är min katt?`` is Swedish (``är``), so ``var`` and ``min`` go; ``what is the
    min value of var x`` is English, and ``min katt`` shows nothing: they stay. A stop
    word of two lists counts for both (``er``: Danish and German)."""
    present = {w if w.isascii() else unicodedata.normalize("NFC", w) for w in words}
    # (a single Latin letter, a, i, o, d, is of many languages, or a variable's name; one
    # of another script is its language's word: Italian è, Vietnamese ở)
    present = {word for word in present if len(word) > 1 or not word.isascii()}
    counts = Counter(lang for word in present for lang in LISTS_OF.get(word, ()))
    counts[_VIETNAMESE] += sum(1 for word in present if _vietnamese_letters(word))
    languages = _languages(+counts, present)
    if not languages:
        return NOTHING_SHOWN
    stops = AMBIGUOUS.intersection(present)
    for lang in languages:
        stops &= AMBIGUOUS_OF.get(lang, _NONE)
    kept = _NONE
    if _VIETNAMESE in languages:
        kept = frozenset(
            word
            for word in STOP_WORDS.intersection(present)
            if languages.isdisjoint(LISTS_OF[word]) and _SYLLABLE.fullmatch(word)
        )
    return Shown(stops, kept)


def _languages(counts: Counter[str], present: set[str]) -> frozenset[str]:
    """The languages holding the most of the question's words (``counts``); among
    several, those holding the most of its ambiguous ones (in ``present``) too, unless
    English is one of them, or the question has no other word to search for (``la
    cosa``: Spanish "the thing", or Italian)."""
    if not counts:
        return _NONE
    most = max(counts.values())
    tied = [lang for lang, count in counts.items() if count == most]
    searched = not present <= STOP_WORDS | AMBIGUOUS
    if len(tied) > 1 and _ENGLISH not in tied and searched:
        held = {lang: len(AMBIGUOUS_OF.get(lang, _NONE) & present) for lang in tied}
        tied = [lang for lang in tied if held[lang] == max(held.values())]
    return frozenset(tied)


def _vietnamese_letters(word: str) -> bool:
    """Whether ``word``, no stop word of Vietnamese's (those count already), holds a
    letter Vietnamese alone writes."""
    if word.isascii() or _VIETNAMESE in LISTS_OF.get(word, ()):
        return False
    return _VIETNAMESE_LETTERS.search(word) is not None
