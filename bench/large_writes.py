"""Memory of a real ``indexer serve`` while N clients write a 4 MiB note each at once.

Prints the server's resident memory before, at its peak (``VmHWM``) and after the
writes (``VmRSS``, and ``RssAnon``: the heap, not file pages), and how long they took.
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from helpers.indexer_process import start_indexer

MiB = 1 << 20


def status_kib(pid: int) -> dict[str, int]:
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if rest.strip().endswith("kB"):
            values[name] = int(rest.split()[0])
    return values


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100)
    args = parser.parse_args()
    body = json.dumps({"content": "# big\n" + "y" * (4 * MiB - 1000)}).encode()
    with tempfile.TemporaryDirectory() as tmp:
        server = start_indexer(Path(tmp) / "ws", env={"INDEXER_MAX_REQUESTS": "1000"})
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        pid = server.process.pid

        def put(n: int) -> int:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            try:
                headers = {"Content-Type": "application/json"}
                conn.request("PUT", f"/api/v1/en/notes/big{n}.md", body=body, headers=headers)
                answer = conn.getresponse()
                answer.read()
                return answer.status
            except OSError:
                return 0
            finally:
                conn.close()

        try:
            before = status_kib(pid)
            started = time.monotonic()
            with ThreadPoolExecutor(args.clients) as pool:
                statuses = list(pool.map(put, range(args.clients)))
            took = time.monotonic() - started
            time.sleep(1.0)
            after = status_kib(pid)
        finally:
            server.stop()
    ok = sum(s in (200, 201) for s in statuses)
    print(f"{args.clients} concurrent 4 MiB writes: {ok} done in {took:.1f} s")
    print(f"{'server memory MiB':<20} {'RSS':>8} {'heap':>8}")
    print(f"{'before':<20} {before['VmRSS'] // 1024:>8} {before['RssAnon'] // 1024:>8}")
    print(f"{'peak':<20} {after['VmHWM'] // 1024:>8} {'':>8}")
    print(f"{'after':<20} {after['VmRSS'] // 1024:>8} {after['RssAnon'] // 1024:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
