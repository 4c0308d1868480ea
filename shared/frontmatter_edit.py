"""Changing the string values of a note's frontmatter block in place.

Why not parse and dump the block again: a person's block (comments, key order, quoting,
folded lines) must keep its bytes, and only the values that change may change. Why not
edit the block as text: a value's new text may need other quoting (a ``'`` in a
single-quoted value, `` #`` in a plain one starts a comment), or the block breaks and
the note loses its id, created and every property. So each changed value is written
anew, as YAML, where YAML's own reading found it; the block is then read back, and kept
only when it reads as the old one with just those values changed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import yaml

from shared.errors import InvalidFrontmatterError
from shared.frontmatter import clean_text, parse_frontmatter, split_frontmatter
from shared.yaml_dialect import compose

Change = Callable[[str], str]

_LINE_END = re.compile(r"(\r\n|\r|\n)")  # what a note's reading takes for a line end
_BREAKS = frozenset("\n\r\x85\u2028\u2029")  # YAML line breaks (folded inside quotes)


def edit_string_values(text: str, change: Change) -> tuple[str, str]:
    """(frontmatter part, body) of a note's ``text``, the part (its ``---`` lines
    included, ``""`` when there is none) with ``change`` applied to each string value
    (keys stay). The part is returned as it was when its block cannot be read, or
    would not read back as the same values with only the changed ones changed."""
    head_end = _head_end(text)
    if head_end == 0:
        return "", text
    head, body = text[:head_end], text[head_end:]
    try:
        meta, _ = parse_frontmatter(head)
        block, _ = split_frontmatter(clean_text(head))
    except InvalidFrontmatterError:
        return head, body
    expected = _changed(meta, change)
    if block is None or repr(expected) == repr(meta):
        return head, body
    start = _after_lines(head, 1)
    end = _after_lines(head, 1 + block.count("\n"))
    raw_block = head[start:end]
    try:
        edits = list(_edits(compose(raw_block), change))
    except Exception:  # PyYAML raises more than YAMLError on odd input
        return head, body
    for write in (_in_own_style, _quoted, _double_quoted):
        candidate = head[:start] + _apply(raw_block, edits, write) + head[end:]
        try:
            again, _ = parse_frontmatter(candidate)
        except InvalidFrontmatterError:
            continue
        if repr(again) == repr(expected):  # (repr: same types, key order and offsets)
            return candidate, body
    return head, body


def _head_end(text: str) -> int:
    """Where the frontmatter part of ``text`` ends (after its closing ``---`` line), 0
    when it opens no block. A block too large to read is still one: its end is found."""
    clean = clean_text(text)
    try:
        block, body = split_frontmatter(clean)
    except InvalidFrontmatterError:
        if not clean.startswith("---\n"):
            return 0
        close = clean.find("\n---\n", 3)
        if close != -1:
            return _after_lines(text, clean.count("\n", 0, close + 5))
        return len(text) if clean.endswith("\n---") else 0  # (else never closed: body)
    if block is None:
        return 0
    if not body:
        return len(text)
    return _after_lines(text, clean.count("\n", 0, len(clean) - len(body)))


def _after_lines(text: str, count: int) -> int:
    """Index in ``text`` just past its ``count``-th line end (``count`` >= 1)."""
    index = 0
    for number, match in enumerate(_LINE_END.finditer(text), start=1):
        index = match.end()
        if number == count:
            break
    return index


def _changed(value: Any, change: Change) -> Any:
    """``value`` with ``change`` applied to each string in it, keys left alone."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {key: _changed(item, change) for key, item in value.items()}
    if isinstance(value, list):
        return [_changed(item, change) for item in value]
    return value


Edit = tuple[yaml.ScalarNode, str]  # the scalar as found, its new value


def _edits(node: yaml.Node | None, change: Change) -> Iterator[Edit]:
    """The scalar values (not keys) below ``node`` that ``change`` changes."""
    if isinstance(node, yaml.MappingNode):
        for _, value in node.value:
            yield from _edits(value, change)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _edits(item, change)
    elif isinstance(node, yaml.ScalarNode):
        new = change(node.value)
        if new != node.value:
            yield node, new


Write = Callable[[yaml.ScalarNode, str, str], str]  # (scalar, its text, new value) -> text


def _apply(block: str, edits: list[Edit], write: Write) -> str:
    """``block`` with each edited scalar written anew by ``write``. A block scalar
    (``|``, ``>``) keeps the line ends that follow its text."""
    parts: list[str] = []
    last = 0
    for node, new in sorted(edits, key=lambda edit: edit[0].start_mark.index):
        start, end = node.start_mark.index, node.end_mark.index
        old = block[start:end]
        if node.style in ("|", ">"):
            old = old.rstrip("\r\n")
            end = start + len(old)
        parts += [block[last:start], write(node, old, new)]
        last = end
    parts.append(block[last:])
    return "".join(parts)


def _in_own_style(node: yaml.ScalarNode, old: str, value: str) -> str:
    """Plain stays plain, quoted stays quoted and a literal block (``|``) keeps its
    lines when it can (the block is read back to tell)."""
    if node.style == "'":
        return _quoted(node, old, value)
    if node.style == "|":
        return _literal_lines(old, node.value, value) or _double_quoted(node, old, value)
    if node.style in ('"', ">") or _BREAKS.intersection(value):
        return _double_quoted(node, old, value)
    return value


def _literal_lines(old: str, old_value: str, value: str) -> str | None:
    """A literal block scalar's text with the lines that changed replaced in place
    (each of its lines is its indentation and one line of the value); None when the
    value's lines do not pair with the old ones."""
    pieces = _LINE_END.split(old)  # header, line end, line, line end, line...
    old_lines, new_lines = old_value.split("\n"), value.split("\n")
    if len(old_lines) != len(new_lines):
        return None
    for number, (before, after) in enumerate(zip(old_lines, new_lines, strict=True)):
        index = 2 + 2 * number
        if before == after:
            continue
        if index >= len(pieces) or not pieces[index].endswith(before):
            return None
        pieces[index] = pieces[index][: len(pieces[index]) - len(before)] + after
    return "".join(pieces)


def _quoted(node: yaml.ScalarNode, old: str, value: str) -> str:
    """Single-quoted (readable) when the value allows it, else double-quoted."""
    if _BREAKS.intersection(value) or not all(map(_printable, value)):
        return _double_quoted(node, old, value)
    return "'" + value.replace("'", "''") + "'"


_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def _double_quoted(node: yaml.ScalarNode, old: str, value: str) -> str:
    """Double-quoted, escaping what YAML would not read back as itself."""
    out = []
    for char in value:
        code = ord(char)
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char not in _BREAKS and _printable(char):
            out.append(char)
        elif code <= 0xFF:
            out.append(f"\\x{code:02X}")
        elif code <= 0xFFFF:
            out.append(f"\\u{code:04X}")
        else:
            out.append(f"\\U{code:08X}")
    return '"' + "".join(out) + '"'


def _printable(char: str) -> bool:
    """Whether YAML takes ``char`` as it is in a quoted scalar (its printable set)."""
    code = ord(char)
    return (
        char in "\t\n\r\x85"
        or 0x20 <= code <= 0x7E
        or 0xA0 <= code <= 0xD7FF
        or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
        or 0x10000 <= code <= 0x10FFFF
    )
