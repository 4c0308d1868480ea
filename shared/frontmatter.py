"""Safe parsing and normalization of a note's YAML frontmatter (the SPEC's rules).

Why hand-rolled splitting and a custom loader: the block must be taken byte-exactly
(first line ``---`` up to the next line ``---``), and PyYAML's safe loader silently lets
the last duplicate key win, which could smuggle a value into a protected field. Anchors
and aliases are refused outright (alias bombs), and every value must be plain data.

Two sides, two strengths. The write path (``normalize_frontmatter_text``, applied by the
server to every note it writes) is strict: it refuses what it cannot keep exactly. The
read side of notes written by people (``shared.frontmatter_reader``) is lenient: a block
it cannot read is simply body text.

``normalize_frontmatter_text`` is idempotent for a given clock: ``updated`` is set to
``now`` on every call, so normalizing a normalized text with the same ``now`` returns
it unchanged. To make that hold for any input, it reads its own output back before
returning it and refuses (``invalid_frontmatter``) what would not read back identically:
a note the server writes can always be parsed and normalized again.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import re
import time
from datetime import UTC, date, datetime
from typing import Any

import yaml

from shared.body_title import title_from_body
from shared.errors import InvalidFrontmatterError
from shared.reader_folds import tag_key
from shared.yaml_dialect import (
    MAX_INT_DIGITS,
    NoteDumper,
    PlainNoteDumper,
    StrictLoader,
    parse_events,
    scalar_text,
)
from shared.yaml_entries import DUMP_OPTIONS, dump_entries, read_entries

MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_DEPTH = 16
CACHED_BLOCK_CHARS = 4096  # larger blocks are parsed every time (the cache stays small)
MAX_ID_CHARS = 200
MAX_TITLE_CHARS = 200  # a title derived from a heading or the file stem
CANONICAL_KEYS = ("id", "title", "type", "tags", "aliases", "created", "updated")
PROTECTED_KEYS = ("id", "created")
LIST_KEYS = ("tags", "aliases")

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_INT_LIMIT = 10**MAX_INT_DIGITS


def new_note_id(now_ms: int | None = None) -> str:
    """A ULID: 48-bit millisecond time + 80 random bits, Crockford base32, sortable."""
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    number = (ms << 80) | int.from_bytes(os.urandom(10), "big")
    return "".join(_CROCKFORD[(number >> shift) & 31] for shift in range(125, -1, -5))


def split_frontmatter(text: str) -> tuple[str | None, str]:
    """Split ``text`` (LF, no BOM) into (yaml block or None, body) without parsing."""
    if not (text.startswith("---\n") or text == "---"):
        return None, text
    end = text.find("\n---\n", 3)
    if end == -1:
        if text.endswith("\n---"):
            end = len(text) - 4
        elif text.startswith("---\n---"):
            end = 3
        else:
            raise InvalidFrontmatterError("the frontmatter block opened with --- is never closed")
    block = text[4 : end + 1] if end > 3 else ""
    body = text[end + 5 :]
    if len(block.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise InvalidFrontmatterError(
            f"the frontmatter block is larger than {MAX_FRONTMATTER_BYTES} bytes"
        )
    return block, body


def parse_yaml_block(block: str) -> dict[str, Any]:
    """Parse one frontmatter block with the strict safe loader; plain data only.

    A write parses the same block up to three times (the note it replaces, its own
    output read back, the index's parse of the file): the last few small blocks parsed
    are kept, and each caller gets its own copy to change."""
    if not block.strip():
        return {}
    if len(block) > CACHED_BLOCK_CHARS:
        return _parse_yaml_block(block)
    return _copied(_parse_cached(block))


@functools.lru_cache(maxsize=256)
def _parse_cached(block: str) -> dict[str, Any]:
    return read_entries(block, parse_yaml_block) or _parse_yaml_block(block)


def _copied(value: Any) -> Any:
    """A copy of parsed data deep enough to change freely (its scalars are immutable)."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


def _parse_yaml_block(block: str) -> dict[str, Any]:
    try:
        # An anchor needs a '&' and an alias a '*': only then walk the events (costly).
        if "&" in block or "*" in block:
            for event in parse_events(block):
                if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                    raise InvalidFrontmatterError("YAML anchors and aliases are not allowed")
        data = yaml.load(block, Loader=StrictLoader)
    except InvalidFrontmatterError:
        raise
    except yaml.YAMLError as err:
        reason = _first_line(err)
        raise InvalidFrontmatterError(f"the frontmatter is not valid YAML ({reason})") from None
    except Exception as err:  # PyYAML constructors raise anything on odd input
        # e.g. AttributeError from ``!!timestamp nope``, ValueError from int digit limits.
        reason = _first_line(err)[:200]
        raise InvalidFrontmatterError(
            f"the frontmatter has a value that cannot be read ({reason}); "
            "check its !!tags, numbers and dates"
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InvalidFrontmatterError("the frontmatter must be a mapping of keys to values")
    _check_plain(data, 0)
    return data


def scalar_value(text: str) -> Any:
    """``text`` read as one frontmatter value is (``5`` a number, ``no`` the text);
    ``text`` itself when it is not plain YAML."""
    try:
        return yaml.load(text, Loader=StrictLoader)
    except Exception:  # YAML errors, and what PyYAML's constructors raise on odd input
        return text


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Return (metadata, body) of a note; raises ``InvalidFrontmatterError``."""
    block, body = split_frontmatter(clean_text(text))
    return (parse_yaml_block(block) if block is not None else {}), body


def normalize_frontmatter_text(
    text: str,
    existing: str | None = None,
    now: datetime | None = None,
    stem: str = "",
) -> str:
    """Apply every SPEC normalization rule to a note's text.

    ``existing`` is the text of the file already on disk (if any): its ``id`` and
    ``created`` win over what ``text`` says. ``stem`` is the file name without
    ``.md``, the title of last resort.
    """
    moment = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    meta, body = parse_frontmatter(text)
    body = body.removeprefix("\ufeff")  # a BOM a block was put before (never text)
    _refuse_lookalike_keys(meta)
    kept = _protected_values(existing)
    meta.update(kept)

    if "id" not in kept:
        if meta.get("id") in (None, ""):
            meta["id"] = new_note_id(int(moment.timestamp() * 1000))
        else:
            meta["id"] = _writer_id(meta["id"])
    if meta.get("title") in (None, ""):
        derived = title_from_body(body) or stem or "Untitled"
        meta["title"] = derived[:MAX_TITLE_CHARS].strip() or "Untitled"
    elif not isinstance(meta["title"], str | int | float | date):
        raise InvalidFrontmatterError("title must be a string")
    else:
        meta["title"] = scalar_text(meta["title"])
    for key in LIST_KEYS:
        if key in meta:
            meta[key] = string_list(key, meta[key])
    meta["created"] = (
        moment if meta.get("created") in (None, "") else _timestamp("created", meta["created"])
    )
    meta["updated"] = moment

    ordered = {key: meta.pop(key) for key in CANONICAL_KEYS if key in meta}
    ordered.update(meta)
    body = body.rstrip("\n")
    body = f"{body}\n" if body else ""
    result = f"---\n{dump_block(ordered)}---\n{body}"
    _check_reads_back(result, ordered, body)
    return result


def render_note(meta: dict[str, Any], body: str) -> str:
    """A note's text from its frontmatter and body (normalize it before writing)."""
    return f"---\n{dump_block(meta)}---\n{body}"


def dump_block(meta: dict[str, Any]) -> str:
    """The YAML block for ``meta``, refused when it cannot be written or is too large."""
    options = DUMP_OPTIONS
    try:
        dumped = dump_entries(meta)  # (the same text, from the entries' kept texts)
        if dumped is None:
            dumped = yaml.dump(meta, Dumper=NoteDumper, **options)
        if "\\U" in dumped:  # libyaml escaped a character past U+FFFF (or wrote "\\U")
            plain = yaml.dump(meta, Dumper=PlainNoteDumper, **options)
            # (taken when it reads back the same)
            with contextlib.suppress(InvalidFrontmatterError):
                if _same(parse_yaml_block(plain), meta):
                    dumped = plain
    except Exception as err:  # a value the dumper cannot write is a refusal
        reason = _first_line(err)[:200]
        raise InvalidFrontmatterError(f"the frontmatter cannot be written ({reason})") from None
    if len(dumped.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise InvalidFrontmatterError(
            f"the normalized frontmatter would be larger than {MAX_FRONTMATTER_BYTES} bytes"
        )
    return dumped


def _check_reads_back(result: str, meta: dict[str, Any], body: str) -> None:
    """Refuse a normalized text that would not parse back to exactly ``meta`` and ``body``.

    This is what makes normalization idempotent and keeps a poisoned note (one whose
    next read would fail, losing ``id``/``created`` protection) from ever being written.
    """
    try:
        again, again_body = parse_frontmatter(result)
    except InvalidFrontmatterError as err:
        raise InvalidFrontmatterError(
            f"the normalized frontmatter would not read back ({err.message})"
        ) from None
    if again_body != body or not _same(again, meta):
        raise InvalidFrontmatterError(
            "the normalized frontmatter would not read back unchanged; simplify its values"
        )


def _same(left: Any, right: Any) -> bool:
    """Equal with the same types, key order and UTC offsets (``==`` alone says 1 == 1.0)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        return list(left) == list(right) and all(_same(left[k], right[k]) for k in left)
    if isinstance(left, list):
        return len(left) == len(right) and all(map(_same, left, right))
    if isinstance(left, datetime):
        return bool(left == right) and left.utcoffset() == right.utcoffset()
    return bool(left == right)


def clean_text(text: str) -> str:
    """LF line endings and no BOM."""
    if text.startswith("\ufeff"):
        text = text[1:]
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__


def _check_plain(value: Any, depth: int) -> None:
    """Refuse anything that is not plain JSON-like data (or a date), or nests too deep."""
    if depth > MAX_DEPTH:
        raise InvalidFrontmatterError(f"the frontmatter nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidFrontmatterError(f"frontmatter key {key!r} is not a string")
            _check_plain(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _check_plain(item, depth + 1)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidFrontmatterError("frontmatter numbers must be finite")
    elif isinstance(value, int) and abs(value) >= _INT_LIMIT:
        raise InvalidFrontmatterError(
            f"frontmatter integers may have at most {MAX_INT_DIGITS} digits"
        )
    elif not isinstance(value, str | int | bool | date | type(None)):
        raise InvalidFrontmatterError(f"frontmatter value of type {type(value).__name__}")


def _refuse_lookalike_keys(meta: dict[str, Any]) -> None:
    for key in meta:
        folded = key.strip().casefold()
        if folded in CANONICAL_KEYS and key != folded:
            raise InvalidFrontmatterError(
                f"key {key!r} looks like {folded!r}: write it as {folded}"
            )


def _protected_values(existing: str | None) -> dict[str, Any]:
    """``id``/``created`` of the file on disk (read line by line from a block that does
    not parse: a typo elsewhere in it must not change the note's identity).

    An existing ``id`` is kept even when it would be refused from a writer (newlines,
    over-long, control characters): protection is about a note never changing identity,
    the value on disk was accepted once or typed by a person, and refusing it would make
    the note unwritable since no writer may change it. Only a blank one (spaces) counts
    as missing, as ``""`` does, so the note gets a real id. One YAML typed (``2.5``,
    ``20240501.1``, ``True``, ``2024-05-01``) is its text as written.
    """
    if existing is None:
        return {}
    try:
        meta, _ = parse_frontmatter(existing)
    except InvalidFrontmatterError:
        meta = _salvaged(existing)
    else:
        if not isinstance(meta.get("id"), str | None):  # (a number, a boolean, a date)
            meta["id"] = _written_id(existing)
    kept: dict[str, Any] = {}
    old_id = meta.get("id")
    if isinstance(old_id, str) and old_id.strip():
        kept["id"] = old_id
    if meta.get("created") not in (None, ""):
        with contextlib.suppress(InvalidFrontmatterError):
            kept["created"] = _timestamp("created", meta["created"])
    return kept


def _salvaged(existing: str) -> dict[str, Any]:
    """The ``id`` and ``created`` of a frontmatter block that does not parse as a whole:
    the first of each at the block's top level as YAML reads it up to where it fails (a
    duplicate key parses whole, a quoted id reads as quoted, a line of a multi-line value
    is no key); then, for a key that reading did not reach, the first line written as
    that key (``id:``, ``id :``, ``"id":``), read on its own, an ``id`` only when it is
    one plain token (a line of a multi-line value is seldom that)."""
    try:
        block, _ = split_frontmatter(clean_text(existing))
    except InvalidFrontmatterError:  # never closed, or too large: nothing read from it
        return {}
    found = _top_level_values(block or "", ("id", "created"))
    for line in (block or "").split("\n"):  # (not splitlines: U+2028 ends no YAML line)
        matched = _SALVAGED_KEY.match(line)
        if matched is None or matched["key"] in found:
            continue
        key, value = matched["key"], matched["value"].strip()
        if key == "id" and not _PLAIN_ID.fullmatch(value):
            continue
        with contextlib.suppress(InvalidFrontmatterError):
            read = parse_yaml_block(f"{key}: {value}")[key]
            found[key] = value if key == "id" and read is not None else read
    return found


def _written_id(existing: str) -> str | None:
    """The top-level ``id`` of a block that parses, as written (None when it is no
    scalar, or null)."""
    block, _ = split_frontmatter(clean_text(existing))
    written = _top_level_values(block or "", ("id",)).get("id")
    return written if isinstance(written, str) else None


def _top_level_values(block: str, keys: tuple[str, ...]) -> dict[str, Any]:
    """The first scalar value of each of ``keys`` in the block's top-level mapping, read
    from YAML's events up to where they fail (no value is built but these; one with an
    explicit tag is its text, and so is an ``id`` that is not null)."""
    found: dict[str, Any] = {}
    depth, key, at_key = 0, None, True  # depth 1: the top-level mapping's keys and values
    with contextlib.suppress(yaml.YAMLError):
        for event in parse_events(block):
            if isinstance(event, yaml.CollectionStartEvent):
                if depth == 1 and at_key:
                    key = None  # a collection as a key (refused anyway): its value follows
                depth += 1
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
                if depth == 1:
                    at_key = not at_key
            elif depth == 1 and isinstance(event, yaml.ScalarEvent | yaml.AliasEvent):
                if isinstance(event, yaml.ScalarEvent) and at_key:
                    key = event.value
                elif isinstance(event, yaml.ScalarEvent) and key in keys and key not in found:
                    plain = not event.style and event.tag is None  # (C parser: style "")
                    value = scalar_value(event.value) if plain else event.value
                    found[key] = event.value if key == "id" and value is not None else value
                at_key = not at_key
    return found


# The commas a list is typed with, in each script that has its own: ASCII's, Arabic's
# (Persian, Urdu), the full-width, ideographic, small and half-width ones of Chinese and
# Japanese, Armenian's, Ethiopic's, Mongolian's (and Manchu's), NKo's, Vai's, Lisu's,
# and the reversed comma (Sindhi). A tag never holds one (Obsidian ends a tag there).
LIST_COMMAS = re.compile(
    "[,\u060c\uff0c\u3001\ufe50\ufe51\uff64\u055d\u1363\u1802\u1808\u07f8\ua60d\ua4fe\u2e41]"
)
_SALVAGED_KEY = re.compile(r"""(?P<q>["']?)(?P<key>id|created)(?P=q)[ \t]*:(?P<value>.*)""")
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}")


def _writer_id(value: Any) -> str:
    """A writer's ``id``: one line of printable text, no surrounding spaces, not too long."""
    if isinstance(value, bool) or not isinstance(value, str | int | date):
        raise InvalidFrontmatterError("id must be a string")
    text = scalar_text(value)
    if len(text) > MAX_ID_CHARS or not text.isprintable() or text != text.strip() or not text:
        raise InvalidFrontmatterError(
            f"id must be one line of printable text without surrounding spaces, "
            f"at most {MAX_ID_CHARS} characters (or leave it out to get a new one)"
        )
    return text


def string_list(key: str, value: Any, *, strict: bool = True) -> list[str]:
    """``"a, b"``, ``"#a #b"`` or a list: unique non-empty strings (tags lose a leading
    ``#``, and are unique as the tags filter of search compares them:
    ``reader_folds.tag_key``).

    ``strict`` refuses odd values (what a write may store); lenient mode skips them (what
    the index makes of a note a person wrote). Both split a string at any script's
    comma (``"شعر، أدب"``, ``"数据，索引"``, ``"東京、大阪"``; the index since schema 27:
    an index made before read ASCII's only, and is made anew).
    """
    if value is None:
        return []
    if isinstance(value, str):
        listed = LIST_COMMAS.search(value) is not None
        items: list[Any] = LIST_COMMAS.split(value) if listed else value.split()
        if key == "tags" and listed:  # ``"#a #b, c"``: three tags, not "a #b"
            items = [tag for item in items for tag in hashtags(item)]
    elif isinstance(value, list):
        items = value
    elif strict:
        raise InvalidFrontmatterError(f"{key} must be a list of strings or a string")
    else:
        items = [value]
    # in order, each once (a list's ``in`` made it quadratic); a tag once by ``tag_key``,
    # in its first spelling
    result: dict[str, str] = {}
    for item in items:
        if item is None:  # an empty item (`- ` alone) is no tag, not "None"
            continue
        if isinstance(item, dict | list):
            if not strict:
                continue
            raise InvalidFrontmatterError(f"{key} must hold plain strings, not {item!r}")
        text = scalar_text(item).strip()
        if key == "tags":
            text = text.lstrip("#").strip()
        # (a tag whose key is empty shows nothing: a zero-width space alone is no tag)
        unique = tag_key(text) if key == "tags" else text
        if text and unique:
            result.setdefault(unique, text)
    return list(result.values())


def hashtags(item: str) -> list[str]:
    """An item of a comma list of tags: its ``#words`` when it holds only such, several
    (a tag may hold spaces: ``past tense``, but never starts a second ``#`` word). The
    agent client reads a ``--tag`` value so too: ``--tag '#a #b'`` is two tags."""
    words = item.split()
    if len(words) > 1 and all(word.startswith(("#", "＃")) for word in words):
        return words
    return [item]


def _timestamp(key: str, value: Any) -> datetime:
    """A timezone-aware datetime from a YAML timestamp, date or ISO string."""
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, date):
        moment = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise InvalidFrontmatterError(f"{key} must be an ISO 8601 date-time") from None
    else:
        raise InvalidFrontmatterError(f"{key} must be an ISO 8601 date-time")
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    offset = moment.utcoffset()
    if offset is not None and (offset.seconds % 60 or offset.microseconds):
        # YAML timestamps carry hh:mm offsets only: "+01:00:30" would be dumped as an
        # unreadable ``!!timestamp``, so such a moment is written in UTC instead.
        try:
            moment = moment.astimezone(UTC)
        except OverflowError:
            raise InvalidFrontmatterError(f"{key} is out of range") from None
    return moment
