"""Files by name for the page's links: the index's notes (read again once it changed)
and a vault listing of the other files (walked again only when old, or missing a name)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
from helpers.history import vault_with_history

from indexer.core import Core
from indexer.index.service import NoteIndex
from indexer.vault import file_names
from indexer.vault.file_names import FileNames, name_key
from indexer.vault.vault import Vault
from indexer.web.vault_names import vault_lookup
from shared.workspace import Workspace


def put(ws: Workspace, lang: str, path: str, data: bytes = b"# x\n") -> None:
    file = ws.vault_dir(lang) / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(data)


def test_name_keys_fold_ascii_case_and_compose() -> None:
    assert name_key("Start HERE.md") == "start here.md"
    assert name_key("Cafe\u0301.md") == "Café.md".replace("C", "c")
    assert name_key("ÉTÉ.md") == "ÉtÉ.md"  # (ASCII letters only, as SQLite's lower)


def test_the_index_finds_notes_by_name_and_sees_new_ones(ws: Workspace, index: NoteIndex) -> None:
    put(ws, "en", "Guides/Start here.md")
    put(ws, "en", "Other/start here.md")
    put(ws, "en", "top.md")
    put(ws, "fr", "top.md")
    index.reconcile()
    found = index.paths_named("en", ["start here.md", "top.md", "nowhere.md"])
    assert sorted(found["start here.md"]) == ["Guides/Start here.md", "Other/start here.md"]
    assert found["top.md"] == ["top.md"] and "nowhere.md" not in found
    put(ws, "en", "later/nowhere.md")
    index.reconcile()  # a commit: read again
    assert index.paths_named("en", ["nowhere.md"]) == {"nowhere.md": ["later/nowhere.md"]}


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20) as made:
        yield made


def test_other_files_are_found_by_name_from_a_listing_kept_a_while(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = vault.sandbox.workspace
    put(ws, "en", "Attachments/Shot.png", b"png")
    put(ws, "en", "a/b/shot.png", b"png")
    put(ws, "en", ".hidden/shot.png", b"png")
    names = FileNames(vault)
    assert sorted(names.find("en", ["shot.png"])["shot.png"]) == [
        "Attachments/Shot.png",
        "a/b/shot.png",
    ]
    assert names.find("xx", ["shot.png"]) == {}  # (no such vault)
    put(ws, "en", "new.png", b"png")
    walks: list[str] = []
    real = names._walk
    monkeypatch.setattr(names, "_walk", lambda lang: walks.append(lang) or real(lang))
    assert names.find("en", ["new.png"]) == {} and not walks  # a listing this recent is kept
    monkeypatch.setattr(file_names, "NAMES_RETRY_SECONDS", -1.0)
    assert names.find("en", ["shot.png"]) and not walks  # nothing missing: no walk
    assert names.find("en", ["new.png"], retry=False) == {} and not walks
    assert names.find("en", ["new.png"]) == {"new.png": ["new.png"]} and walks == ["en"]


def test_a_listing_no_render_used_while_fresh_is_dropped(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vault's listing (25 MB at 100,000 files) was kept for the life of the server."""
    ws = vault.sandbox.workspace
    put(ws, "en", "a.png", b"png")
    put(ws, "fr", "b.png", b"png")
    names = FileNames(vault)
    assert names.find("en", ["a.png"]) and names.find("fr", ["b.png"])
    assert sorted(names._listings) == ["en", "fr"]
    monkeypatch.setattr(file_names, "NAMES_FRESH_SECONDS", 0.2)
    time.sleep(0.3)
    assert names.find("en", ["a.png"]) == {"a.png": ["a.png"]}  # (walked again)
    assert sorted(names._listings) == ["en"]


def test_a_link_to_a_note_never_walks_the_vault_again(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    # [[Note]] asks for "note.md" and for a file named "note" as is: the vault lacks the
    # latter, and asking it with a retry walked the whole vault on each render past 15 s
    ws = vault.sandbox.workspace
    put(ws, "en", "Note.md")
    lookup = vault_lookup(cast(Core, SimpleNamespace(vault=vault, index=None)))
    assert lookup("en", ["note.md", "note"]) == {"note.md": ["Note.md"]}
    walks: list[str] = []
    real = FileNames._walk
    monkeypatch.setattr(
        FileNames, "_walk", lambda self, lang: walks.append(lang) or real(self, lang)
    )
    monkeypatch.setattr(file_names, "NAMES_RETRY_SECONDS", -1.0)
    assert lookup("en", ["note.md", "note", "v1.2"]) == {"note.md": ["Note.md"]}
    assert not walks
    put(ws, "en", "new.png", b"png")  # a picture just added is still found
    assert lookup("en", ["new.png"]) == {"new.png": ["new.png"]} and walks == ["en"]


def test_a_text_file_in_an_assets_folder_is_found_beside_the_indexed_notes(
    vault: Vault,
) -> None:
    # the index leaves *.assets/ out: a link to a file there was marked not found
    ws = vault.sandbox.workspace
    put(ws, "en", "d/n.md.assets/table.csv", b"a,b\n")
    index = SimpleNamespace(paths_named=lambda lang, keys: {"n.md": ["d/n.md"]})
    lookup = vault_lookup(cast(Core, SimpleNamespace(vault=vault, index=index)))
    assert lookup("en", ["n.md", "table.csv"]) == {
        "n.md": ["d/n.md"],
        "table.csv": ["d/n.md.assets/table.csv"],
    }


def test_a_render_whose_note_links_the_index_resolves_never_walks_the_vault(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the "note" of [[Note]] (no suffix: no tool writes such a file) made the first render
    # and one every 5 minutes walk the whole vault, though the index had answered
    walks: list[str] = []
    monkeypatch.setattr(FileNames, "_walk", lambda self, lang: walks.append(lang) or {})
    index = SimpleNamespace(paths_named=lambda lang, keys: {"note.md": ["d/Note.md"]})
    lookup = vault_lookup(cast(Core, SimpleNamespace(vault=vault, index=index)))
    assert lookup("en", ["note.md", "note", "v1.2"]) == {"note.md": ["d/Note.md"]}
    assert not walks
