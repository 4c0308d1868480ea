"""Where a knowledge note goes, and when two titles name the same note.

A new note for an entry is ``items/<slug>.md`` (the rule ``prompts/vault_spec.md`` gives
the model); titles are compared by ``title_key``, so case, punctuation and spacing do
not make two notes of one topic.
"""

from __future__ import annotations

import re
import unicodedata

from shared.workspace import ITEMS_DIR


def slugify(title: str) -> str:
    """``"Past tense of 'go'"`` -> ``"past-tense-of-go"``; letters of any script are kept."""
    text = unicodedata.normalize("NFKC", title).lower()
    words = re.findall(r"\w+", text)
    slug = "-".join(words).strip("-_")[:80].strip("-_")
    return slug or "note"


def note_path_for(title: str) -> str:
    """Where a new note for ``title`` goes."""
    return f"{ITEMS_DIR}/{slugify(title)}.md"


def title_key(title: str) -> str:
    """A comparison key for titles: case, punctuation and spacing do not matter."""
    return " ".join(re.findall(r"\w+", unicodedata.normalize("NFKC", title).lower()))
