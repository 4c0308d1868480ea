"""What the agent application hands to the Memory Writer: entries and actions.

Plain dataclasses (``shared`` depends on the standard library and PyYAML only).
``validate()`` raises ``ValueError`` with a plain message, so a bad entry is refused
before anything is queued.
"""

from __future__ import annotations

import re
import unicodedata
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from shared.filetypes import NOTE_SUFFIX, TEXT_SUFFIXES, is_file_kind_name
from shared.invisible import SHOW_NOTHING, spelled
from shared.langs import check_lang
from shared.timestamps import storable
from shared.utf8 import texts_in, utf8_problem

EntryKind = Literal["knowledge", "event"]
# The token budgets a recall takes (the server checks them; the client's CLI too).
MIN_RECALL_BUDGET = 50
MAX_RECALL_BUDGET = 32_000
MAX_SEARCH_LIMIT = 100  # hits a search returns at most (its limit's top)
MAX_ENTRY_CONTENT = 256 * 1024
MAX_TITLE_CHARS = 200
MAX_TAG_CHARS = 256  # (as the index's tags filter takes them)
# An entry's id names its changes in history (reason "entry:<id> <title>", found again
# by the first word for undo): no spaces, a bounded length.
ENTRY_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")
# Every character str.splitlines() breaks at: the server turns any of them into a line
# break, so one in a title would end the note's heading and start a body line.
LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")


def check_utf8(what: str, text: str) -> None:
    """``ValueError`` naming ``what`` when ``text`` is not encodable as UTF-8."""
    problem = utf8_problem(text)
    if problem:
        raise ValueError(f"{what} is not valid UTF-8 text: {problem}")


def _check_path(action: str, path: object) -> None:
    """A note path an action may name: a ``.md`` path that can travel as UTF-8."""
    if not isinstance(path, str) or not path.endswith(NOTE_SUFFIX):
        raise ValueError(f"{action}: path must be a vault-relative .md path")
    check_utf8(f"{action}: path", path)


def _check_deletable(path: object) -> None:
    """What the server's ``delete`` takes: a note, a plain text file (Claude's memory
    tool keeps ``.txt``, ``.json``...: ``read`` reads them) or a note's image."""
    if not isinstance(path, str) or not is_file_kind_name(path):
        raise ValueError(
            f"delete: path must be a vault-relative path of a .md note, a text file"
            f" ({', '.join(sorted(TEXT_SUFFIXES))}) or an image in a *.assets/ folder"
        )
    check_utf8("delete: path", path)


def _is_control(char: str) -> bool:
    """C0 and C1 controls and DEL (escape sequences, NUL), and the bidi embeddings,
    overrides and isolates that turn around what follows them in a heading
    (``gpj.\u202eexe``)."""
    return (
        unicodedata.category(char) == "Cc"
        or "\u202a" <= char <= "\u202e"
        or "\u2066" <= char <= "\u2069"
    )


# (not Cn: a character newer than this Python's Unicode, 🩷 on 3.11, is shown)
_UNSHOWN = frozenset({"Mn", "Mc", "Me", "Cc", "Cf", "Cs"})


def check_title(what: str, title: object) -> None:
    """A note's title (its heading): one line of at most ``MAX_TITLE_CHARS``, UTF-8, no
    control character or bidi control, and something that shows (a heading of only
    invisible characters names nothing)."""
    text = _check_line(what, title, f"must be one line of at most {MAX_TITLE_CHARS} chars")
    _check_shown_text(what, text)


def check_tag(what: str, tag: object) -> None:
    """A tag: one line of at most ``MAX_TAG_CHARS``, UTF-8, no control character, and
    something that shows. (A tag is written on the ``- tags:`` line of an event: a line
    break in one wrote a section of its own, ``- entry:`` line and all.)"""
    text = _check_line(what, tag, f"must be at most {MAX_TAG_CHARS} chars", MAX_TAG_CHARS)
    if "\t" in text:
        raise ValueError(f"{what} holds the control character '\\t'")
    _check_shown_text(what, text)


def _check_line(what: str, text: object, too_long: str, limit: int = MAX_TITLE_CHARS) -> str:
    """``text``, when a non-empty string of one line, at most ``limit`` characters, UTF-8."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"{what} must be a non-empty string")
    breaks = [c for c in text if c in LINE_BREAKS]
    if breaks:
        raise ValueError(f"{what} must be one line, without a line break such as {breaks[0]!r}")
    if len(text) > limit:
        raise ValueError(f"{what} {too_long}")
    check_utf8(what, text)
    return text


def _check_shown_text(what: str, text: str) -> None:
    control = next((c for c in text if _is_control(c) and c != "\t"), None)
    if control is not None:
        raise ValueError(f"{what} holds the control character {control!r}")
    if not shows_something(text):
        raise ValueError(f"{what} shows nothing (invisible characters only)")


def shows_something(text: str) -> bool:
    """Whether ``text`` has a character that shows (not only spaces, zero-width and
    format characters, marks on nothing, a Hangul filler...)."""
    return any(_shows(c) for c in spelled(text))


def _shows(char: str) -> bool:
    """Whether ``char`` shows something on its own. An unassigned one may be newer than
    this Python's Unicode (🩷 on 3.11), but a noncharacter or a tag-plane one never shows."""
    if char.isspace() or char in SHOW_NOTHING or unicodedata.category(char) in _UNSHOWN:
        return False
    code = ord(char)
    noncharacter = 0xFDD0 <= code <= 0xFDEF or code & 0xFFFE == 0xFFFE
    return not (noncharacter or (unicodedata.category(char) == "Cn" and code >= 0xE0000))


def check_no_nul(what: str, text: str) -> None:
    """Note text without NUL: git, grep and editors would take the note for binary."""
    if "\x00" in text:
        raise ValueError(f"{what} holds a NUL character")


def new_entry_id() -> str:
    """A unique, sortable-enough id for an entry (hex UUID4)."""
    return uuid.uuid4().hex


_MADE_ID = re.compile(r"^[0-9a-f]{32}$")


def is_made_id(entry_id: str) -> bool:
    """Whether ``entry_id`` has the form ``new_entry_id`` gives: new for certain. An id
    the host set may come again (an entry submitted twice, or one id for two entries)."""
    return _MADE_ID.fullmatch(entry_id) is not None


@dataclass
class MemoryEntry:
    """One thing the agent wants remembered: a piece of knowledge or an event."""

    lang: str
    kind: EntryKind
    title: str
    content: str
    tags: list[str] = field(default_factory=list)
    timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))
    images: list[str] = field(default_factory=list)
    id: str = field(default_factory=new_entry_id)

    def validate(self) -> None:
        check_lang(self.lang)
        if not isinstance(self.id, str) or not ENTRY_ID_RE.fullmatch(self.id):
            raise ValueError(
                f"entry {self.id!r}: id must be 1-128 letters, digits and _ . : - "
                "(starting with a letter or digit)"
            )
        if self.kind not in ("knowledge", "event"):
            raise ValueError(f"entry {self.id}: kind must be 'knowledge' or 'event'")
        self._validate_title()
        if not isinstance(self.content, str) or not self.content.strip():
            raise ValueError(f"entry {self.id}: content must be a non-empty string")
        if len(self.content) > MAX_ENTRY_CONTENT:
            raise ValueError(f"entry {self.id}: content is larger than {MAX_ENTRY_CONTENT} chars")
        check_utf8(f"entry {self.id}: content", self.content)
        check_no_nul(f"entry {self.id}: content", self.content)
        if not isinstance(self.timestamp, datetime) or self.timestamp.tzinfo is None:
            raise ValueError(f"entry {self.id}: timestamp must be a timezone-aware datetime")
        if not storable(self.timestamp):
            raise ValueError(
                f"entry {self.id}: timestamp {self.timestamp} is outside the times"
                " that can be stored"
            )
        self._validate_list("tags", self.tags, "non-empty strings", str.strip)
        for number, tag in enumerate(self.tags, 1):
            check_tag(f"entry {self.id}: tag {number}", tag)
        self._validate_list("images", self.images, "file paths", bool)

    def _validate_title(self) -> None:
        check_title(f"entry {self.id}: title", self.title)

    def _validate_list(
        self, name: str, items: object, what: str, usable: Callable[[str], object]
    ) -> None:
        """A list (not one string, whose letters would each become an item) of ``what``."""
        if not isinstance(items, list | tuple):
            raise ValueError(
                f"entry {self.id}: {name} must be a list of {what}, not {type(items).__name__}"
            )
        for number, item in enumerate(items, 1):
            if not isinstance(item, str) or not usable(item):
                raise ValueError(f"entry {self.id}: {name} must be {what}, not {item!r:.60}")
            check_utf8(f"entry {self.id}: {name} item {number}", item)


@dataclass
class DeleteAction:
    """Delete one note (its ``.assets/`` folder goes with it), text file or image."""

    lang: str
    path: str

    def validate(self) -> None:
        check_lang(self.lang)
        _check_deletable(self.path)


NAME_KEYS = ("type", "tags", "aliases")  # an edit's values held to a tag's rules


@dataclass
class EditAction:
    """Replace a note's body and/or update frontmatter keys; ``id``/``created`` are kept."""

    lang: str
    path: str
    body: str | None = None
    frontmatter: dict[str, Any] | None = None

    def validate(self) -> None:
        check_lang(self.lang)
        _check_path("edit", self.path)
        if self.body is None and not self.frontmatter:
            raise ValueError("edit: give a new body, frontmatter changes, or both")
        for text in texts_in([self.body, self.frontmatter]):
            check_utf8("edit: the body or a frontmatter key or value", text)
            check_no_nul("edit: the body or a frontmatter key or value", text)
        meta = self.frontmatter or {}
        # The body and the values are content, held to an entry's size: a model's edit
        # of 300,000 characters was written where the same text as an entry is refused.
        if self.body is not None and len(self.body) > MAX_ENTRY_CONTENT:
            raise ValueError(f"edit: the body is longer than {MAX_ENTRY_CONTENT} characters")
        if any(len(text) > MAX_ENTRY_CONTENT for text in texts_in(list(meta.values()))):
            raise ValueError(
                f"edit: a frontmatter value is longer than {MAX_ENTRY_CONTENT} characters"
            )
        # A key set is a name in every editor, held to a tag's rules (one line, shown as
        # typed: a bidi override turned its line around); one removed (None) may be a
        # person's odd key, and goes.
        for key, value in meta.items():
            if isinstance(key, str) and value is not None:
                check_tag(f"edit: the frontmatter key {key[:60]!r}", key)
        title = meta.get("title")
        if isinstance(title, str):  # (None removes the key; a number stays a number)
            check_title("edit: the title", title)
        for key in NAME_KEYS:  # shown as names (a list's items, or one string), as tags are
            names = meta.get(key)
            for number, name in enumerate(names if isinstance(names, list) else [names], 1):
                if isinstance(name, str) and name.strip():  # (a blank one is no name: dropped)
                    check_tag(f"edit: {key} item {number}", name)


Action = DeleteAction | EditAction
