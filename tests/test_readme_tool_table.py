"""The README's tool table names every field each tool always answers: the table is
what a model's author reads, and `move`'s `relinked` was missing from it. The fields a
tool always answers are the required ones of its schema (``indexer.web.openapi``, the
same answers over HTTP), which the API fuzz test holds to the real answers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from indexer.web.openapi import SCHEMAS

README = Path(__file__).resolve().parent.parent / "README.md"
SCHEMA_OF = {
    "read": "Read",
    "write": "Written",
    "stat": "Stat",
    "append": "Appended",
    "find": "Find",
    "grep": "Grep",
    "delete": "Deleted",
    "search": "Search",
    "recall": "Recall",
    "summary": "Summary",
    "history": "History",
    "diff": "Diff",
    "restore": "Restored",
    "move": "Moved",
}


def _documented(tool: str) -> set[str]:
    """The top-level fields of the first ``{...}`` in the tool's result column."""
    row = re.search(rf"^\| `{tool}` \| .*? \| `\{{(.*?)\}}`", README.read_text(), re.M)
    assert row, f"no row for {tool} in the README's tool table"
    top = re.sub(r"\[[^\]]*\]|\{[^}]*\}", "", row.group(1))  # nested fields aside
    return {name.split(":")[0].strip() for name in top.split(",") if name.strip()}


@pytest.mark.parametrize("tool", sorted(SCHEMA_OF))
def test_the_readme_lists_every_field_a_tool_always_answers(tool: str) -> None:
    required = set(SCHEMAS[SCHEMA_OF[tool]]["required"])
    assert required <= _documented(tool), required - _documented(tool)
