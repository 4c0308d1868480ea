"""Lost updates: an editor saving a note every few ms while a client reads → writes with if_match.

The "editor" is a separate process: each save reads the note, adds a line ``ext <n>``
and saves, either in place (truncate and write, as many editors and scripts do) or
editor-style (a temp file renamed over the note). The client runs ``Vault.read`` then
``Vault.write(if_match=etag)`` with a line of its own, in a loop. An editor line missing
from the final note was lost: a client write replaced a save it never saw, though its
``if_match`` should have refused. (Client lines the editor overwrites are the editor's
doing, not counted.)

Prints, per save style: saves, lost, lost %, client writes done, conflicts. ``--json``
prints one object instead (the test runs this with a short duration).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.errors import ConflictError
from shared.workspace import Workspace

EDITOR = r"""
import os, sys, time
path, period, style, seconds = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4])
folder, name = os.path.split(path)
saves, end = 0, time.monotonic() + seconds
while time.monotonic() < end:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text += f"ext {saves}\n"
    if style == "rename":
        temp = os.path.join(folder, f".{name}.swp")
        with open(temp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temp, path)
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    saves += 1
    time.sleep(period)
print(saves)
"""
NOTE = "---\ntitle: Shared note\n---\n# Shared note\n"


def experiment(style: str, seconds: float, period_ms: float) -> dict:
    """One run of the experiment in a fresh workspace; the counts as a dict."""
    with tempfile.TemporaryDirectory() as tmp:
        vault = Vault(Sandbox(Workspace(Path(tmp))), max_file_bytes=4 << 20)
        vault.write("en", "shared.md", NOTE)
        path = str(Path(tmp) / "memory/languages/en/vault/shared.md")
        editor = subprocess.Popen(
            [sys.executable, "-c", EDITOR, path, str(period_ms / 1000), style, str(seconds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        done = conflicts = 0
        while editor.poll() is None:
            read = vault.read("en", "shared.md")
            content = read["content"] + f"cli {done}\n"
            try:
                vault.write("en", "shared.md", content, if_match=read["etag"])
                done += 1
            except ConflictError:
                conflicts += 1
        saves = int(editor.communicate()[0])
        final = vault.read("en", "shared.md")["content"]
    present = {line for line in final.splitlines() if line.startswith("ext ")}
    lost = sum(1 for n in range(saves) if f"ext {n}" not in present)
    return {"style": style, "saves": saves, "lost": lost, "writes": done, "conflicts": conflicts}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per save style")
    parser.add_argument("--period-ms", type=float, default=10.0, help="between the editor's saves")
    parser.add_argument("--style", choices=("in-place", "rename", "both"), default="both")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    styles = ("in-place", "rename") if args.style == "both" else (args.style,)
    started = time.monotonic()
    results = [experiment(style, args.seconds, args.period_ms) for style in styles]
    if args.json:
        print(json.dumps(results))
        return 0
    print(f"editor saves every {args.period_ms:g} ms, {args.seconds:g} s per style")
    heads = ("saves", "lost", "lost %", "writes", "conflicts")
    print(f"{'save style':<10} " + " ".join(f"{h:>{max(len(h), 6)}}" for h in heads))
    for r in results:
        share = 100 * r["lost"] / r["saves"] if r["saves"] else 0.0
        print(
            f"{r['style']:<10} {r['saves']:>6} {r['lost']:>6} {share:>5.2f}% "
            f"{r['writes']:>6} {r['conflicts']:>9}"
        )
    print(f"({time.monotonic() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
