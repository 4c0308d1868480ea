"""Split a note into frontmatter and body, and put them back together (client side).

The server normalizes every ``.md`` it writes, so the client only needs a faithful
split and a plain render; values it does not touch are passed through unchanged, with
the types YAML gave them (a date stays a date: as ISO text it would be written back
quoted, a string). Both go through ``shared.frontmatter`` (its lenient reader, its YAML
handler's dumper), so a block reads and looks as the server's own.
"""

from __future__ import annotations

import re
from typing import Any

from shared.errors import InvalidFrontmatterError
from shared.frontmatter import clean_text, parse_frontmatter
from shared.frontmatter_reader import VaultYAMLHandler, read_frontmatter


def split_note(text: str) -> tuple[dict[str, Any], str]:
    """``(meta, body)``; a note without a readable frontmatter block has ``meta == {}``.

    The lenient reader of ``shared.frontmatter_reader`` (a duplicate key makes the block
    unreadable instead of letting the last value win); values keep their YAML types.
    """
    return read_frontmatter(text)


def unreadable_block(text: str) -> str | None:
    """Why the frontmatter block ``text`` starts with cannot be read (a repeated key, a
    YAML typo), or None when it reads or there is none. ``split_note`` takes such a
    block for body text: a note rendered back from it would carry two blocks."""
    try:
        parse_frontmatter(clean_text(text))
    except InvalidFrontmatterError as err:
        return err.message
    return None


def render_note(meta: dict[str, Any], body: str, *, body_as_is: bool = False) -> str:
    """Frontmatter block + body, with exactly one trailing newline (``body_as_is``: the
    body byte for byte, as an edit of the frontmatter alone keeps it).

    ``InvalidFrontmatterError`` for a value YAML cannot hold (or a block too large).
    """
    block = _HANDLER.export(meta)
    if body_as_is:
        return f"---\n{block}\n---\n{body}"
    return f"---\n{block}\n---\n{body.strip(chr(10))}\n"


_HANDLER = VaultYAMLHandler()
ATX_HEADING = re.compile(r"^#{1,6}\s", re.M)  # a Markdown heading line starts like this
