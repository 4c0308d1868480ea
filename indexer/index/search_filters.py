"""The filters a search takes besides its words: a type, tags (a note must have them
all, nested ones included) and a folder, checked and made SQL conditions."""

from __future__ import annotations

import unicodedata

from indexer.index.text import fold_tag
from shared.errors import InvalidArgumentError
from shared.models import MAX_TAG_CHARS  # (a tag names a topic; NFC of a huge one is slow)
from shared.utf8 import check_text

MAX_TAGS = 32


def search_filters(type_: str | None, tags: list[str] | None, path: str) -> tuple[str, list]:
    """SQL conditions (on alias ``n``) for the type, tags and folder filters."""
    where, params = "", []
    if type_ is not None:
        if not isinstance(type_, str):
            raise InvalidArgumentError("type must be a string")
        check_text("type", type_)  # (SQLite binds UTF-8: a lone surrogate is none)
        # A type is compared as a tag is (``type_key``): ``Item``, ``ｉｔｅｍ`` and
        # ``item`` are one, ``Ghi chú`` typed composed or decomposed, and ``یادداشت``
        # and ``يادداشت``.
        key = fold_tag(type_)
        if not type_.strip() or not key:  # found nothing, silently: a blank or invisible type
            raise InvalidArgumentError(
                f"type must name a type (or be left out): {_why_none(type_, '')}"
            )
        where += " AND n.type_key = ?"
        params.append(key)
    if tags:
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise InvalidArgumentError("tags must be a list of strings")
        for tag in tags:
            check_text("a tag", tag)
        # As a note's tags are read (``string_list``), then folded as the index keeps them
        # (``tag_keys``); counted and measured before they are folded (NFC of a huge one
        # is slow).
        asked = list(dict.fromkeys(t.strip().lstrip("#").strip() for t in tags))
        if len(asked) > MAX_TAGS:
            raise InvalidArgumentError(f"give at most {MAX_TAGS} tags (a note must have them all)")
        if any(len(t) > MAX_TAG_CHARS for t in asked):
            raise InvalidArgumentError(f"a tag is at most {MAX_TAG_CHARS} characters")
        folded = [fold_tag(t).rstrip("/") for t in asked]
        if "" in folded:  # found nothing, silently; no note's tag is blank
            empty = asked[folded.index("")]
            given = next(t for t in tags if t.strip().lstrip("#").strip() == empty)
            raise InvalidArgumentError(
                f"each tag must name a tag (or leave tags out): {_why_none(given, '#/')}"
            )
        tags = list(dict.fromkeys(folded))
        # A tag finds the tags nested below it too (``project`` finds ``project/alpha``,
        # as Obsidian's tag search does: those keys sort between ``project/`` and
        # ``project0``).
        for tag in tags:
            where += (
                " AND EXISTS (SELECT 1 FROM json_each(n.tag_keys)"
                " WHERE value = ? OR (value > ? AND value < ?))"
            )
            params += [tag, tag + "/", tag + "0"]
    if path:
        if not isinstance(path, str):
            raise InvalidArgumentError("path must be a string")
        check_text("path", path)
        # A folder the caller checked (``clean_relpath``): its white space is part of
        # its name (`` Inbox`` is not ``Inbox``).
        folder = path.strip("/")
        if folder:
            where += " AND (n.path = ? OR (n.path > ? AND n.path < ?))"
            params += [folder, folder + "/", folder + "0"]
    return where, params


_UNSEEN = ("Cf", "Cc", "Mn", "Me", "Zs", "Zl", "Zp", "Co", "Cn")


def _why_none(given: str, marks: str) -> str:
    """Why ``given`` (a tag or a type, as sent) names none, shown escaped: a caller who
    sent ``tag=<U+202E>`` read only "must name a tag", not what was read as nothing."""
    shown = "'" + "".join(map(_shown, given[:40])) + ("'…" if len(given) > 40 else "'")
    if not given.strip():
        return f"{shown} is blank"
    kept = given.strip().strip(marks).strip()
    if not kept:
        return f"{shown} holds only {' or '.join(repr(m) for m in marks)}"
    unseen = [c for c in kept if unicodedata.category(c) in _UNSEEN]
    if len(unseen) == len(kept):
        points = ", ".join(f"U+{ord(c):04X}" for c in list(dict.fromkeys(unseen))[:5])
        return f"{shown} holds only invisible, format or combining characters ({points})"
    return f"{shown} names nothing once folded as tags are"


def _shown(char: str) -> str:
    """``char`` as a refusal shows it: escaped when it draws nothing of its own."""
    if (unicodedata.category(char) in _UNSEEN and char != " ") or not char.isprintable():
        return f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}"
    return repr(char)[1:-1] if char in "'\\" else char
