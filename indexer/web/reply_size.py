"""A read-only tool's answer is bounded by what an MCP client takes in one message.

The TypeScript SDK reads a stdio message into a buffer of at most 10 MiB and closes the
connection past it. Claude Desktop reaches this server through ``mcp-remote``, a stdio
bridge; a tool's result is in its answer twice (the structured content, and the text
block holding the same JSON as a string, escaped once more), so one ``read`` of a 4 MiB
note of quotes and backslashes, within ``INDEXER_MAX_FILE_BYTES``, was an answer of
11.9 MB: the bridge's client closed, and every later call of the session failed ("Not
connected"). An answer past ``MAX_REPLY_BYTES`` is refused as ``too_large``, saying
how to ask for less. Only read-only tools are bounded so: a change is never refused
after it was made (and a change's answer is small).
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable
from typing import Any

from fastmcp.exceptions import ToolError

# Under the 10 MiB a TypeScript SDK client takes, with room for the message's own fields.
MAX_REPLY_BYTES = 9 * 1024 * 1024
# The most bytes one character of a string takes in the answer: a control character is
# \u0001 (6) in the structured content and \\u0001 (7) in the text block.
MOST_PER_CHAR = 13
HINTS = {
    "read": "read it in parts with offset and limit (lines)",
    "diff": "diff versions nearer each other, or read each in parts (read: version, offset, limit)",
}
HINT = "ask for less (a smaller limit, or a narrower path)"


def bounded(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A read-only tool body (sync or async) whose result is refused when its answer
    would be past ``MAX_REPLY_BYTES``."""
    name = fn.__name__
    if inspect.iscoroutinefunction(fn):

        @functools.wraps(fn)
        async def waited(*args: Any, **kwargs: Any) -> Any:
            return checked(name, await fn(*args, **kwargs))

        return waited

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return checked(name, fn(*args, **kwargs))

    return wrapper


def checked(tool: str, result: Any) -> Any:
    """``result``, or a ``too_large`` refusal when its answer would be too large (counted
    only when the characters it holds could make it so: most answers are small)."""
    if _chars(result) * MOST_PER_CHAR <= MAX_REPLY_BYTES:
        return result
    size = reply_bytes(result)
    if size <= MAX_REPLY_BYTES:
        return result
    hint = _read_hint(result) if tool == "read" else None
    hint = hint or HINTS.get(tool, HINT)
    raise ToolError(
        f"too_large: the answer would be {size / 1e6:.1f} MB, more than an MCP client"
        f" takes in one message ({MAX_REPLY_BYTES >> 20} MiB here); {hint}"
    )


def _read_hint(result: Any) -> str | None:
    """Where reading in parts cannot help, what can: a file that is not UTF-8 text is
    read whole (offset and limit are refused for it), and one line is the least a read
    gives (a line of 0.7 MB of control characters is past the bound alone). The REST
    raw route sends the file's bytes as they are, with no JSON escape."""
    if not isinstance(result, dict) or not isinstance(result.get("content"), str):
        return None
    path = result.get("path", "")
    raw = f"GET /api/v1/<lang>/raw/{path}"
    if result.get("encoding") == "base64":
        return f"the file is not UTF-8 text, which read gives whole: fetch its bytes with {raw}"
    if "\n" not in result["content"].rstrip("\n"):
        return (
            "the answer is one line, the least read gives (offset and limit count lines):"
            f" fetch the file's bytes with {raw}"
        )
    return None


def reply_bytes(result: Any) -> int:
    """The bytes ``result`` takes in a ``tools/call`` answer: as structured content, and
    as the text block's JSON string."""
    text = json.dumps(result, ensure_ascii=False, separators=(",", ":"))
    once = len(text.encode("utf-8", "surrogatepass"))
    # As a string, the JSON escapes only its quotes and backslashes (its control
    # characters are escapes already): counted, not encoded again (half the time).
    return once + once + text.count('"') + text.count("\\") + 2


def _chars(value: Any) -> int:
    """The characters of ``value`` as JSON before any escape, a number counted as 24 (no
    fewer than it takes): the cheap test before the count."""
    if isinstance(value, str):
        return len(value) + 2
    if isinstance(value, dict):
        return sum(_chars(key) + _chars(item) + 2 for key, item in value.items()) + 2
    if isinstance(value, list | tuple):
        return sum(_chars(item) + 1 for item in value) + 2
    return 24  # a number, true, false, null
