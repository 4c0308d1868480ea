"""The frontmatter keys a merging model's note may not set: the vault's and the summaries'.

A note the model created kept the ``id`` it wrote (one copied from a note it had read,
two notes of one id; the prompt's example ``01JD3Q...`` for every new note), the
``created`` it made up, and ``type: summary`` with a folder summary's own keys, which
hides a note from every default search and from recall. The vault keeps a file's own
``id`` and ``created`` and gives a new file new ones: the model's lines are dropped
unless they are the note's as read (the prompt tells it to keep those). A summary's
keys are dropped unless the note as read had them (a person's). The indexer's
maintenance keeps the same rule for USER.md and PROJECT.md
(``indexer.jobs.maintenance_output``); a knowledge note may keep the model's
``abstract``, which is what a folder summary quotes of it.

Only those lines go: the rest of the block stays as the model wrote it (YAML read and
written again would turn ``on: monday`` into ``true: monday``).
"""

from __future__ import annotations

import re
from typing import Any

from shared.errors import InvalidFrontmatterError
from shared.frontmatter import (
    PROTECTED_KEYS,
    clean_text,
    parse_frontmatter,
    parse_yaml_block,
    split_frontmatter,
)

SUMMARY_ONLY_KEYS = frozenset({"child_count", "children_digest", "generated_by"})
# A top-level key's line of a frontmatter block, the key as written in group 2.
KEY_LINE = re.compile(r"""(["']?)([^\s"'#:\-\[{][^:]*?)\1[ \t]*:(?:[ \t]|$)""")


def without_model_keys(content: str, read: str | None) -> str:
    """``content`` without its lines of ``id``, ``created``, ``type: summary`` and a
    summary's own keys, but for what ``read`` (the note as the model read it, None for a
    new one) held as they are; as written when it has none of them (or its block cannot
    be read: the write says why)."""
    try:
        block, body = split_frontmatter(clean_text(content))
        meta = parse_yaml_block(block) if block else {}
        before = parse_frontmatter(read)[0] if read is not None else {}
    except InvalidFrontmatterError:
        return content
    drop = {key for key, value in meta.items() if _foreign(key, value, before)}
    if block is None or not drop:
        return content
    kept, dropping = [], False
    for line in block.splitlines(keepends=True):
        key = KEY_LINE.match(line)
        if key is not None:  # (the lines after a key's, indented or "- ", are its value)
            dropping = key.group(2) in drop
        if not dropping:
            kept.append(line)
    return f"---\n{''.join(kept)}---\n{body}"


def _foreign(key: object, value: Any, before: dict[str, Any]) -> bool:
    if key in PROTECTED_KEYS:  # (as read, it is what the vault keeps: a text sent back)
        return bool(value != before.get(key))
    if key == "type":
        return _is_summary(value) and not _is_summary(before.get("type"))
    return key in SUMMARY_ONLY_KEYS and key not in before


def _is_summary(value: object) -> bool:
    return isinstance(value, str) and value.strip().casefold() == "summary"
