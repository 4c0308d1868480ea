"""Split a note into frontmatter and body, and put them back together (client side).

The server normalizes every ``.md`` it writes, so the client only needs a faithful
split and a plain render; values it does not touch are passed through unchanged.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import yaml

from shared.frontmatter import read_frontmatter
from shared.timestamps import format_timestamp


def split_note(text: str) -> tuple[dict[str, Any], str]:
    """``(meta, body)``; a note without a readable frontmatter block has ``meta == {}``.

    The lenient reader of ``shared.frontmatter`` (a duplicate key makes the block
    unreadable instead of letting the last value win); dates come back as ISO text.
    """
    meta, body = read_frontmatter(text)
    return {k: _plain(v) for k, v in meta.items()}, body


def render_note(meta: dict[str, Any], body: str) -> str:
    """Frontmatter block + body, with exactly one trailing newline."""
    block = yaml.safe_dump(
        {k: _plain(v) for k, v in meta.items()},
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=None,
        width=1000,
    )
    return f"---\n{block}---\n{body.strip(chr(10))}\n"


def _plain(value: Any) -> Any:
    """Dates back to ISO text, so a round trip does not reformat them."""
    if isinstance(value, datetime):
        return format_timestamp(value)
    if isinstance(value, date):
        return value.isoformat()
    return value
