"""End to end: ``status`` counts each vault's notes, ``.md`` files (SPEC: ``langs: {lang:
notes}``; round 2: ".md stays the note type"), not the plain text files the memory
tool keeps beside them nor the folders' summaries: through MCP and REST alike, and as
the count without an index (``note_counts``) and ``summary`` ("holds no notes") have it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx2
from helpers.indexer_process import start_indexer


def vault(ws: Path, lang: str) -> Path:
    return ws / "memory" / "languages" / lang / "vault"


async def test_status_counts_notes_not_plain_text_files(tmp_path: Path) -> None:
    server = start_indexer(tmp_path / "ws")
    try:
        async with server.client() as client:
            for path, text in (
                ("ملاحظات/أ.md", "# أ\n\nنص\n"),
                ("日記/一.md", "# 一\n\n東京\n"),
                ("memories/ملف.txt", "سطر\n"),
                ("memories/data.json", '{"k": "שלום"}'),
                ("memories/t.yaml", "a: 1\n"),
                ("memories/t.csv", "a,b\n"),
                ("memories/t.xml", "<a/>"),
            ):
                await client.call_tool("write", {"lang": "ar", "path": path, "content": text})
            status = (await client.call_tool("status", {})).structured_content
            listed = (await client.call_tool("find", {"lang": "ar"})).structured_content
            gone = await client.call_tool(
                "summary", {"lang": "ar", "path": "memories"}, raise_on_error=False
            )
        assert status["langs"] == {"ar": 2} == {"ar": len(listed["paths"])}
        assert gone.is_error and "holds no notes" in gone.content[0].text
        base = server.url.removesuffix("/mcp")
        rest = httpx2.get(f"{base}/api/v1/status", timeout=30).json()
        assert rest["langs"] == {"ar": 2}
        # `indexer status`: its total is the vaults' notes, not their text files too
        # ("index: 7 notes" over "ar: 2 notes").
        done = subprocess.run(
            [sys.executable, "-m", "indexer", "status", "--workspace", str(server.workspace)],
            capture_output=True, text=True, timeout=60, env={**os.environ, "INDEXER_WORKSPACE": ""},
        )  # fmt: skip
        assert ", 2 notes\n" in done.stdout and "  ar: 2 notes\n" in done.stdout, done.stdout
        report = json.loads(
            subprocess.run(
                [sys.executable, "-m", "indexer", "status", "--workspace", str(server.workspace),
                 "--json"],
                capture_output=True, text=True, timeout=60,
                env={**os.environ, "INDEXER_WORKSPACE": ""},
            ).stdout
        )  # fmt: skip
        assert report["index"]["notes"] == 2 and report["index"]["langs"] == {"ar": 2}
        assert sorted(p.name for p in (vault(server.workspace, "ar") / "memories").iterdir()) == [
            "data.json", "t.csv", "t.xml", "t.yaml", "ملف.txt",
        ]  # fmt: skip
    finally:
        server.stop()
