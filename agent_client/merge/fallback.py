"""Deterministic knowledge merge, used when no LLM is configured or the LLM failed.

Find the best existing note (slug, then exact frontmatter title, then a search hit whose
title has no word of its own but function words and forms of the other's words),
append a dated section with the entry's content; or create a new note with clean
frontmatter, the entry's content in a dated section there too (the first fact of a topic
has its date as the later ones). Re-submitting the same entry does not add its content
twice: an entry is already there when a section of the note *is* its content
(``holds_entry``), never because its words occur somewhere in the file (a one-word entry
such as "go" is in the title, the heading and the slug of its own note), and only when
the note's history has a write of this entry's id (``merged_before``): another entry of
the same text gets a section of its own, else the undo of the first one took its fact
away with the note.
"""

from __future__ import annotations

import asyncio
import posixpath
import random
import re
import unicodedata
from datetime import tzinfo
from typing import Any

from agent_client.merge.confirmation import Confirmation
from agent_client.merge.images import ImageFile, copy_images
from agent_client.merge.journal import WriteJournal
from agent_client.merge.paths import UNSPACED_SCRIPTS, note_path_for, title_key
from agent_client.notes import ATX_HEADING, render_note, split_note, unreadable_block
from agent_client.reasons import entry_reason
from agent_client.vault import Vault
from shared.body_title import title_from_body
from shared.errors import (
    ConflictError,
    InvalidArgumentError,
    InvalidFrontmatterError,
    NotFoundError,
    TooLargeError,
    VaultError,
)
from shared.frontmatter import parse_yaml_block, string_list
from shared.images import asset_folder
from shared.models import MemoryEntry
from shared.workspace import ITEMS_DIR

MIN_TITLE_SIMILARITY = 0.6


MAX_SLUG_TWINS = 100
# A write that lost a race is tried again: a create that lost to a note of another title
# goes to the next name, where it may lose once more, then merges into the fresh text.
# Writers of other agents merging into one note at once keep winning in turn: three
# tries back to back lost 5 to 8 of 45 entries of three writers; each try after a lost
# one waits a random while, up to twice as long each time (2.6 s in all at most).
MERGE_ATTEMPTS = 10
RETRY_WAIT_SECONDS = (0.01, 0.5)  # the first longest wait, and the cap
MAX_HISTORY_VERSIONS = 1000  # the server's cap: an older write of the entry is not seen


async def find_best_note(vault: Vault, entry: MemoryEntry) -> str | None:
    """The existing note this entry belongs to, or None."""
    wanted = title_key(entry.title)
    slug_path = slug_path_for(entry.title)
    if await _titled(vault, slug_path, wanted):
        return slug_path
    try:
        titles = await vault.grep(r"^title:", path=ITEMS_DIR, limit=1000)
    except NotFoundError:
        return None  # no items/ folder yet: nothing to merge into
    close: list[tuple[float, str, str]] = []  # (similarity, path, title key)
    for match in titles["matches"]:
        # a body line (a YAML example in a code block) reads as a title too: only the
        # note's own title counts (``_titled``)
        key = _title_of(match["text"])
        if key == wanted and await _titled(vault, match["path"], wanted):
            return match["path"]
        score = similarity(key, wanted) if key else 0.0
        if score >= MIN_TITLE_SIMILARITY:
            close.append((score, match["path"], key or ""))
    # The titles close enough ("Python tips" for "Python tip": a search for every word
    # of the entry's title does not find that note), the closest first.
    for _, path, key in sorted(close, key=lambda c: -c[0]):
        if await _titled(vault, path, key):
            return path
    if await vault.has_search():
        try:
            hits = await vault.search(entry.title, limit=5, path=ITEMS_DIR)
        except VaultError as exc:
            if exc.code == "indexer_offline":
                raise
            return None  # a title the search syntax refuses: no search-based match
        for hit in hits["results"]:
            if similarity(title_key(hit["title"]), wanted) >= MIN_TITLE_SIMILARITY:
                return hit["path"]
    return None


async def new_note_path(vault: Vault, title: str) -> str:
    """Where a new note for ``title`` goes: its slug path, unless a note of another title
    holds it ("C#" and "C++" share a slug); then ``<slug>-2.md``, ``-3``...

    ``InvalidArgumentError`` (not ``conflict``: nothing changed meanwhile, and trying
    again finds the same) when all ``MAX_SLUG_TWINS`` names are taken."""
    wanted = title_key(title)
    stem = slug_path_for(title).removesuffix(".md")
    for number in range(1, MAX_SLUG_TWINS + 1):
        path = f"{stem}.md" if number == 1 else f"{stem}-{number}.md"
        if await _titled(vault, path, wanted) is not False:
            return path
    raise InvalidArgumentError(
        f"{stem}.md to {stem}-{MAX_SLUG_TWINS}.md hold notes of other titles: give the entry"
        " a title with more words of its own, or move some of those notes into a folder"
    )


def slug_path_for(title: str) -> str:
    """``note_path_for``, with a flag as its letters ("Travel 🇯🇵": ``travel-jp``), and a
    title without a letter or digit ("🎉", "?!") named by its symbols (``party-popper``,
    ``question-mark-exclamation-mark``): each such title went to ``note.md``,
    ``note-2.md``..., names that say nothing, and the 101st was refused."""
    text = _FLAGS.sub(lambda flag: f" {_flag_letters(flag[0])} ", title)
    path = note_path_for(text)
    if path == note_path_for("note") and "note" not in title_key(text).split():
        return note_path_for(symbol_names(text))  # (no names either: still note.md)
    return path


# A flag: two regional indicators (🇯🇵 is J P), or a black flag, tag letters and a cancel
# tag (🏴 g b s c t: Scotland).
_FLAGS = re.compile(
    "[\U0001f1e6-\U0001f1ff]{2}|\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]+\U000e007f"
)
_SKIN_TONES = range(0x1F3FB, 0x1F400)


def _flag_letters(flag: str) -> str:
    return "".join(
        chr(ord(c) - 0x1F1E6 + ord("a")) if ord(c) < 0xE0000 else chr(ord(c) - 0xE0000)
        for c in flag.strip("\U0001f3f4\U000e007f")
    )


def symbol_names(title: str) -> str:
    """The Unicode names of the characters of ``title`` (``PARTY POPPER``), without what
    only shapes the one before (variation selectors, skin tones, joiners, marks) and
    spaces; a character this Python has no name for by its code (``u1fa77``)."""
    names = [
        unicodedata.name(char, f"u{ord(char):04x}")
        for char in title
        if not char.isspace()
        and unicodedata.category(char) not in ("Cf", "Cc", "Mn", "Me")
        and ord(char) not in _SKIN_TONES
    ]
    return " ".join(names)


async def _titled(vault: Vault, path: str, wanted: str) -> bool | None:
    """Whether the note at ``path`` is the one titled ``wanted``; None when there is no
    note there. A note without a frontmatter title (a person's) is titled as the vault
    titles it: its first ``# `` heading, else its file name; a note headed "Shopping list"
    in ``note.md`` is no note of "🎉"."""
    try:
        current = await vault.read(path)
    except NotFoundError:
        return None
    except VaultError as exc:
        if exc.code == "indexer_offline":
            raise
        return False  # there, but no note this entry can go into (a folder, too large...)
    if current.get("encoding", "utf-8") != "utf-8":
        return False  # bytes that are not UTF-8 (its base64 would be merged into)
    if unreadable_block(str(current.get("content", ""))):
        return False  # a block that cannot be read: nothing can be added to it
    meta, body = split_note(str(current.get("content", "")))
    title = meta.get("title")
    if title is None or title == "":
        title = title_from_body(body) or posixpath.basename(path).removesuffix(".md")
    return title_key(str(title)) == wanted


def _title_of(line: str) -> str | None:
    """The title key of a ``title: ...`` frontmatter line, read by the shared YAML reader."""
    try:
        value = parse_yaml_block(line).get("title")
    except InvalidFrontmatterError:
        return None
    return title_key(str(value)) if value is not None else None


def similarity(a: str, b: str) -> float:
    """How surely title keys ``a`` and ``b`` name one topic, from 0 to 1.

    Titles that hold other numbers are different notes ("Meeting 2026-11-01" and
    "Meeting 2026-11-02"; "第一季度" and "第二季度"). Titles written with spaces are
    compared by words (``_word_similarity``); one word of a script written without
    spaces (CJK, Thai...) by its character pairs.
    """
    if _numbers(a) != _numbers(b):
        return 0.0
    words_a, words_b = set(a.split()), set(b.split())
    if not words_a or not words_b:
        return 0.0
    if len(words_a) == 1 == len(words_b) and (_unspaced(a) or _unspaced(b)):
        if (set(a) ^ set(b)) - UNSPACED_FUNCTION_CHARS:
            return 0.0  # a character of its own: "张三的妻子的电话号码", "好きではない"
        pairs_a, pairs_b = _pairs(_content(a)), _pairs(_content(b))
        return len(pairs_a & pairs_b) / len(pairs_a | pairs_b)
    return _word_similarity(words_a, words_b)


def _word_similarity(words_a: set[str], words_b: set[str]) -> float:
    """The share of words both titles have (a word's variant counts: "plan", "plans"),
    or 0 when a title has a word of its own that is not a function word: "Favourite
    drink of Carol" and "... of Dave" are two notes, however many words they share.
    Merging two topics is worse than a second note on one."""
    own_a = {w for w in words_a - words_b if not _has_variant(w, words_b)}
    own_b = {w for w in words_b - words_a if not _has_variant(w, words_a)}
    if not own_a | own_b <= FUNCTION_WORDS:
        return 0.0
    if own_a - ARTICLES and own_b - ARTICLES:
        return 0.0  # each has a word the other lacks: "to"/"from" Paris, "my"/"your" car
    shared = (words_a | words_b) - own_a - own_b
    if shared <= FUNCTION_WORDS:
        return 0.0  # nothing but function words in common
    return len(shared) / len(words_a | words_b)


def _has_variant(word: str, words: set[str]) -> bool:
    """Whether ``words`` hold another form of ``word`` (function words have none:
    "with" and "without" are not one word)."""
    return word not in FUNCTION_WORDS and any(
        _variants(word, other) for other in words if other not in FUNCTION_WORDS
    )


def _variants(a: str, b: str) -> bool:
    """Forms of one word: a common prefix of at least 4 letters covering three quarters
    of the shorter word, with at most ``MAX_ENDING`` letters after it in the longer
    (plan/plans/planning, study/studies; not austria/australia, nor the compounds
    Haus/Hausaufgaben, Kinder/Kindergarten), or a plural's ``s``/``es`` on a word of
    three letters or more (tip/tips, box/boxes)."""
    short, long = sorted((a, b), key=len)
    if len(short) >= 3 and short.isalpha() and long in (short + "s", short + "es"):
        return True
    prefix = 0
    for x, y in zip(a, b, strict=False):
        if x != y or not (x.isalpha() or unicodedata.category(x)[0] == "M"):
            break
        prefix += 1
    return prefix >= 4 and 4 * prefix >= 3 * len(short) and len(long) - prefix <= MAX_ENDING


MAX_ENDING = 4  # letters an inflection adds (plan-ning, manage-ment, organization-al)


# The scripts written without spaces, and Hangul: a one-word title in any of them is
# compared by its character pairs.
_UNSPACED_SCRIPTS = (*UNSPACED_SCRIPTS, "HANGUL")


# The particles a title written without spaces may add or drop and stay one topic, as
# function words in ``_word_similarity`` (``東京の天気``, ``東京天気``): Japanese case
# particles, Chinese 的/之/和/与, Korean particles. Any other character of its own makes
# another topic (another person, a negation: ``ไม่ชอบกาแฟ``), as a word of its own does.
UNSPACED_FUNCTION_CHARS = frozenset("のがはをにへでともや的之和与與及了의은는이가을를에도와과들")


def _content(text: str) -> str:
    """``text`` without its particles (all of it when it is particles only)."""
    return "".join(c for c in text if c not in UNSPACED_FUNCTION_CHARS) or text


def _unspaced(text: str) -> bool:
    return not text.isascii() and any(
        unicodedata.name(char, "").startswith(_UNSPACED_SCRIPTS) for char in text
    )


def _pairs(text: str) -> set[str]:
    return {text[i : i + 2] for i in range(len(text) - 1)} or {text}


def _numbers(text: str) -> list[str]:
    """The runs of characters a title counts with (digits of any script, CJK numerals,
    Roman numerals, circled numbers: ``第一`` and ``第二`` are other notes) and its
    number words (``sprint one``, ``sprint two``), sorted."""
    runs, run = [], ""
    for char in text:
        if unicodedata.numeric(char, None) is not None:
            run += char
        elif run:
            runs.append(run)
            run = ""
    words = [word for word in text.casefold().split() if word in NUMBER_WORDS]
    return sorted([*runs, run, *words] if run else [*runs, *words])


# Number words of the languages most written with spaces between words, from two (one,
# un, uno and ein are also articles or pronouns there) up to twelve, and the ordinals;
# not those that are English words too (once, due, sept, elf).
NUMBER_WORDS = frozenset(
    """
    two three four five six seven eight nine ten eleven twelve twenty hundred
    first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth
    zwei drei vier fünf sechs sieben acht neun zehn zwölf
    erste zweite dritte vierte fünfte sechste siebte achte neunte zehnte
    deux trois quatre cinq six huit neuf dix onze douze
    premier première deuxième troisième quatrième cinquième sixième septième huitième
    dos tres cuatro cinco seis siete ocho nueve diez doce
    primero primera segundo segunda tercero tercera cuarto cuarta quinto quinta
    tre quattro cinque sei sette otto nove dieci undici dodici
    primo prima secondo seconda terzo terza quarto quarta
    dois duas três quatro cinco seis sete oito nove dez onze doze
    два три четыре пять шесть семь восемь девять десять
    первый второй третий четвёртый пятый
    """.split()
)

# Articles (and the possessive "'s" a title key splits off): a title may add, drop or
# swap them and stay the same topic.
ARTICLES = frozenset(
    """
    the an s
    der das den dem des ein eine einen einem einer eines
    le la les l un une
    el los las lo una unos unas
    il gli uno
    os um uma uns umas
    het een
    """.split()
)

# Function words of the languages written with spaces that titles are mostly in
# (English, German, French, Spanish, Italian, Portuguese, Dutch): articles,
# prepositions, conjunctions, possessives. A title may add or drop some of them and stay
# the same topic. Not those that are common English words too (die, son, van, do, no,
# met, am, sin, con, com, i, pelo).
FUNCTION_WORDS = ARTICLES | frozenset(
    """
    a of in on at to for from by with about into onto over under between through
    during before after without within and or but nor as
    my your his her its our their
    zu mit für auf aus bei nach über unter vor im an vom zum zur beim durch gegen ohne um
    und oder aber von mein meine dein deine sein seine ihr ihre unser unsere euer eure
    de d du au aux à en dans sur sous avec pour par sans chez vers entre et ou mais
    mon ma mes ton ta tes sa ses notre nos votre vos leur leurs
    del al y e o u pero para por sobre hacia desde hasta
    mi mis tu tus su sus nuestro nuestra nuestros nuestras
    di da dal dalla dei degli delle della dello nel nella sul sulla alla ai agli alle
    tra fra ed mio mia miei mie tuo tua suo sua nostro nostra
    dos das em na nas pela sem meu minha seu nosso nossa
    op aan bij voor naar uit tot om maar mijn jouw zijn haar ons onze hun
    """.split()
)


def holds_entry(body: str, content: str, links: list[str]) -> bool:
    """Whether a section of ``body`` is exactly ``content`` (then its image links).

    A section is what follows a heading line, up to the next heading, an image link line
    or the end; lines are compared without blank lines and trailing spaces, so the
    spacing a person or the server changed does not matter.
    """
    want = _lines(content.strip())  # as the fallback writes it
    lines = _lines(body)
    for i, line in enumerate(lines):
        end = i + 1 + len(want)
        if not ATX_HEADING.match(line) or lines[i + 1 : end] != want:
            continue
        images = end
        while images < len(lines) and lines[images].startswith("!["):
            images += 1
        ends = images == len(lines) or ATX_HEADING.match(lines[images])
        if ends and set(links) <= set(lines[end:images]):
            return True
    return False


async def merged_before(vault: Vault, path: str, entry: MemoryEntry) -> bool:
    """Whether ``path`` has a version written for this entry (reason ``entry:<id> ...``,
    as undo finds an entry's writes); True on a server without history (no undo either)."""
    if not await vault.has_history():
        return True
    own = entry_reason(entry).split(" ", 1)[0]
    versions = (await vault.history(path, limit=MAX_HISTORY_VERSIONS))["versions"]
    return any((v.get("reason") or "").split(" ", 1)[0] == own for v in versions)


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.split("\n") if line.strip()]


def merge_tags(old: Any, new: list[str]) -> list[str]:
    """The note's tags first, then the entry's new ones (split by the shared tag rule)."""
    return string_list("tags", [*string_list("tags", old, strict=False), *new], strict=False)


def new_note(entry: MemoryEntry, links: list[str], tz: tzinfo | None) -> str:
    """A note of the entry alone: its heading, then the entry's dated section as a later
    entry adds one (``created`` is the vault's: when the note was written)."""
    meta = {"title": entry.title, "type": "item", "tags": list(entry.tags)}
    return render_note(meta, f"# {entry.title}\n\n{_section(entry, links, tz)}")


def merged_note(text: str, entry: MemoryEntry, links: list[str], tz: tzinfo | None) -> str:
    meta, body = split_note(text)
    meta["tags"] = merge_tags(meta.get("tags"), entry.tags)
    return render_note(meta, body.rstrip("\n") + "\n\n" + _section(entry, links, tz))


def _section(entry: MemoryEntry, links: list[str], tz: tzinfo | None) -> str:
    """``## <day>: <title>``, the entry's content, its image links; the day of the entry's
    time (``remember --at``) in the configured zone."""
    day = entry.timestamp.astimezone(tz).date().isoformat()  # YYYY-MM-DD, even before 1000
    section = f"## {day}: {entry.title}\n\n{entry.content.strip()}\n"
    if links:
        section += "\n" + "\n".join(links) + "\n"
    return section


async def merge_fallback(
    journal: WriteJournal, entry: MemoryEntry, images: list[ImageFile], tz: tzinfo | None
) -> Confirmation:
    """Merge ``entry`` into the vault without an LLM; every write goes through ``journal``."""
    vault = journal.vault
    target = await find_best_note(vault, entry)
    for attempt in range(MERGE_ATTEMPTS):
        if attempt:
            first, cap = RETRY_WAIT_SECONDS
            await asyncio.sleep(random.uniform(0, min(cap, first * 2**attempt)))
        path = target or await new_note_path(vault, entry.title)
        links = await copy_images(journal, path, images)
        assets = [p for p in journal.written if p.startswith(f"{asset_folder(path)}/")]
        try:
            if target is None:
                await journal.write(path, new_note(entry, links, tz), if_match="")
                return Confirmation([path, *assets], f"Created {path} ({entry.title}).")
            current = await vault.read(path)
            if current.get("encoding", "utf-8") != "utf-8" or unreadable_block(current["content"]):
                # not UTF-8, or a block that cannot be read (a section added would stack a
                # second block on it): a note of its own (the name is taken: ``new_note_path``)
                target = None
                continue
            body = split_note(current["content"])[1]
            if holds_entry(body, entry.content, links) and await merged_before(vault, path, entry):
                return Confirmation([path], f"{path} already holds this entry; nothing added.")
            text = merged_note(current["content"], entry, links, tz)
            try:
                await journal.write(path, text, if_match=current["etag"])
            except TooLargeError as err:  # (every later entry of the topic met it: say why)
                raise TooLargeError(
                    f"{err.message}: {path} is full; split it into notes of their own (or"
                    " raise the indexer's INDEXER_MAX_FILE_BYTES), then submit the entry again"
                ) from None
            return Confirmation([path, *assets], f"Added a section to {path} ({entry.title}).")
        except ConflictError:
            # changed meanwhile: merge into the fresh text. Created meanwhile: by another
            # writer, perhaps for a title of the same slug ("C#", "C++"): merge into it
            # only if it is this entry's note, else take the next free name.
            if target is not None or await _titled(vault, path, title_key(entry.title)):
                target = path
    raise ConflictError(f"{path} kept changing while entry {entry.id} was merged into it")
