"""What the Claude memory tool shows of a note: its body, without the frontmatter block.

A note's frontmatter may record ``trailing_newlines: N``: the body the model wrote ended
with N newlines (the server ends every note it writes with exactly one), and the body
shown ends with N again; and ``byte_order_marks: N``: it started with N U+FEFF (the
server drops one at a body's start, where another program's BOM lands), shown again.
A note without a readable block (none, or one that cannot be read) is shown whole, as
stored.

Shared by both sides so that they cannot differ: the client shows notes by these rules
(``agent_client.claude_memory.files``), and the server's ``find`` measures them by the
same rules (its ``body_sizes``), so that a listing of a memory folder needs no read of
every note.
"""

from __future__ import annotations

from typing import Any

from shared.errors import InvalidFrontmatterError
from shared.frontmatter import clean_text, parse_yaml_block, split_frontmatter

TRAILING_NEWLINES = "trailing_newlines"
BYTE_ORDER_MARKS = "byte_order_marks"
MAX_TRAILING = 1 << 20  # a larger count (typed by hand) is ignored
BOM = "\ufeff"


def recorded_body(meta: dict[str, Any], body: str) -> str:
    """``body`` as the model wrote it: with the marks it started with and the newlines
    it ended with that ``meta`` records."""
    marks = meta.get(BYTE_ORDER_MARKS)
    if isinstance(marks, int) and not isinstance(marks, bool) and 0 < marks <= MAX_TRAILING:
        body = BOM * marks + body
    return recorded_trailing(meta, body)


def recorded_trailing(meta: dict[str, Any], body: str) -> str:
    """``body`` ending with the newlines ``meta`` records (as it is when none, or when
    the recorded value is not a count: a person's typo)."""
    count = meta.get(TRAILING_NEWLINES)
    if isinstance(count, int) and not isinstance(count, bool) and 0 <= count <= MAX_TRAILING:
        return body.rstrip("\n") + "\n" * count
    return body


def shown_text(content: str) -> str:
    """The text the memory tool shows of the note whose UTF-8 content is ``content``.
    A BOM another program put first is not shown: a write drops it (left in the text,
    it was written back in the middle of the note, after a new block)."""
    text = without_bom(content)
    try:
        block, body = split_frontmatter(clean_text(text))
        if block is None:
            return text
        meta = parse_yaml_block(block)
    except InvalidFrontmatterError:
        return text
    return recorded_body(meta, body)


def without_bom(content: str) -> str:
    return content.removeprefix(BOM)


def shown_size(content: str) -> int:
    """UTF-8 bytes of ``shown_text(content)``: a note's size in a memory listing."""
    return len(shown_text(content).encode("utf-8"))
