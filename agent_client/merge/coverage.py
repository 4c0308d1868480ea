"""How much of one text another holds, word by word: the checks on a model's merge.

A merge must add the entry to a note and keep what the note held. A model may say it
did while it wrote unrelated text (the entry then nowhere, the merge "successful") or
wrote back a note's frontmatter alone (forty facts gone). Both are told by the words
of a text: those of the entry among the lines the merge added, those of the note as it
was read among the note as written. Words, not bytes: a merge rewords, reorders and
reformats (a list item for a sentence), and still holds the same words.

A word is a run of letters, digits and marks, folded (NFKC, case); in the scripts
written without spaces (Han, kana, Thai, Lao, Myanmar, Khmer) each pair of characters
of a run is one, so a reworded sentence still shares most of them. An entry's word is
found by its stem at the start of a word of the added text (its first three fifths,
four letters at least: ``aller`` of ``allergic`` in ``Allergies:``, ``페니실`` of
``페니실린에``; not ``use`` of ``user`` in ``used``), or whole inside one (``allergie`` in
``Penicillinallergie``), an Arabic word without its article; its short words (fewer
than four letters, two in Hangul and Ethiopic: ``the``, ``is``) are not counted.
"""

from __future__ import annotations

import math
import re
import unicodedata

import re2

from shared.frontmatter import split_frontmatter

# A note whose body has fewer words is not judged (a short note may well be rewritten)
MIN_NOTE_WORDS = 20
# The share of a note's words a merge must keep, and of an entry's words it must add
MIN_KEPT = 0.5
MIN_LENGTH = 1 / 3  # and of its length
MIN_ADDED = 1 / 4
MIN_ENTRY_WORDS = 3  # an entry of fewer words is not judged
MIN_EXPLAINED = 2  # an entry's words a note's added lines hold, for the note to be its

_WORD = re2.compile(r"[\pL\pN\pM]+")
_HAN = re.compile("[\u3005\u3041-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_SYLLABIC = re.compile("[\uac00-\ud7a3\u1200-\u137f]")  # Hangul, Ethiopic
_LIST_MARK = re.compile(r"^\s*(?:[-*+>]|\d+[.)])\s+")
_SPACELESS = re.compile(
    "[\u3005-\u3007\u3041-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\U00020000-\U0003134f]+"
)


def words(text: str) -> set[str]:
    """The distinct words of ``text`` (see the module's note)."""
    found: set[str] = set()
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        last = 0
        for run in _SPACELESS.finditer(word):
            if run.start() > last:
                found.add(word[last : run.start()])
            chars = run.group()
            found.update(chars[i : i + 2] for i in range(max(len(chars) - 1, 1)))
            last = run.end()
        if last < len(word):
            found.add(word[last:])
    return found


def kept_share(read: str, written: str) -> float | None:
    """The share of the words of the body of a note as ``read`` that the body as
    ``written`` still holds; None for a note too short to judge."""
    before = words(split_frontmatter(read)[1])
    if len(before) < MIN_NOTE_WORDS:
        return None
    return len(before & words(split_frontmatter(written)[1])) / len(before)


def length_share(read: str, written: str) -> float | None:
    """The length of the body as ``written`` over its length as ``read`` (white space
    runs as one); None for a note too short to judge. Words alone miss a running log
    cut to its last quarter: its lines share most of their words."""
    before = split_frontmatter(read)[1]
    if len(words(before)) < MIN_NOTE_WORDS:
        return None
    return len(" ".join(split_frontmatter(written)[1].split())) / len(" ".join(before.split()))


def added_lines(read: str, written: str) -> str:
    """The lines of ``written`` (its frontmatter too: an entry may be a property) that
    ``read`` did not hold, a list item's marker aside (a list re-marked adds nothing)."""
    before = {_line_key(line) for line in read.splitlines()}
    return "\n".join(line for line in written.splitlines() if _line_key(line) not in before)


def _line_key(line: str) -> str:
    return _LIST_MARK.sub("", line).strip()


def entry_share(entry: str, added: str) -> float | None:
    """The share of the words of ``entry`` that ``added`` holds, each found by its stem
    at a word's start, or whole inside a word (a compound); None for an entry of too
    few words to judge."""
    counts = _entry_words_held(entry, added)
    return None if counts is None else counts[0] / counts[1]


def explains(entry: str, added: str) -> bool:
    """Whether the lines one note gained may be the entry's: they hold a quarter of its
    words (``MIN_ADDED``), or two at least (an entry merged into two notes, each part
    in its own); an entry too short to judge explains any. Never stricter than
    ``entry_share`` of a merge into one note, so a merge it takes is never refused."""
    counts = _entry_words_held(entry, added)
    if counts is None:
        return True
    found, wanted = counts
    return found >= min(MIN_EXPLAINED, math.ceil(wanted * MIN_ADDED))


def _entry_words_held(entry: str, added: str) -> tuple[int, int] | None:
    """How many of the words of ``entry`` ``added`` holds, of how many; None for an
    entry of too few words to judge."""
    wanted = {part for word in words(entry) if _counted(word) for part in _han_apart(word)}
    if len(wanted) < MIN_ENTRY_WORDS:
        return None
    held = {part for word in words(added) for part in _han_apart(word)}
    return sum(_held(word, held) for word in wanted), len(wanted)


def _han_apart(word: str) -> list[str]:
    """A pair of Han or kana as its two characters (a reworded Chinese or Japanese
    sentence keeps its characters more than their pairs: ``住在北京`` as ``居住地：北京``)."""
    return list(word) if _HAN.fullmatch(word) else [word]


def _held(word: str, held: set[str]) -> bool:
    if _SPACELESS.fullmatch(word):
        return word in held
    stem, whole = _stem(word), _without_article(word)
    return any(other.startswith(stem) or (len(whole) >= 5 and whole in other) for other in held)


def _counted(word: str) -> bool:
    """Whether an entry's word counts: a pair of a spaceless script, or a word of four
    letters or more (two in Hangul and Ethiopic, whose syllables are dense)."""
    if _SPACELESS.fullmatch(word) or (len(word) >= 2 and _SYLLABIC.search(word)):
        return True
    return len(word) >= 4


def _without_article(word: str) -> str:
    return word[2:] if word.startswith("ال") and len(word) >= 5 else word


def _stem(word: str) -> str:
    """The part of a word that its inflections keep: all of a short one (``user`` is
    not in ``used``), else its first three fifths, four letters at least."""
    word = _without_article(word)
    shortest = 2 if _SYLLABIC.search(word) else 4
    return word[: max(shortest, math.ceil(len(word) * 3 / 5))]
