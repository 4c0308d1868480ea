"""A terminal that is not UTF-8 (``LANG=en_US.ISO-8859-1``) gets what it cannot show as
escapes: ``indexer search`` of a Vietnamese vault printed its first hit's title, then
stopped at ``đ`` with ``'latin-1' codec can't encode`` and exit status 2."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from shared.terminal_text import shows_any_text
from shared.workspace import Workspace

LANG_VI = ("--lang", "vi", "Maroc")


def test_indexer_search_on_a_latin_1_terminal_escapes_what_it_cannot_show(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws")
    note = ws.vault_dir("vi") / "items/hoceima.md"
    note.parent.mkdir(parents=True)
    note.write_text("# Al Hoceïma\n\nMột thành phố đẹp ở Maroc.\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "indexer", "search", "--workspace", str(ws.root), *LANG_VI],
        capture_output=True,
        timeout=60,
        env={**os.environ, "INDEXER_WORKSPACE": "", "PYTHONIOENCODING": "latin-1"},
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode("latin-1")
    assert "Al Hoceïma" in out  # (what latin-1 has is shown as it is)
    assert "M\\u1ed9t thành ph\\u1ed1 \\u0111\\u1eb9p \\u1edf **Maroc**" in out


def test_only_a_stream_that_is_not_utf_8_escapes() -> None:
    latin = io.TextIOWrapper(io.BytesIO(), encoding="latin-1")
    shows_any_text(latin)
    latin.write("Tiếng Việt, ελληνικά")
    latin.flush()
    shown = latin.buffer.getvalue()  # type: ignore[attr-defined]
    assert (
        shown == b"Ti\\u1ebfng Vi\\u1ec7t, \\u03b5\\u03bb\\u03bb\\u03b7\\u03bd\\u03b9\\u03ba\\u03ac"
    )
    utf8 = io.TextIOWrapper(io.BytesIO(), encoding="UTF8")
    shows_any_text(utf8)
    assert utf8.errors == "strict"  # (a lone surrogate still fails loudly)
