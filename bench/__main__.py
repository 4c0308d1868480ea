"""``make bench``: run every benchmark in turn; each prints its own table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHMARKS = (
    "mcp_latency.py",
    "index_search.py",
    "writer_bench.py",
    "rest_bench.py",
    "recall_bench.py",
    "summaries_bench.py",
    "history_bench.py",
    "undo_bench.py",
    "lost_update.py",
    "grep_contention.py",
    "large_writes.py",
)


def main() -> int:
    here = Path(__file__).resolve().parent
    failed = 0
    for name in BENCHMARKS:
        script = here / name
        if not script.exists():
            print(f"(skipping {name}: not present)")
            continue
        print(f"\n=== {name} ===", flush=True)
        failed += subprocess.call([sys.executable, str(script), *sys.argv[1:]]) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
