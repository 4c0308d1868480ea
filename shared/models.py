"""What the agent application hands to the Memory Writer: entries and actions.

Plain dataclasses (``shared`` depends on the standard library and PyYAML only).
``validate()`` raises ``ValueError`` with a plain message, so a bad entry is refused
before anything is queued.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from shared.langs import check_lang

EntryKind = Literal["knowledge", "event"]
MAX_ENTRY_CONTENT = 256 * 1024
# An entry's id names its changes in history (reason "entry:<id> <title>", found again
# by the first word for undo): no spaces, a bounded length.
ENTRY_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")


def new_entry_id() -> str:
    """A unique, sortable-enough id for an entry (hex UUID4)."""
    return uuid.uuid4().hex


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
        if not isinstance(self.id, str) or not ENTRY_ID_RE.match(self.id):
            raise ValueError(
                f"entry {self.id!r}: id must be 1-128 letters, digits and _ . : - "
                "(starting with a letter or digit)"
            )
        if self.kind not in ("knowledge", "event"):
            raise ValueError(f"entry {self.id}: kind must be 'knowledge' or 'event'")
        if not isinstance(self.title, str) or not self.title.strip():
            raise ValueError(f"entry {self.id}: title must be a non-empty string")
        if "\n" in self.title or len(self.title) > 200:
            raise ValueError(f"entry {self.id}: title must be one line of at most 200 chars")
        if not isinstance(self.content, str) or not self.content.strip():
            raise ValueError(f"entry {self.id}: content must be a non-empty string")
        if len(self.content) > MAX_ENTRY_CONTENT:
            raise ValueError(f"entry {self.id}: content is larger than {MAX_ENTRY_CONTENT} chars")
        if not all(isinstance(t, str) and t.strip() for t in self.tags):
            raise ValueError(f"entry {self.id}: tags must be non-empty strings")
        if not isinstance(self.timestamp, datetime) or self.timestamp.tzinfo is None:
            raise ValueError(f"entry {self.id}: timestamp must be a timezone-aware datetime")
        if not all(isinstance(p, str) and p for p in self.images):
            raise ValueError(f"entry {self.id}: images must be file paths")


@dataclass
class DeleteAction:
    """Delete one note (its ``.assets/`` folder goes with it)."""

    lang: str
    path: str

    def validate(self) -> None:
        check_lang(self.lang)
        if not isinstance(self.path, str) or not self.path.endswith(".md"):
            raise ValueError("delete: path must be a vault-relative .md path")


@dataclass
class EditAction:
    """Replace a note's body and/or update frontmatter keys; ``id``/``created`` are kept."""

    lang: str
    path: str
    body: str | None = None
    frontmatter: dict[str, Any] | None = None

    def validate(self) -> None:
        check_lang(self.lang)
        if not isinstance(self.path, str) or not self.path.endswith(".md"):
            raise ValueError("edit: path must be a vault-relative .md path")
        if self.body is None and not self.frontmatter:
            raise ValueError("edit: give a new body, frontmatter changes, or both")


Action = DeleteAction | EditAction
