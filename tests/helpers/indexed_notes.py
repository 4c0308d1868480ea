"""A vault of a few notes in one script, indexed, for the search tests of a language."""

from __future__ import annotations

from indexer.index.service import NoteIndex
from shared.workspace import Workspace


def index_notes(ws: Workspace, index: NoteIndex, lang: str, notes: dict[str, str]) -> NoteIndex:
    """``notes`` (name: text) written into ``lang``'s vault, and ``index`` caught up."""
    root = ws.vault_dir(lang)
    root.mkdir(parents=True)
    for name, text in notes.items():
        (root / name).write_text(text, encoding="utf-8")
    index.reconcile()
    return index


def found(index: NoteIndex, lang: str, query: str) -> set[str]:
    """The paths a search of ``query`` finds (50 at most)."""
    return {hit["path"] for hit in index.search(lang, query, limit=50)["results"]}
