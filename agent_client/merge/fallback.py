"""Deterministic knowledge merge, used when no LLM is configured or the LLM failed.

Find the best existing note (slug, then exact title, then a search hit whose title is
close enough), append a dated section with the entry's content; or create a new note
with clean frontmatter. Re-submitting the same entry does not add its content twice:
an entry is already there when a section of the note *is* its content (``holds_entry``),
never because its words occur somewhere in the file (a one-word entry such as "go" is
in the title, the heading and the slug of its own note).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import tzinfo
from typing import Any

from agent_client.connection import Vault
from agent_client.merge.confirmation import Confirmation
from agent_client.merge.images import ImageFile, copy_images
from agent_client.merge.journal import WriteJournal
from agent_client.merge.paths import note_path_for, title_key
from agent_client.notes import ATX_HEADING, render_note, split_note, unreadable_block
from shared.errors import ConflictError, InvalidFrontmatterError, NotFoundError, VaultError
from shared.frontmatter import parse_yaml_block, string_list
from shared.images import asset_folder
from shared.models import MemoryEntry
from shared.workspace import ITEMS_DIR

MIN_TITLE_SIMILARITY = 0.6


MAX_SLUG_TWINS = 100


async def find_best_note(vault: Vault, entry: MemoryEntry) -> str | None:
    """The existing note this entry belongs to, or None."""
    wanted = title_key(entry.title)
    slug_path = note_path_for(entry.title)
    if await _titled(vault, slug_path, wanted):
        return slug_path
    try:
        titles = await vault.grep(r"^title:", path=ITEMS_DIR, limit=1000)
    except NotFoundError:
        return None  # no items/ folder yet: nothing to merge into
    for match in titles["matches"]:
        if _title_of(match["text"]) == wanted:
            return match["path"]
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
    holds it ("C#" and "C++" share a slug); then ``<slug>-2.md``, ``-3``..."""
    wanted = title_key(title)
    stem = note_path_for(title).removesuffix(".md")
    for number in range(1, MAX_SLUG_TWINS + 1):
        path = f"{stem}.md" if number == 1 else f"{stem}-{number}.md"
        if await _titled(vault, path, wanted) is not False:
            return path
    raise ConflictError(f"{MAX_SLUG_TWINS} notes of other titles hold the names of {stem}.md")


async def _titled(vault: Vault, path: str, wanted: str) -> bool | None:
    """Whether the note at ``path`` is the one titled ``wanted`` (a note without a title
    is taken as it: its name is its title); None when there is no note there."""
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
    title = split_note(str(current.get("content", "")))[0].get("title")
    return title is None or title_key(str(title)) == wanted


def _title_of(line: str) -> str:
    """The title key of a ``title: ...`` frontmatter line, read by the shared YAML reader."""
    try:
        value = parse_yaml_block(line).get("title")
    except InvalidFrontmatterError:
        return ""
    return title_key(str(value)) if value is not None else ""


def similarity(a: str, b: str) -> float:
    """Jaccard overlap of words (and of character pairs, for scripts without spaces);
    titles that hold other numbers are different notes ("Meeting 2026-11-01" and
    "Meeting 2026-11-02" share most words; so do "第一季度" and "第二季度")."""
    if _numbers(a) != _numbers(b):
        return 0.0
    sa, sb = _grams(a), _grams(b)
    if not sa or not sb:
        return 0.0
    return len(sa & sb) / len(sa | sb)


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


def _grams(text: str) -> set[str]:
    grams = set(text.split())
    joined = re.sub(r"\s+", "", text)
    if len(grams) <= 1 and len(joined) > 2:  # CJK and other unspaced text
        grams = {joined[i : i + 2] for i in range(len(joined) - 1)}
    return grams


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


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.split("\n") if line.strip()]


def merge_tags(old: Any, new: list[str]) -> list[str]:
    """The note's tags first, then the entry's new ones (split by the shared tag rule)."""
    return string_list("tags", [*string_list("tags", old, strict=False), *new], strict=False)


def new_note(entry: MemoryEntry, links: list[str]) -> str:
    body = f"# {entry.title}\n\n{entry.content.strip()}\n"
    if links:
        body += "\n" + "\n".join(links) + "\n"
    return render_note({"title": entry.title, "type": "item", "tags": list(entry.tags)}, body)


def merged_note(text: str, entry: MemoryEntry, links: list[str], tz: tzinfo | None) -> str:
    meta, body = split_note(text)
    meta["tags"] = merge_tags(meta.get("tags"), entry.tags)
    day = entry.timestamp.astimezone(tz).date().isoformat()  # YYYY-MM-DD, even before 1000
    section = f"## {day}: {entry.title}\n\n{entry.content.strip()}\n"
    if links:
        section += "\n" + "\n".join(links) + "\n"
    return render_note(meta, body.rstrip("\n") + "\n\n" + section)


async def merge_fallback(
    journal: WriteJournal, entry: MemoryEntry, images: list[ImageFile], tz: tzinfo | None
) -> Confirmation:
    """Merge ``entry`` into the vault without an LLM; every write goes through ``journal``."""
    vault = journal.vault
    target = await find_best_note(vault, entry)
    for _ in range(2):
        path = target or await new_note_path(vault, entry.title)
        links = await copy_images(journal, path, images)
        assets = [p for p in journal.written if p.startswith(f"{asset_folder(path)}/")]
        try:
            if target is None:
                await journal.write(path, new_note(entry, links), if_match="")
                return Confirmation([path, *assets], f"Created {path} ({entry.title}).")
            current = await vault.read(path)
            if current.get("encoding", "utf-8") != "utf-8" or unreadable_block(current["content"]):
                # not UTF-8, or a block that cannot be read (a section added would stack a
                # second block on it): a note of its own (the name is taken: ``new_note_path``)
                target = None
                continue
            if holds_entry(split_note(current["content"])[1], entry.content, links):
                return Confirmation([path], f"{path} already holds this entry; nothing added.")
            text = merged_note(current["content"], entry, links, tz)
            await journal.write(path, text, if_match=current["etag"])
            return Confirmation([path, *assets], f"Added a section to {path} ({entry.title}).")
        except ConflictError:
            target = path  # created or changed meanwhile: merge into the fresh text once
    raise ConflictError(f"{path} kept changing while entry {entry.id} was merged into it")
