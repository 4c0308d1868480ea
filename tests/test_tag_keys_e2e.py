"""End to end: an index of the schema before tags' keys folded the letters one to their
readers (24) held a note tagged ``کتاب`` and ``كتاب`` as two tags; a start rebuilds it
from the vault, which it leaves as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx2
from helpers.indexer_process import start_indexer

from indexer.index.schema import SCHEMA_VERSION
from indexer.sqlite_lib import sqlite3
from shared.workspace import Workspace

NOTE = "---\ntitle: Books\ntags: [کتاب, كتاب, ёлка, елка]\n---\nalpha\n"
# What schema 23 kept of it (tags as written, each letter's spelling its own key)
NO_SUMMARIES = {"INDEXER_SUMMARIES": "0"}  # (a folder summary is a file it writes)
OLD_ROW = (["کتاب", "كتاب", "ёлка", "елка"], ["كتاب", "كتاب", "ёлка", "елка"])


def _vault_files(vault: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(vault)): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(vault.rglob("*"))
        if p.is_file()
    }


def _tags(index_path: Path) -> tuple[list[str], list[str]]:
    with sqlite3.connect(index_path) as db:
        tags, keys = db.execute("SELECT tags, tag_keys FROM notes WHERE path = 'a.md'").fetchone()
    return json.loads(tags), json.loads(keys)


def test_an_index_of_the_older_schema_is_rebuilt_with_one_tag_of_both_spellings(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    vault = workspace / "memory" / "languages" / "fa" / "vault"
    vault.mkdir(parents=True)
    (vault / "a.md").write_text(NOTE, encoding="utf-8")
    os.utime(vault / "a.md", ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    index_path = Workspace(workspace).index_path
    start_indexer(workspace, env=NO_SUMMARIES).stop()
    with sqlite3.connect(index_path) as db:
        db.execute(
            "UPDATE notes SET tags = ?, tag_keys = ? WHERE path = 'a.md'",
            [json.dumps(old, ensure_ascii=False) for old in OLD_ROW],
        )
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")
    before = _vault_files(vault)
    server = start_indexer(workspace, env=NO_SUMMARIES)
    try:
        with httpx2.Client(base_url=server.url.removesuffix("/mcp") + "/api/v1") as http:
            for tag in ("کتاب", "كتاب", "#كتاب", "ЁЛКА", "елка"):
                got = http.get("/fa/search", params={"q": "", "tag": tag}).json()
                assert [hit["path"] for hit in got["results"]] == ["a.md"], tag
    finally:
        server.stop()
    assert "recreating it from the vaults" in server.log()
    tags, keys = _tags(index_path)
    assert tags == ["کتاب", "ёлка"]  # (the first spelling as written)
    assert len(keys) == 2
    assert _vault_files(vault) == before  # (nothing in the vault written, nor touched)
