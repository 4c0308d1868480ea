"""Which languages a question shows, for the stop words that depend on it (``keywords``).

The stop word lists (``stop_words``) are one set for every language; three kinds of
word in them are read by the question's language. An ambiguous word (``min``: Swedish
"my", English "minimum") is a stop word only where the question shows that language
(``Var är min katt?``); so is an Arabic-script stop word spelled with the letters its
writers mix (``stop_word_variants``: ``علی`` for Arabic ``على``, but Persian for Ali),
and Persian's and Urdu's typed wholly on an Arabic keyboard show their language where
they outnumber every language's stop words as written (``يه كس كي كتاب هي؟``: Urdu).
A stop word of other languages that a Vietnamese question writes as a word of its own,
a syllable written without marks (``di`` of ``di động``, mobile: Indonesian "at"; ``ti
vi``, television: Italian pronouns; ``in`` of ``máy in``, printer; ``an`` of ``an
toàn``, safe), stays a keyword where the question is Vietnamese (``vietnamese_words``:
its stop words, ``của``, ``tôi``, ``ở``, its letters, ơ, ư, đ, ộ, and the accents of a
question written wholly in its syllables show it), unless the question shows that
language in other words (``Where is the phở in Hà Nội?``). A question showing no
language keeps the first two kinds as keywords, the third not.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from indexer.index.arabic_article import without_article
from indexer.jobs.stop_word_variants import ARABIC_KEYBOARD, OTHER_KEYBOARD, VARIANTS, VARIANTS_OF
from indexer.jobs.stop_words import AMBIGUOUS, AMBIGUOUS_OF, LISTS_OF, STOP_WORDS
from indexer.jobs.stop_words_scripts import SISTERS
from indexer.jobs.vietnamese_words import (
    EVERY_LANGUAGE,
    VIETNAMESE,
    vietnamese_count,
    vietnamese_kept,
    vietnamese_names,
)

_NONE: frozenset[str] = frozenset()
# English has no ambiguous list: the ambiguous words are mostly English ones (go, ten,
# one, die, era), which an English question asks about; a tie with English is no
# evidence against them (``go to market``: Polish "him" and "to")
_ENGLISH = "en"
# The words read by the question's language: ambiguous ones, and Arabic-script stop
# words as their writers also spell them
_READ = AMBIGUOUS | frozenset(VARIANTS)
# (once: their union, built for each question, took half of ``extract_keywords``'s time)
_LISTED_OR_READ = STOP_WORDS | _READ


@dataclass(frozen=True)
class Shown:
    """What a question's language makes of the words of the stop lists: ``stops``, the
    ambiguous ones (and the variant spellings) that are its stop words; ``kept``, other
    languages' stop words that it writes as words (Vietnamese ``di``); ``named``, its
    own stop words that are words where capitalized inside a sentence, a name's
    syllables (Vietnamese ``Ai Cập``, Egypt)."""

    stops: frozenset[str] = _NONE
    kept: frozenset[str] = _NONE
    named: frozenset[str] = _NONE


NOTHING_SHOWN = Shown()


def shown_stops(words: Iterable[str], names: Iterable[str] = ()) -> Shown:
    """What a question's lower-cased ``words`` show (``Shown``); ``names``, those written
    with a capital inside a sentence, show no language by their accents
    (``vietnamese_words``). The question's languages are the lists holding the most of its
    (unambiguous) stop words, at least one, a word written as Vietnamese alone writes
    counting for Vietnamese; a tie goes to those holding the most of its ambiguous words
    too (``Dove dorme il gatto?``: Italian, whose ``dove`` is, not French: ``il`` is
    both), unless English is tied or nothing else would be left to search for
    (``_languages``). A word read by the language (ambiguous, or a variant spelling) is a
    stop word when each of the question's languages stops it: a tie between sister
    languages drops what both stop (``كي``, Persian and Urdu ``کی`` typed on an Arabic
    keyboard, in ``كي آمد یا رفت؟``), not what one asks about (``यस हप्ता के गर्ने?``
    ties Nepali and Hindi on ``के``: Nepali's ``यस``, this, is Hindi's yes).
    ``Var är min katt?`` is Swedish (``är``), so ``var`` and ``min`` go; ``what is the
    min value of var x`` is English, and ``min katt`` shows nothing: they stay. A stop
    word of two lists counts for both (``er``: Danish and German)."""
    present = {_nfc(word) for word in words}
    # (a single Latin letter, a, i, o, d, is of many languages, or a variable's name; one
    # of another script is its language's word: Italian è, Vietnamese ở)
    present = {word for word in present if len(word) > 1 or not word.isascii()}
    named = {_nfc(name) for name in names}
    shown_by = present - EVERY_LANGUAGE  # (``ok`` shows no language: ``ok máy in màu``)
    counts = Counter(lang for word in shown_by for lang in LISTS_OF.get(word, ()))
    counts[VIETNAMESE] += vietnamese_count(present, named)
    languages = _languages(+_typed_on_arabic_keyboard(counts, shown_by), present)
    if not languages:
        return NOTHING_SHOWN
    stops = frozenset(
        word
        for word in _READ.intersection(present)
        if all(_stopped(word, lang) for lang in languages)
    )
    kept = vietnamese_kept(present, languages, named)
    return Shown(stops, kept, vietnamese_names(named, languages))


def _typed_on_arabic_keyboard(counts: Counter[str], words: set[str]) -> Counter[str]:
    """``counts`` with Persian's and Urdu's stop words as an Arabic keyboard types them
    (``stop_word_variants.ARABIC_KEYBOARD``: ``يه كس كي كتاب هي؟`` is Urdu's ``یہ کس کی
    کتاب ہے؟``, whose ``هي`` is Arabic's she), where the question is typed wholly on one,
    writes no Arabic article or ``ة`` (``يا ولي العهد``: Arabic, not Persian's ``یا ولی``),
    and they outnumber the stop words any language has as written: an Arabic question
    shows more Arabic (``هو كي يكون هنا``: Arabic's ``كي``, so that, is Persian's ``کی``)."""
    typed = Counter(
        lang
        for word in words
        for lang in ARABIC_KEYBOARD.get(word, _NONE)
        if lang not in LISTS_OF.get(word, ())
    )
    if not typed or any(OTHER_KEYBOARD.search(word) or _arabic_signs(word) for word in words):
        return counts
    combined = counts + typed
    return combined if max(combined.values()) > max(counts.values(), default=0) else counts


def _arabic_signs(word: str) -> bool:
    """Whether ``word`` is written as Arabic alone writes: with its article (``العهد``)
    or its ``ة``, which Persian and Urdu spell with their ``ه`` or ``ت``."""
    return word.endswith("ة") or without_article(word) != word


def _stopped(word: str, lang: str) -> bool:
    """Whether ``lang`` stops ``word``: listed, ambiguous or spelled as its writers do."""
    return (
        lang in LISTS_OF.get(word, ())
        or word in AMBIGUOUS_OF.get(lang, _NONE)
        or word in VARIANTS_OF.get(lang, _NONE)
    )


def _languages(counts: Counter[str], present: set[str]) -> frozenset[str]:
    """The languages holding the most of the question's words (``counts``); among
    several, those holding the most of its ambiguous ones (in ``present``) too, unless
    English is one of them, or the question has no other word to search for (``la
    cosa``: Spanish "the thing", or Italian), or they are sisters sharing a script
    (``stop_words_scripts.SISTERS``), whose ambiguous words are each other's content
    words: ``देरी का कारण`` (the delay's reason) is Hindi or Marathi, whose ``कारण``
    (because) is Hindi's reason, and ``تب یا سرفه؟`` (fever or cough?) Persian or Urdu."""
    if not counts:
        return _NONE
    most = max(counts.values())
    tied = [lang for lang, count in counts.items() if count == most]
    searched = not present <= _LISTED_OR_READ
    if len(tied) > 1 and _ENGLISH not in tied and searched and not _sisters(tied):
        held = {lang: len(AMBIGUOUS_OF.get(lang, _NONE) & present) for lang in tied}
        tied = [lang for lang in tied if held[lang] == max(held.values())]
    return frozenset(tied)


def _sisters(languages: list[str]) -> bool:
    return any(sisters.issuperset(languages) for sisters in SISTERS)


def _nfc(word: str) -> str:
    return word if word.isascii() else unicodedata.normalize("NFC", word)
