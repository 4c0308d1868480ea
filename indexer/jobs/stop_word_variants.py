"""Arabic-script stop words as their writers also type them, for the stop words that
depend on the question's language (``question_language``).

Search reads ی, ى and ي as one letter, and ک and ك (``shared.reader_folds.ARABIC_FOLDS``);
the stop words are compared as written, since a word folded so is often another
language's: Arabic ``على`` (on) is Persian ``علی`` (Ali). So a stop word spelled with a
letter of its sister's keyboard is a stop word of its language where the question
shows that language, as an ambiguous one is (``stop_words.AMBIGUOUS_LISTS``): Arabic
typed on a Persian keyboard (ی for ي and ى, ک for ك: ``علی`` in ``هل القطة علی
الطاولة؟``, but Ali in ``علی کجاست؟``); Persian and Urdu typed on an Arabic keyboard (ي
or ى for ی, ك for ک: ``كي``, ``كيا``, ``نيچے``), and Urdu's own letters as a keyboard
without them types them (ه for ہ and ھ, a yeh for ے, ن for ں: ``يه``, ``بهي``, ``سي``,
``كهان``); a question typed wholly so shows its language by them (``ARABIC_KEYBOARD``). The
letters a language's writers mix within it (Arabic's ى and ي, ة and ه, the alef with
or without its hamza) are not folded, since the words they make are its own too
(``علي``, the name Ali, and ``على``; ``امام``, an imam, and ``أمام``, before): the
common misspellings of its stop words are listed as words (``فى``, ``هذة``, ``انتم``).
"""

from __future__ import annotations

import re

from indexer.jobs.stop_words import AMBIGUOUS, AMBIGUOUS_OF, LISTS_OF, STOP_WORDS

# Each language's letters -> the letters its sister's keyboard types for them
_TYPED_FOR: dict[str, dict[str, str]] = {
    "ar": {"ي": "ی", "ى": "ی", "ك": "ک"},
    "fa": {"ی": "يى", "ک": "ك"},
    # (ہ and ھ: Arabic's one he; ے, which neither Arabic nor Persian writes, as their yeh:
    # ``يه`` for ``یہ``, ``تها`` for ``تھا``, ``سي`` for ``سے``; search folds none of them)
    "ur": {"ی": "يى", "ک": "ك", "ہ": "ه", "ھ": "ه", "ے": "يىی", "ں": "ن"},
}


# The sisters typed on an Arabic keyboard, and the letters none types (U+0671-U+06FF:
# پ چ ژ ک گ ں ھ ہ ی ے ٹ ڈ ڑ, Persian's digits)
_SISTERS_TYPED = ("fa", "ur")
OTHER_KEYBOARD = re.compile("[\u0671-\u06ff]")


def _spellings(word: str, typed_for: dict[str, str]) -> list[str]:
    """``word`` with each of its letters as written or as the sister's keyboard types it
    (``typed_for``): every combination (a word has few such letters)."""
    spellings = [""]
    for char in word:
        options = char + typed_for.get(char, "")
        spellings = [head + option for head in spellings for option in options]
    return spellings


def _variants() -> dict[str, frozenset[str]]:
    """Each other spelling of a listed (or ambiguous) stop word of Arabic, Persian or
    Urdu -> the languages whose stop word it spells; no spelling listed as a word."""
    langs: dict[str, set[str]] = {}
    for lang, typed_for in _TYPED_FOR.items():
        words = {w for w, of in LISTS_OF.items() if lang in of} | AMBIGUOUS_OF.get(lang, set())
        for word in words:
            for spelling in _spellings(word, typed_for):
                if spelling not in STOP_WORDS and spelling not in AMBIGUOUS:
                    langs.setdefault(spelling, set()).add(lang)
    return {spelling: frozenset(of) for spelling, of in langs.items()}


def _arabic_keyboard() -> dict[str, frozenset[str]]:
    """Each listed stop word of Persian or Urdu as an Arabic keyboard types it, none of
    their own letters left (``يه``, ``كهان``, ``هو`` for ``یہ``, ``کہاں``, ``ہو``) -> those
    languages; Arabic's stop words among the spellings too (``هو``, he). A word holding
    a letter the keyboard has no stand-in for (``گ``, ``پ``) has no such spelling."""
    langs: dict[str, set[str]] = {}
    for lang in _SISTERS_TYPED:
        words = (w for w, of in LISTS_OF.items() if lang in of)
        for word in words:
            for spelling in _spellings(word, _TYPED_FOR[lang]):
                if OTHER_KEYBOARD.search(spelling) is None and spelling != word:
                    langs.setdefault(spelling, set()).add(lang)
    return {spelling: frozenset(of) for spelling, of in langs.items()}


VARIANTS = _variants()
VARIANTS_OF: dict[str, frozenset[str]] = {
    lang: frozenset(spelling for spelling, of in VARIANTS.items() if lang in of)
    for lang in _TYPED_FOR
}
# (``question_language``: a question typed wholly on an Arabic keyboard is read by them)
ARABIC_KEYBOARD = _arabic_keyboard()
