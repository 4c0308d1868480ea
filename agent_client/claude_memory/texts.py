"""The memory tool's answers, word for word as the SDK's local-filesystem tool gives them.

Pure functions over text: sizes, numbered lines, directory listings and the two edits
(``str_replace``, ``insert``) with their results and errors. They repeat the SDK's own
expressions (``anthropic.lib.tools._beta_builtin_memory_tool``, anthropic 2.14) on
purpose, so that odd input (a ``view_range`` of three numbers, an ``insert_line`` that
is not a number) gets the very same answer or exception as from the SDK. The
differential tests hold them to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from anthropic.lib.tools import ToolError

MAX_LINES = 999999
LINE_NUMBER_WIDTH = len(str(MAX_LINES))
DIRECTORY_SIZE = 4096  # what ext4 reports for a small folder; the vault has no such number


@dataclass(frozen=True)
class ListedItem:
    """One line of a directory listing: its path below the viewed folder and its size."""

    rel: str  # "a.txt", "sub/", "sub/b.md" (folders end with "/")
    size: int


def format_size(size: int) -> str:
    """``1023`` -> ``1023B``, ``1024`` -> ``1K``, ``1076`` -> ``1.1K`` (the SDK's rounding)."""
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    i = min(int(size.bit_length() - 1) // 10, len(units) - 1)
    scaled = size / (1024**i)
    if scaled == int(scaled):
        return f"{int(scaled)}{units[i]}"
    return f"{scaled:.1f}{units[i]}"


def numbered(lines: Iterable[str], first: int) -> list[str]:
    return [f"{str(i + first).rjust(LINE_NUMBER_WIDTH)}\t{line}" for i, line in enumerate(lines)]


def view_file(shown: str, content: str, view_range: Sequence[int] | None) -> str:
    """A file's lines, numbered; ``view_range`` ``[start, end]`` (``end`` -1: to the end)."""
    lines = content.split("\n")
    if len(lines) > MAX_LINES:
        raise ToolError(f"File {shown} exceeds maximum line limit of 999,999 lines.")
    display = lines
    start_num = 1
    if view_range and len(view_range) == 2:
        start_line = max(1, view_range[0]) - 1
        end_line = len(lines) if view_range[1] == -1 else view_range[1]
        display = lines[start_line:end_line]
        start_num = start_line + 1
    return f"Here's the content of {shown} with line numbers:\n" + "\n".join(
        numbered(display, start_num)
    )


@dataclass(frozen=True)
class Listing:
    """A folder's items two levels deep; ``cut`` when a level held more than the vault
    lists in one call (the first of them, in the vault's walk order, are the items)."""

    items: list[ListedItem]
    cut: bool = False


def view_directory(shown: str, listing: Listing) -> str:
    """The listing of a folder: itself, then each item (already in the SDK's order); a
    cut listing says so at its end (the SDK lists everything, however long)."""
    header = (
        f"Here're the files and directories up to 2 levels deep in {shown}, excluding hidden items:"
    )
    lines = [f"{format_size(DIRECTORY_SIZE)}\t{shown}"]
    lines.extend(f"{format_size(item.size)}\t{shown}/{item.rel}" for item in listing.items)
    if listing.cut:
        lines.append(
            f"(listing cut: {shown} holds more files and folders than the vault lists at"
            f" once; {len(listing.items)} are shown. View a folder below it to see all of that"
            " folder, or view a file by its path)"
        )
    return f"{header}\n" + "\n".join(lines)


def listing_order(paths: Iterable[str]) -> list[str]:
    """Paths below a folder (folders ending in "/") in the SDK's order: depth first, each
    folder right before its contents, siblings sorted by name (code points)."""
    return sorted(paths, key=lambda p: p.rstrip("/").split("/"))


def replace(shown: str, content: str, old_str: str, new_str: str) -> tuple[str, str]:
    """``str_replace``: (the new content, the answer); ``ToolError`` if ``old_str`` is not
    there exactly once (the line numbers listed come from an overlapping scan, as in the
    SDK, so "aa" in "aaaa" is reported as lines 1, 1, 1)."""
    count = content.count(old_str)
    if count == 0:
        raise ToolError(
            f"No replacement was performed, old_str `{old_str}` did not appear verbatim in {shown}."
        )
    if count > 1:
        matching_lines: list[int] = []
        start = 0
        while True:
            pos = content.find(old_str, start)
            if pos == -1:
                break
            matching_lines.append(content[:pos].count("\n") + 1)
            start = pos + 1
        raise ToolError(
            f"No replacement was performed. Multiple occurrences of old_str `{old_str}` in "
            f"lines: {', '.join(map(str, matching_lines))}. Please ensure it is unique"
        )
    pos = content.find(old_str)
    changed_line_index = content[:pos].count("\n")
    new_content = content.replace(old_str, new_str)
    new_lines = new_content.split("\n")
    context_start = max(0, changed_line_index - 2)
    context_end = min(len(new_lines), changed_line_index + 3)
    snippet = numbered(new_lines[context_start:context_end], context_start + 1)
    answer = (
        "The memory file has been edited. Here is the snippet showing the change "
        "(with line numbers):\n" + "\n".join(snippet)
    )
    return new_content, answer


def insert(shown: str, content: str, insert_line: int, insert_text: str) -> tuple[str, str]:
    """``insert``: ``insert_text`` (trailing newlines dropped) becomes line
    ``insert_line + 1``; the result always ends with a newline."""
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    if insert_line < 0 or insert_line > len(lines):
        raise ToolError(
            f"Invalid `insert_line` parameter: {insert_line}. "
            f"It should be within the range [0, {len(lines)}]."
        )
    lines.insert(insert_line, insert_text.rstrip("\n"))
    new_content = "\n".join(lines)
    if not new_content.endswith("\n"):
        new_content += "\n"
    return new_content, f"The file {shown} has been edited."


def cleared_but(left: int, sample: Sequence[str]) -> str:
    """``clear_all_memory``'s answer when another program's files stay: what no tool
    reaches is left with its folders, and the model should not think them gone."""
    names = ", ".join(f"'{name}'" for name in sample)
    return (
        f"Memory cleared, except {left} file(s) or folder(s) no tool can reach (hidden,"
        " named as the vault refuses, or too deep; a person can remove them with another"
        f" program), which stay with their folders: {names}"
    )
