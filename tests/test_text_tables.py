"""The text tables a first query past ASCII needs are built once the server serves
(``warm_up.after_start``), not by that query (40 ms), in a fresh interpreter as a
server's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from indexer.warm_up import after_start
from indexer.index import nfkc, text
from pathlib import Path
from shared.workspace import Workspace

tables = (nfkc._changed, text._searchable_changes, text._newer_case, text._loose_letters)
built = lambda: [table.cache_info().currsize for table in tables]
assert built() == [0, 0, 0, 0], built()  # (none on import: issue 15's start)
after_start(Workspace(Path(sys.argv[1])))
assert built() == [1, 1, 1, 1], built()
print("built")
"""


def test_after_start_builds_the_text_tables(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "built"
