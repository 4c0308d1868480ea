"""The hint a refused string of tags gives: the list a write would make of it."""

from __future__ import annotations

import pytest

from agent_client.hooks import entry_from_mapping


def test_a_string_of_tags_is_hinted_as_the_list_it_spells() -> None:
    """The refusal of ``tags: "a, b"`` hinted ``['a, b']``: one tag, itself wrong. It hints
    the items a write would cut the string into, at any script's comma."""
    data = {"lang": "en", "kind": "knowledge", "title": "t", "content": "c"}
    for text, hint in (
        ("a, b", "['a', 'b']"),
        ("grammar", "['grammar']"),
        ("شعر، أدب", "['شعر', 'أدب']"),
        (" , ", "['text']"),
    ):
        with pytest.raises(ValueError) as refused:
            entry_from_mapping({**data, "tags": text})
        assert f"e.g. {hint}, not str" in str(refused.value), text
