"""What maintenance may write into USER.md and PROJECT.md of a model's answer.

A model's text is written as a note, so it must not carry what no person typed there:
control characters (a terminal escape printed by ``indexer history --show``, a NUL) and
the bidi embeddings and overrides that make text read other than it is, nor the keys of
a folder summary (``type: summary`` made USER.md a summary to ``search(type="summary")``
and quoted its ``abstract`` in the root's overview; the carry-over of a file's keys then
kept them through every later clean answer), nor an ``id`` or ``created`` of the model's:
the vault keeps a file's own, but a new file (or one a person wrote without them) took
the answer's, an id copied from a note the model read or made up, a ``created`` of any
date. A file is kept short: the model is shown all of it at each run, so a huge one fails
every later run, or is cut and then lost.
"""

from __future__ import annotations

from typing import Any

from shared.errors import InvalidFrontmatterError
from shared.frontmatter import PROTECTED_KEYS, parse_frontmatter, render_note

MAX_FILE_CHARS = 64 * 1024  # of USER.md or PROJECT.md, as written or as it is
# A folder summary's own keys, never a person's: always dropped; its others (a person's
# ``abstract`` or ``categories`` may be theirs) only when the answer brings them.
SUMMARY_ONLY_KEYS = frozenset({"child_count", "children_digest", "generated_by"})
SUMMARY_KEYS = SUMMARY_ONLY_KEYS | {"abstract", "categories"}
_SUMMARY_TYPE = "summary"


def too_long(text: str, name: str) -> str | None:
    """Why ``text`` is too long to be ``name``, or None."""
    if len(text) <= MAX_FILE_CHARS:
        return None
    return (
        f"{name} would be {len(text):,} characters, more than {MAX_FILE_CHARS:,}: it is"
        " shown whole to the model at every run; keep it short"
    )


def without_foreign_keys(content: str, current: str | None) -> str:
    """``content`` (the note to write) without ``type: summary``, a summary's own keys,
    the other summary keys the file did not have before (a person's ``abstract`` stays),
    and ``id`` and ``created`` (the vault writes the file's own, or new ones)."""
    try:
        meta, body = parse_frontmatter(content)
        before = parse_frontmatter(current)[0] if current is not None else {}
    except InvalidFrontmatterError:
        return content  # (the write says what is wrong)
    kept: dict[str, Any] = {
        key: value
        for key, value in meta.items()
        if not (key == "type" and _is_summary_type(value))
        and key not in SUMMARY_ONLY_KEYS
        and key not in PROTECTED_KEYS
        and not (key in SUMMARY_KEYS and key not in before)
    }
    if kept == meta:
        return content
    return render_note(kept, body)


def _is_summary_type(value: object) -> bool:
    return isinstance(value, str) and value.strip().casefold() == _SUMMARY_TYPE
