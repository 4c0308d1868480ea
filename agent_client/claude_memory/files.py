"""What the model sees of a memory file, and what goes back to the vault.

Plain text files (``.txt``, ``.json``...) are stored exactly as the model wrote them.
A ``.md`` memory file is a note: the server puts a frontmatter block on it (``id``,
``title``, ``created``, ``updated``, and whatever a person adds), ends its body with
exactly one newline and turns CR line endings into LF. The model sees the body only, so
that it reads back exactly what it wrote:

- the whole text the model sends is the body (a ``---`` block it writes itself stays
  body text, shown back as written);
- when that text does not end with exactly one newline (none, or several), the note
  keeps the count in its frontmatter as ``trailing_newlines: N``, and the body the model
  sees ends with N newlines again;
- when it starts with U+FEFF (which the server drops at a body's start, as a BOM
  another program left), the note keeps how many as ``byte_order_marks: N``, and the
  body the model sees starts with them again;
- CR and CRLF line endings become LF (the one difference from the SDK's own tool in a
  ``.md`` file; a ``.txt`` file keeps them).

Edits keep every other frontmatter key as it is (the server keeps ``id`` and ``created``
and sets ``updated``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agent_client.notes import split_note, unreadable_block
from shared.filetypes import NOTE_SUFFIX
from shared.frontmatter_reader import VaultYAMLHandler
from shared.memory_view import (
    BOM,
    BYTE_ORDER_MARKS,
    TRAILING_NEWLINES,
    recorded_body,
    without_bom,
)

_HANDLER = VaultYAMLHandler()
_RECORDED = (TRAILING_NEWLINES, BYTE_ORDER_MARKS)  # what the model wrote, set anew each write


@dataclass(frozen=True)
class MemoryFile:
    """A memory file as the model sees it: ``text``, plus what writing it back needs."""

    text: str
    etag: str
    meta: dict[str, Any] = field(default_factory=dict)  # a note's frontmatter, else {}
    raw: str = ""  # the file's content in the vault
    # Why a note's frontmatter block cannot be read (its text is then the whole file):
    # written back, the text would get a second block on top of that one.
    unreadable: str | None = None


def is_note(name: str) -> bool:
    return name.endswith(NOTE_SUFFIX)


def seen(name: str, content: str, etag: str) -> MemoryFile:
    """The model's view of the vault file ``name`` whose content is ``content``."""
    if not is_note(name):
        return MemoryFile(content, etag, {}, content)
    text = without_bom(content)  # (``memory_view.shown_text``)
    problem = unreadable_block(text)
    if problem is not None:
        return MemoryFile(text, etag, {}, content, problem)
    meta, body = split_note(text)
    return MemoryFile(recorded_body(meta, body), etag, meta, content)


def stored(name: str, text: str, meta: dict[str, Any] | None = None) -> str:
    """The content to write for ``name`` so that the model sees ``text`` (``meta``: the
    note's current frontmatter, kept)."""
    if not is_note(name):
        return text
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    block = {k: v for k, v in (meta or {}).items() if k not in _RECORDED}
    unmarked = text.lstrip(BOM)
    if unmarked != text:
        block[BYTE_ORDER_MARKS] = len(text) - len(unmarked)
        text = unmarked
    stripped = text.rstrip("\n")
    if text != (stripped + "\n" if stripped else ""):
        block[TRAILING_NEWLINES] = len(text) - len(stripped)
    if not block:
        return f"---\n---\n{text}"
    return f"---\n{_HANDLER.export(block)}\n---\n{text}"
