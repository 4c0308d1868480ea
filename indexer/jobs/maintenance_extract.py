"""Maintenance without a model: USER.md and PROJECT.md gather the events tagged for them.

The SPEC's jobs each have a deterministic path when no model is set; this is
maintenance's. It cannot weigh what an entry means, so it goes by what the entry says it
is: its tags (the Memory Writer's ``- tags:`` line, a ``#tag`` in its text) and the words
of a section's own heading (``## Decision``). A tag names the file and its section
(``TAGS``: ``preference`` -> USER.md's ``## Preferences``, ``decision`` -> PROJECT.md's
``## Decisions``...), so the two files keep apart as the prompts keep them: an entry that
says nothing of what it is goes nowhere.

Each such entry of the newest ``MAX_SECTIONS`` of the event log is one line, its title
and the first paragraph of its text, dated: ``- Short answers: Keep replies under five
lines. No emojis. (2026-11-30)``; a paragraph too long for a line keeps the sentences
that fit (the first alone, cut, when even it does not: its first sentence alone lost
the rest of ``Keep replies short. No emojis please.``). The file is added to, never
rewritten: a line is added under its section's heading (made, in the tasks' order, when
the file has none) when the file does not say it yet; a person's text stays as it is.
The titles and sections are in the vault's language where ``maintenance_words`` knows
it, English elsewhere (English ones are found in any vault). A section keeps the newest
``MAX_DATED_LINES`` dated lines: older ones go. An entry holding a credential is left
out (``secrets``). The entries after the last one a run took (``mark``) are looked at,
so a line a person deleted is not added again.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from indexer.index.abstract import one_line
from indexer.index.inline_tags import inline_tags
from indexer.index.text import searchable
from indexer.jobs.maintenance_input import EVENTS
from indexer.jobs.maintenance_tasks import TASKS
from indexer.jobs.maintenance_words import SECTIONS, TAGS, TITLES, local_words
from indexer.jobs.secrets import redact_secrets
from shared.frontmatter_reader import read_frontmatter
from shared.graphemes import cut_chars
from shared.reader_folds import tag_key
from shared.workspace import day_file_order

MAX_SECTIONS = 500  # the newest sections of the event log looked at
MAX_DATED_LINES = 30  # a section's dated lines kept (the newest)
MAX_LINE_CHARS = 240  # one entry's line (a cut ends with "…")
# A heading's runs of words looked up as tags: as long as ``TAGS``' longest
# (``Trình độ và nền tảng``: 5)
_MOST_WORDS = max(tag.count("-") + 1 for tag in TAGS)


_FIELD = re.compile(r"- (time|title|tags|entry):[ \t]*(.*)")
_HEADING = re.compile(r"^##[ \t]+(.*)$", re.M)
_DAY = re.compile(r"(\d{4})/(\d{2})/(\d{2})(?:-\d+)?\.md$")
_DATED = re.compile(r"^- .* \((\d{4}-\d{2}-\d{2})\)$")
_DATED_SUFFIX = re.compile(r"\s*\(\d{4}-\d{2}-\d{2}\)$")
# A sentence ends at . ! ? and their Arabic, Urdu, Devanagari (danda), Armenian forms
# before a space, or at the CJK, Myanmar and Ethiopic ones
_SENTENCE_END = re.compile(r"(?<=[.!?؟۔।॥։])\s+|(?<=[。！？။።])")
_LIST_MARK = re.compile(r"^(?:[-*+]|\d+[.)])\s+")


@dataclass(frozen=True)
class Extracted:
    """What the deterministic path makes of the file: ``replace`` with its new text, or
    ``none``; and why."""

    action: str
    reason: str
    content: str | None = None
    mark: str | None = None  # the newest entry looked at: "<day file>#<number>"


@dataclass(frozen=True)
class Item:
    section: str
    line: str  # "- <statement> (<date>)"
    statement: str


def extracted(
    sections: list[tuple[str, int, str]],
    task: str,
    current: str | None,
    after: str | None,
    lang: str = "en",
) -> Extracted:
    """The file ``current`` (None: none yet) with the lines it lacks of the ``task``'s
    entries among ``sections`` ((day file, number in it, text), oldest first) that come
    after the entry ``after`` (an earlier run's ``mark``; None, or no file: all of them:
    a line a person deleted is not added again, a file deleted is made whole again)."""
    mark = _mark(*sections[-1][:2]) if sections else after
    if after is not None and current is not None:
        sections = [s for s in sections if _after(s[0], s[1], after)]
    items = [item for rel, _, text in sections if (item := _item(rel, text, task)) is not None]
    if not items:
        why = f"without a model: no new entry of the event log is tagged for {TASKS[task].output}"
        return Extracted("none", why, mark=mark)
    meta_text, body = _split(current)
    said = _said(body)
    new = [item for item in _unique(items) if _folded(item.statement) not in said]
    if not new:
        why = "without a model: every new tagged entry is in the file already"
        return Extracted("none", why, mark=mark)
    words = local_words(lang)
    lines = body.splitlines() if body.strip() else [f"# {words(TITLES[task])}"]
    for item in new:
        lines = _added(lines, task, item, words)
    for section in SECTIONS[task]:
        lines = _kept_newest(lines, section, words)
    text = meta_text + "\n".join(lines).strip("\n") + "\n"
    kinds = ", ".join(dict.fromkeys(item.section for item in new))
    noun = "entry" if len(new) == 1 else "entries"
    why = f"without a model: {len(new)} tagged {noun} added ({kinds})"
    return Extracted("replace", why, text, mark)


def _mark(rel: str, number: int) -> str:
    return f"{rel}#{number}"


def _after(rel: str, number: int, mark: str) -> bool:
    """Whether the entry ``number`` of the day file ``rel`` comes after ``mark``'s (day
    files in their order, ``DD-2.md`` after ``DD.md``; a mark not read: every entry)."""
    marked_rel, _, marked = mark.rpartition("#")
    if not (marked.isascii() and marked.isdigit()):  # (``²`` is a digit to isdigit)
        return True
    if rel != marked_rel:
        return day_file_order(rel) > day_file_order(marked_rel)
    return number > int(marked)


def _item(rel: str, text: str, task: str) -> Item | None:
    """The line of one section for ``task``'s file, or None (not tagged for it, or it
    holds a credential)."""
    fields, body = _fields_and_body(text)
    heading = _HEADING.match(text)
    heading_text = heading.group(1).strip() if heading else ""
    tags = [tag for tag in re.split(r"[,\s]+", fields.get("tags", "")) if tag and tag != "-"]
    tags += inline_tags(body)
    if heading_text.casefold() != "event":
        tags += _heading_tags(heading_text)
    sections = [TAGS.get(_tag_key(tag)) for tag in tags]
    section = next((found[1] for found in sections if found and found[0] == task), None)
    if section is None or redact_secrets(text)[1]:
        return None
    title = one_line(fields.get("title", ""))
    if title == "-" or not title:
        title = "" if heading_text.casefold() == "event" else one_line(heading_text)
    paragraph = _first_paragraph(body)
    statement = _statement(title, paragraph)
    if not statement:
        return None
    date = _date(fields.get("time", ""), rel)
    suffix = f" ({date})" if date else ""
    room = MAX_LINE_CHARS - len(suffix) - 2
    if len(statement) > room:  # (the title's part stays: what the sentences have left)
        head = len(statement) - len(paragraph)
        statement = _statement(title, _sentences_within(paragraph, room - head))
    statement = cut_chars(statement, room, "…")
    return Item(section, f"- {statement}{suffix}", statement)


def _heading_tags(heading: str) -> list[str]:
    """A heading's words, and its runs of words within one part
    (``Quyết định: dùng Redis``: ``Quyết-định``), hyphenated as a tag of several words
    is: Vietnamese writes a word as syllables apart, and a section's name may be a few
    words (``## Active threads``, ``## En cours``)."""
    tags = []
    for part in re.split(r"[:,/]+", heading):
        words = part.split()
        for size in range(1, _MOST_WORDS + 1):
            tags += ["-".join(words[at : at + size]) for at in range(len(words) - size + 1)]
    return tags


def _tag_key(tag: str) -> str:
    """A tag as ``TAGS`` holds it: as search's tag filter compares it (full-width and case
    folded, without "#", its letters one to their readers as one), the last part of a
    nested tag (``work/decision``)."""
    return tag_key(tag).strip().lstrip("#").rsplit("/", 1)[-1].replace("_", "-")


def _fields_and_body(text: str) -> tuple[dict[str, str], str]:
    """A section's own ``- field:`` lines (those right after its heading, as the Memory
    Writer writes them: each its first), and its text after them. A ``- tags:`` line in
    the text is text: it changed the entry's tags, title and date (an entry tagged
    ``decision`` went to USER.md, a date far ahead kept its line for good)."""
    lines = text.splitlines()
    if lines and lines[0].startswith("## "):
        lines = lines[1:]
    at = 0
    while at < len(lines) and not lines[at].strip():
        at += 1
    fields: dict[str, str] = {}
    while at < len(lines) and (field := _FIELD.fullmatch(lines[at])) is not None:
        fields.setdefault(field[1], field[2].strip())
        at += 1
    return fields, "\n".join(lines[at:]).strip()


def _first_paragraph(body: str) -> str:
    paragraph = body.split("\n\n", 1)[0].strip().lstrip("-*> ").strip()
    return one_line(paragraph)


def _sentences_within(text: str, room: int) -> str:
    """The first sentences of ``text`` that fit in ``room`` characters; the first alone
    when even it does not (the caller cuts it)."""
    ends = [end.start() for end in _SENTENCE_END.finditer(text)]
    fitting = [end for end in ends if 0 < end <= room]
    if fitting:
        return text[: fitting[-1]].rstrip()
    return text[: ends[0]].rstrip() if ends and ends[0] > 0 else text


def _statement(title: str, sentence: str) -> str:
    if title and sentence and not _folded(sentence).startswith(_folded(title)):
        return f"{title}: {sentence}"
    return sentence or title


def _date(time: str, rel: str) -> str:
    if re.match(r"\d{4}-\d{2}-\d{2}", time):
        return time[:10]
    day = _DAY.search(rel)
    return f"{day[1]}-{day[2]}-{day[3]}" if day and rel.startswith(f"{EVENTS}/") else ""


def _unique(items: list[Item]) -> list[Item]:
    """Each statement once: its newest line (the entries come oldest first)."""
    newest = {_folded(item.statement): item for item in items}
    return [item for item in items if newest[_folded(item.statement)] is item]


def _said(body: str) -> set[str]:
    """What the file's lines say, each as a statement is compared (without a list mark
    and a date): a line is added when none says it (a statement found inside a longer
    line, ``Editor.`` in ``- Editor: Prefers dark mode in the editor.``, was taken as
    said)."""
    return {
        _folded(_DATED_SUFFIX.sub("", _LIST_MARK.sub("", line.strip())))
        for line in body.splitlines()
    }


def _folded(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _split(current: str | None) -> tuple[str, str]:
    """(the frontmatter block as written, or "", the body) of the current file."""
    if current is None:
        return "", ""
    meta, body = read_frontmatter(current)
    if not meta and not current.startswith("---"):
        return "", current
    head = current[: len(current) - len(body)] if current.endswith(body) else ""
    return head, body


def _added(lines: list[str], task: str, item: Item, words: Callable[[str], str]) -> list[str]:
    """``lines`` with ``item``'s line at the end of its section (made when missing,
    after the sections that come before it)."""
    order = SECTIONS[task]
    where = _section_span(lines, item.section, words)
    if where is None:
        later = [span for name in order[order.index(item.section) + 1 :]
                 if (span := _section_span(lines, name, words)) is not None]  # fmt: skip
        at = min(start for start, _ in later) if later else len(lines)
        block = [f"## {words(item.section)}", "", item.line, ""]
        if at and lines[at - 1].strip():
            block.insert(0, "")
        return lines[:at] + block + lines[at:]
    start, end = where
    last = end
    while last > start + 1 and not lines[last - 1].strip():
        last -= 1
    return [*lines[:last], item.line, *lines[last:]]


def _section_span(
    lines: list[str], name: str, words: Callable[[str], str]
) -> tuple[int, int] | None:
    """(the heading's line, the line after the section's last) of ``## <name>``, in the
    vault's language or in English."""
    wanted = {_heading_key(name), _heading_key(words(name))}
    for at, line in enumerate(lines):
        if line.startswith("## ") and _heading_key(line[3:]) in wanted:
            end = next(
                (i for i in range(at + 1, len(lines)) if re.match(r"#{1,2} ", lines[i])),
                len(lines),
            )
            return at, end
    return None


def _heading_key(name: str) -> str:
    """A section's name as headings are compared: as search reads it (no vowel points,
    no non-joiner, Persian and Arabic yeh and kaf one letter), case folded, without
    spaces: ``## تصمیم ها`` typed with a space, or nothing, for the non-joiner, or on an
    Arabic keyboard, is ``## تصمیم‌ها`` (a second heading of that name was added)."""
    return "".join(searchable(unicodedata.normalize("NFKC", name)).casefold().split())


def _kept_newest(lines: list[str], section: str, words: Callable[[str], str]) -> list[str]:
    """``lines`` with only the newest ``MAX_DATED_LINES`` dated lines of ``section``."""
    span = _section_span(lines, section, words)
    if span is None:
        return lines
    start, end = span
    dated = [i for i in range(start, end) if _DATED.match(lines[i])]
    if len(dated) <= MAX_DATED_LINES:
        return lines
    by_age = sorted(dated, key=lambda i: (_DATED.match(lines[i])[1], i))  # type: ignore[index]
    dropped = set(by_age[: len(dated) - MAX_DATED_LINES])
    return [line for i, line in enumerate(lines) if i not in dropped]
