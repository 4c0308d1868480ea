"""A note file's bytes -> the index row (title, type, tags, frontmatter JSON, body, ...).

Never fails on content: a file whose frontmatter cannot be read is indexed with its
whole text as the body and the reason kept in ``problem`` (the file is not touched).
The FTS inputs are derived from the stored row by ``fts_values``/``trigram_value`` and
nothing else, because contentless FTS5 tables need the very same values to delete a
row: change what they compute and you must bump ``index_schema.SCHEMA_VERSION``. A
row depends on the file's path only through its name (a fallback title, a text file's
type): ``batch_sync`` re-keys the row of a file moved with the same name and bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import PurePosixPath
from typing import Any

from indexer.index.abstract import note_abstract, past_broken_block
from indexer.index.inline_tags import inline_tags
from indexer.index.text import fold, fold_tag, word_text
from indexer.vault.fsops import MAX_SEARCHED_BYTES, etag_of
from shared.body_title import title_from_body
from shared.errors import InvalidFrontmatterError
from shared.filetypes import is_plain_text_name
from shared.frontmatter import parse_frontmatter, scalar_text, string_list

MAX_INDEXED_BYTES = MAX_SEARCHED_BYTES
# Frontmatter keys with their own column, or noise for full-text search.
_NOT_META_TEXT = frozenset({"title", "tags", "id", "created", "updated"})


@dataclass(frozen=True, slots=True)
class NoteRow:
    """What the index stores for one note (besides lang, path, size, mtime)."""

    title: str
    type: str | None
    abstract: str  # one line, at most 200 characters (``indexer.index.abstract``)
    tags: str  # JSON list of strings
    tag_keys: str  # JSON list: the tags folded as the filter compares them, once each
    frontmatter: str  # JSON object
    body: str
    head: str  # the file's text before ``body`` (or all of it when not ``joined``)
    joined: bool  # head + body is the file's exact text
    exact: bool  # the text is the file's strict UTF-8 decoding (grep may trust it)
    hash: str
    problem: str | None
    words: tuple[str, str, str, str]  # FTS columns title, tags, body, meta (not stored)


def _tag_key(tag: str) -> str:
    """A tag as the filter compares it: folded, without a closing ``/`` (``project/``
    is ``project``, and a parent of ``project/alpha``)."""
    return fold_tag(tag).rstrip("/")


def parse_note(data: bytes, relpath: str) -> NoteRow:
    """Build the row of a note from its bytes; ``relpath`` gives the fallback title.

    A plain text file (``.txt``, ``.json``...) has no frontmatter: its title is its file
    name, its type its suffix (``txt``), its body the whole text."""
    digest = etag_of(data)
    name = PurePosixPath(relpath)
    plain = is_plain_text_name(name.name)
    stem = name.name if plain else name.stem
    kind = name.suffix[1:] if plain else None
    if len(data) > MAX_INDEXED_BYTES:
        too_big = f"larger than {MAX_INDEXED_BYTES} bytes: only its name is indexed"
        words = _word_columns(stem, [], "", {})
        return NoteRow(
            stem, kind, stem, "[]", "[]", "{}", "", "", True, False, digest, too_big, words
        )
    problem: str | None = None
    try:
        text = data.decode("utf-8")
        exact = True
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        exact = False
        problem = "not valid UTF-8 (undecodable bytes shown as U+FFFD)"
    if plain:
        words = _word_columns(stem, [], text, {})
        abstract = note_abstract({}, text, stem, markdown=False)
        return NoteRow(
            stem, kind, abstract, "[]", "[]", "{}", text, "", True, exact, digest, problem, words
        )
    try:
        meta, body = parse_frontmatter(text)
    except InvalidFrontmatterError as err:
        meta, body = {}, text
        problem = f"invalid frontmatter, indexed as body text: {err.message}"
    # (a block that cannot be read is searched as text, but is no abstract)
    prose = past_broken_block(body) if body is text else body
    joined = text.endswith(body)
    head = text[: len(text) - len(body)] if joined else text
    meta = _jsonable(meta)
    title = meta.get("title")  # (a typed one as written: `true`, as a write keeps it)
    title = scalar_text(title) if isinstance(title, str | int | float) else ""
    if title == "":
        title = title_from_body(prose) or stem
    kind = meta.get("type")
    tags = string_list("tags", meta.get("tags"), strict=False)
    return NoteRow(
        title=title,
        type=None if kind is None or isinstance(kind, dict | list) else scalar_text(kind),
        abstract=note_abstract(meta, prose, title),
        tags=json.dumps(tags, ensure_ascii=False),
        tag_keys=json.dumps(
            list(dict.fromkeys(k for t in [*tags, *inline_tags(prose)] if (k := _tag_key(t)))),
            ensure_ascii=False,
        ),
        frontmatter=json.dumps(meta, ensure_ascii=False),
        body=body,
        head=head,
        joined=joined,
        exact=exact,
        hash=digest,
        problem=problem,
        words=_word_columns(title, tags, body, meta),
    )


def lang_token(lang: str) -> str:
    """One unicode61 token per lang (``zh-Hans`` would otherwise be two)."""
    return "l" + lang.encode().hex()


def fts_values(
    lang: str, title: str, tags: str, body: str, frontmatter: str
) -> tuple[str, str, str, str, str]:
    """Columns (title, tags, body, meta, lang) of the word table, from the stored row."""
    meta = json.loads(frontmatter)
    words = _word_columns(title, json.loads(tags), body, meta if isinstance(meta, dict) else {})
    return (*words, lang_token(lang))


def _word_columns(
    title: str, tags: list[str], body: str, meta: dict[str, Any]
) -> tuple[str, str, str, str]:
    strings: list[str] = []
    for key, value in meta.items():
        if key not in _NOT_META_TEXT:
            _strings(value, strings)
    return (
        word_text(title),
        word_text(" ".join(tags)),
        word_text(body),
        word_text("\n".join(strings)),
    )


def trigram_value(head: str, body: str, joined: bool) -> str:
    """The folded text of the whole file, for grep's trigram table."""
    return fold(head + body if joined else head)


def _strings(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for item in value:
            _strings(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            _strings(item, out)


def _jsonable(value: Any) -> Any:
    """Plain JSON data: dates become ISO strings, keys strings."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime | date):
        return value.isoformat()
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)
