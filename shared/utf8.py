"""Text that can travel as UTF-8, and the strings inside nested values.

A lone UTF-16 surrogate (``json.loads('"\\ud800"')``, or bytes that were not UTF-8 read
with ``surrogateescape``) is a valid ``str`` but no UTF-8 text: no file, index, log or
transport can carry it. Both sides refuse it where it enters: the agent client before
sending, the server at its MCP boundary, the background jobs in a model's answer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from shared.errors import InvalidArgumentError

NOT_UTF8_TEXT = "is not UTF-8 text"  # (an append's refusal: the writer's events go on in DD-2.md)


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` decodes as UTF-8 (ASCII, the common case, is told at once)."""
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def utf8_problem(text: str) -> str | None:
    """Why ``text`` cannot travel as UTF-8, or None when it can."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"{text[exc.start]!r} at index {exc.start} is a lone surrogate, not a character"
    return None


def check_text(what: str, text: str) -> None:
    """``InvalidArgumentError`` naming ``what`` when ``text`` holds a lone surrogate:
    SQLite and re2 take UTF-8, and a caller that passes text on unchecked (the CLI's
    ``indexer search``, a job) got a ``UnicodeEncodeError`` from deep inside a search."""
    problem = utf8_problem(text)
    if problem is not None:
        raise InvalidArgumentError(f"{what} is not valid text: {problem}")


def field_not_text(fields: Mapping[str, object]) -> str | None:
    """The name of the first of ``fields`` (a call's arguments, a JSON object) whose name or
    value (nested) holds text that cannot travel as UTF-8, or None: every frontend names
    the argument it refuses alike (the MCP tools, their HTTP transport, the REST bodies)."""
    for key, value in fields.items():
        if any(utf8_problem(text) is not None for text in texts_in([key, value])):
            return key
    return None


def texts_in(value: object) -> Iterator[str]:
    """Every string in a JSON-like value, keys included (frontmatter, tool arguments and
    model answers nest), in order. Walked with a stack of its own: JSON nested deeper
    than Python recurses (a body ``json.loads`` still reads) raised ``RecursionError``,
    a 500 and a traceback where a lone surrogate's refusal was due."""
    stack = [value]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            yield value
        elif isinstance(value, Mapping):
            stack.extend(reversed([text for pair in value.items() for text in pair]))
        elif isinstance(value, list | tuple):
            stack.extend(reversed(value))


def without_surrogates(value: object) -> object:
    """``value`` (parsed JSON) with every lone surrogate in its strings replaced by
    U+FFFD, for text that is worth keeping anyway (a model's tool arguments)."""
    if isinstance(value, str):
        if utf8_problem(value) is None:
            return value
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, dict):
        return {without_surrogates(k): without_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_surrogates(item) for item in value]
    return value


def whole_characters(data: bytes, *, cut_before: bool = False, cut_after: bool = False) -> str:
    """``data`` decoded (bytes that are not UTF-8 as U+FFFD), but a character that a
    cut of the file split at either edge (``cut_before``: ``data`` is a file's tail;
    ``cut_after``: its head) is left out, not shown as a U+FFFD of its own."""
    if cut_before:
        skip = 0
        while skip < min(3, len(data)) and 0x80 <= data[skip] <= 0xBF:
            skip += 1  # (continuation bytes of a character that began before the cut)
        data = data[skip:]
    if cut_after:
        for back in range(1, min(4, len(data)) + 1):
            byte = data[-back]
            if byte < 0x80:
                break  # (ASCII: nothing was split)
            if byte >= 0xC0:  # the last character's lead byte: is all of it there?
                needed = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
                if back < needed:
                    data = data[:-back]
                break
    return data.decode("utf-8", "replace")
