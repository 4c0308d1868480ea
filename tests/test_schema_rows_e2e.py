"""End to end: an index a release wrote as schema 24 before a typed frontmatter abstract
was read as written (its row held the first paragraph) is rebuilt at start, and the
folder's summary shows the abstract; the vault is left as it was."""

from __future__ import annotations

import os
from pathlib import Path

import httpx2
from helpers.indexer_process import start_indexer, wait_for

from indexer.sqlite_lib import sqlite3
from shared.workspace import Workspace

NOTE = "---\ntitle: N\nabstract: 12345\n---\nFirst paragraph.\n"
RELEASED_24 = 24  # (the schema number those releases stamped: a literal, not a count back)


def _vault_files(vault: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(vault)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(vault.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


def _abstract(index_path: Path) -> str:
    with sqlite3.connect(index_path) as db:
        row = db.execute("SELECT abstract FROM notes WHERE path = 'n/number.md'").fetchone()
    return str(row[0])


def test_an_index_of_24_with_the_older_abstract_is_rebuilt(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    vault = workspace / "memory" / "languages" / "en" / "vault"
    (vault / "n").mkdir(parents=True)
    (vault / "n" / "number.md").write_text(NOTE, encoding="utf-8")
    os.utime(vault / "n" / "number.md", ns=(1_700_000_000_000_000_000,) * 2)
    index_path = Workspace(workspace).index_path
    start_indexer(workspace).stop()
    with sqlite3.connect(index_path) as db:  # what those releases' rows held
        db.execute("UPDATE notes SET abstract = 'First paragraph.' WHERE path = 'n/number.md'")
        db.execute(f"PRAGMA user_version = {RELEASED_24}")
    before = _vault_files(vault)
    server = start_indexer(workspace)
    try:
        with httpx2.Client(base_url=server.url.removesuffix("/mcp") + "/api/v1") as http:

            def summarized() -> bool:
                got = http.get("/en/summary", params={"path": "n"})
                return got.status_code == 200 and "12345" in got.json()["overview"]

            wait_for(summarized, 30, what="the folder's summary with the typed abstract")
    finally:
        server.stop()
    assert "recreating it from the vaults" in server.log()
    assert _abstract(index_path) == "12345"
    assert _vault_files(vault) == before  # (nothing in the vault written, nor touched)
