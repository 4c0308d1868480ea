"""End to end, folder summaries on a shared machine: a ``.overview.md`` quotes the notes
of its folder (the fallback their first words, a model their gist) and its sub-folders'
abstracts, so it is no more open to other users than the most private of them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from helpers.indexer_process import start_indexer, wait_for


def put(vault: Path, rel: str, text: str, mode: int) -> None:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.chmod(path, mode)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_summary_of_private_notes_is_private(tmp_path: Path) -> None:
    """The summary of a folder whose one note was 0600 was made 0644 (less the umask)
    and quoted that note's words to every local user; its parent's, quoting its
    abstract, too. Each is now no more open than what it quotes; a folder of open
    notes keeps 0644."""
    ws = tmp_path / "ws"
    vault = ws / "memory" / "languages" / "en" / "vault"
    put(vault, "private/a.md", "# Diary\n\nprivate words of the diary\n", 0o600)
    put(vault, "open/b.md", "# Shopping\n\nbread and milk\n", 0o644)
    os.chmod(vault, 0o755)
    server = start_indexer(ws)
    try:
        made = [vault / d / ".overview.md" for d in ("private", "open", "")]
        wait_for(lambda: all(path.exists() for path in made), 30, what="the summaries")
        assert "private words" in made[0].read_text(encoding="utf-8")
        assert mode_of(made[0]) == 0o600
        assert mode_of(made[1]) == 0o644
        assert mode_of(made[2]) == 0o600  # (the root's quotes private/'s abstract)
    finally:
        server.stop()
