"""A tag or type that names nothing is refused saying why, the tag shown escaped:
REST's ``tag=<U+202E>`` was refused with "each tag must name a tag (or leave tags
out)", not saying that the tag it sent was only a format character, nor which one."""

from __future__ import annotations

import urllib.parse

import httpx2
import pytest
from helpers.indexer_process import RunningIndexer, vault_dir
from helpers.rest_errors import error_message, error_of
from helpers.snapshots import snapshot

from indexer.index.search_filters import search_filters
from shared.errors import InvalidArgumentError


@pytest.mark.parametrize(
    ("tags", "said"),
    [
        (["\u202e"], r"'\u202e' holds only invisible, format or combining characters (U+202E)"),
        (["ok", "#\u200b\u2066"], r"'#\u200b\u2066' holds only invisible, format or combining"),
        (["\u05b8"], r"'\u05b8' holds only invisible, format or combining characters (U+05B8)"),
        (["\U000e0041"], r"'\U000e0041' holds only invisible"),
        ([" "], "' ' is blank"),
        (["#/"], "'#/' holds only '#' or '/'"),
    ],
)
def test_the_refusal_says_why_and_shows_the_tag_escaped(tags: list[str], said: str) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        search_filters(None, tags, "")
    message = str(info.value)
    assert message.startswith("invalid_argument: each tag must name a tag"), message
    assert said in message, message
    assert not any(c in message for c in "\u202e\u2066\u200b\u05b8\U000e0041")


def test_a_type_of_nothing_is_said_so() -> None:
    with pytest.raises(InvalidArgumentError, match=r"type must name a type.*'\\u202e' holds only"):
        search_filters("\u202e", None, "")


def test_rest_says_why(server: RunningIndexer) -> None:
    root = vault_dir(server, "en")
    root.mkdir(parents=True, exist_ok=True)
    (root / "a.md").write_text("---\ntags: [x]\n---\n# a\n\nword\n", encoding="utf-8")
    before = snapshot(root)
    query = urllib.parse.urlencode({"q": "word", "tag": "\u202e"})
    base = server.url.removesuffix("/mcp")
    answer = httpx2.get(f"{base}/api/v1/en/search?{query}", timeout=30)
    assert answer.status_code == 400, answer.text
    assert error_of(answer) == "invalid_argument"
    assert r"'\u202e' holds only invisible, format or combining characters (U+202E)" in (
        error_message(answer)
    )
    assert "\u202e" not in answer.text
    assert snapshot(root) == before
