"""How much of one text another holds, word by word: the checks on a model's merge.

A merge must add the entry to a note and keep what the note held. A model may say it
did while it wrote unrelated text (the entry then nowhere, the merge "successful") or
wrote back a note's frontmatter alone (forty facts gone). Both are told by the words
of a text: those of the entry the merge added (the note holds them more often than it
did: a note reworded line by line holds its own words in every line it changed, and
they are not the entry's), those of the note as it was read among the note as written.
Words, not bytes: a merge rewords, reorders and reformats (a list item for a
sentence), and still holds the same words.

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
from collections import Counter
from collections.abc import Iterator

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
    return set(_tokens(text))


def _tokens(text: str) -> Iterator[str]:
    """Every word of ``text``, as often as it is there (see the module's note)."""
    for word in _WORD.findall(unicodedata.normalize("NFKC", text).casefold()):
        last = 0
        for run in _SPACELESS.finditer(word):
            if run.start() > last:
                yield word[last : run.start()]
            chars = run.group()
            yield from (chars[i : i + 2] for i in range(max(len(chars) - 1, 1)))
            last = run.end()
        if last < len(word):
            yield word[last:]


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


def entry_share(entry: str, written: str, read: str = "") -> float | None:
    """The share of the words of ``entry`` that a note as ``written`` holds more often
    than as ``read`` (each found by its stem at a word's start, or whole inside a word:
    a compound); None for an entry of too few words to judge. More often, not only in
    a changed line: a note reworded line by line still holds its own words, and they
    are not the entry's (a staging server's entry and a note of build servers)."""
    return merged_share(entry, [(read, written)])


def merged_share(entry: str, notes: list[tuple[str, str]]) -> float | None:
    """``entry_share`` of a merge into several notes, each ``(read, written)``: the
    entry's words any of them gained; None for an entry too short to judge."""
    wanted = _wanted(entry)
    if wanted is None:
        return None
    edit = _edit_size(entry)
    found = set().union(*(_gained(wanted, read, written, edit) for read, written in notes))
    return len(found) / len(wanted)


def explains(entry: str, written: str, read: str = "") -> bool:
    """Whether what one note gained (``read`` as ``written``) may be the entry's: a
    quarter of its words (``MIN_ADDED``), or two at least (an entry merged into two
    notes, each part in its own); an entry too short to judge explains any. Never
    stricter than ``entry_share`` of a merge into one note: it is never refused."""
    wanted = _wanted(entry)
    if wanted is None:
        return True
    found = len(_gained(wanted, read, written, _edit_size(entry)))
    return found >= min(MIN_EXPLAINED, math.ceil(len(wanted) * MIN_ADDED))


def _wanted(entry: str) -> set[str] | None:
    """The words of ``entry`` a merge must add (Han and kana by character); None for
    an entry of too few to judge."""
    wanted = {part for word in words(entry) if _counted(word) for part in _han_apart(word)}
    return None if len(wanted) < MIN_ENTRY_WORDS else wanted


def _gained(wanted: set[str], read: str, written: str, edit: int) -> set[str]:
    """The words of ``wanted`` that ``written`` holds more often than ``read``: told by
    the lines one holds more often than the other (the lines both hold cancel out; a
    long note is not read word by word for its one line added). Lines changed that held
    at most ``edit`` words (the entry's) are an edit in place: its words are in the
    lines it changed (``deadline: 2027-01-15`` made ``2027-02-01`` keeps ``deadline``);
    lines reworded beyond that hold the note's own words, not the entry's."""
    lines_read = Counter(map(_line_key, read.splitlines()))  # (a list re-marked: none)
    lines_written = Counter(map(_line_key, written.splitlines()))
    added = _counts("\n".join((lines_written - lines_read).elements()))
    removed = _counts("\n".join((lines_read - lines_written).elements()))
    if len(removed) <= edit:
        removed = Counter()
    in_added, in_removed = "\n".join(added), "\n".join(removed)
    return {
        word for word in wanted if _held(word, added, in_added) > _held(word, removed, in_removed)
    }


def _edit_size(entry: str) -> int:
    """How many words the lines a merge changes may hold to be an edit in place: twice
    the entry's (a fact's line holds words around the fact: ``第3条：构建``)."""
    return 2 * len(_counts(entry))


def _counts(text: str) -> Counter[str]:
    """How often each word is in ``text``; Han and kana by character (as an entry's
    are sought: ``_han_apart``), the other unspaced scripts by pair."""
    counts = Counter(token for token in _tokens(text) if not _HAN.fullmatch(token))
    for run in _HAN.finditer(unicodedata.normalize("NFKC", text).casefold()):
        counts.update(run.group())
    return counts


def _han_apart(word: str) -> list[str]:
    """A pair of Han or kana as its two characters (a reworded Chinese or Japanese
    sentence keeps its characters more than their pairs: ``住在北京`` as ``居住地：北京``)."""
    return list(word) if _HAN.fullmatch(word) else [word]


def _held(word: str, counts: Counter[str], joined: str) -> int:
    """How often ``word`` of an entry is in a text of word ``counts`` (``joined``: its
    words on lines, to pass by at once a word not in them, as most are)."""
    if _SPACELESS.fullmatch(word):
        return counts[word]
    stem, whole = _stem(word), _without_article(word)
    total, at = 0, joined.find(stem)
    while at >= 0:  # each word holding the stem (it is in every word found), once
        begin = joined.rfind("\n", 0, at) + 1
        stop = joined.find("\n", at)
        stop = len(joined) if stop < 0 else stop
        other = joined[begin:stop]
        if other.startswith(stem) or (len(whole) >= 5 and whole in other):
            total += counts[other]
        at = joined.find(stem, stop)
    return total


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
