"""The lenient read of notes written by people (the agent client, recall, summaries).

It goes through python-frontmatter's handler API with ``shared.frontmatter``'s byte-exact
splitter and strict loader as the handler; a block it cannot read is simply body text
(the server's write path is the strict side, and refuses it).
"""

from __future__ import annotations

import re
from typing import Any

import frontmatter as pyfm

from shared.errors import InvalidFrontmatterError
from shared.frontmatter import clean_text, dump_block, parse_yaml_block, split_frontmatter


class VaultYAMLHandler(pyfm.default_handlers.BaseHandler):
    """python-frontmatter handler with this module's rules: the byte-exact ``---`` split
    and the strict loader (no duplicate keys, no aliases, plain data only)."""

    FM_BOUNDARY = re.compile(r"^---$", re.MULTILINE)
    START_DELIMITER = END_DELIMITER = "---"

    def split(self, text: str) -> tuple[str, str]:
        block, body = split_frontmatter(text)
        if block is None:
            raise ValueError("no frontmatter block")  # python-frontmatter: "no metadata"
        return block, body

    def load(self, fm: str, **kwargs: object) -> dict[str, Any]:
        return parse_yaml_block(fm)

    def export(self, metadata: dict[str, object], **kwargs: object) -> str:
        return dump_block(dict(metadata)).rstrip("\n")


_HANDLER = VaultYAMLHandler()


def read_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Lenient read of a note: (metadata, body).

    A block that cannot be read (or none at all) gives ``({}, text)``: a person's odd
    note is still a note. Use ``parse_frontmatter`` where a refusal must be seen. A BOM
    another program put first is not body text: a block added before that body put it
    in the note's middle, an invisible character that made the heading no heading.
    """
    # The handler's steps, not ``pyfm.parse``: that strips the body, and a note's body
    # goes back to disk byte for byte.
    cleaned = clean_text(text)
    try:
        block, body = _HANDLER.split(cleaned)
        return _HANDLER.load(block), body
    except (ValueError, InvalidFrontmatterError):
        return {}, text.removeprefix("\ufeff")
