"""The memory tool on deep paths, against a real ``indexer serve`` seen through a
stand-in for its port (``helpers.mcp_proxy``) that counts the tool calls: a path the
vault refuses (too deep, a hidden name) is told from one through a file (the SDK's
"does not exist", or its ``ENOTDIR``) with a few ``stat`` calls, not one per folder on
the way (a view 31 folders deep took 33 calls)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.mcp_proxy import McpProxy
from helpers.memory_tool import outcome

from agent_client import ClientSettings, VaultMemoryTool

pytestmark = pytest.mark.e2e
DEEP = "/".join(f"d{i}" for i in range(29))  # with the memory folder, 30 folders deep
MOST_CALLS = 8  # read or write, stat, then one stat and a bisection of 31 folders (5)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    running = start_indexer(tmp_path_factory.mktemp("deep") / "ws", env={"INDEXER_SUMMARIES": "0"})
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def proxy(server: RunningIndexer) -> Iterator[McpProxy]:
    """The stand-in, named by the URL file (written as the server writes it: a rename)."""
    served = McpProxy(server.url)
    (server.workspace / "url.tmp").write_text(served.url + "\n")
    os.replace(server.workspace / "url.tmp", server.workspace / "indexer.mcp.url")
    try:
        yield served
    finally:
        served.stop()


@pytest.fixture(scope="module")
def tool(server: RunningIndexer, proxy: McpProxy) -> Iterator[VaultMemoryTool]:
    memory = VaultMemoryTool("en", folder="mem", settings=ClientSettings(server.workspace))
    with memory:
        for name in ("f.md", "g/h.txt"):
            create = {"command": "create", "path": f"/memories/{DEEP}/{name}", "file_text": "x\n"}
            assert outcome(memory, create) == (
                f"File created successfully at: {create['path']}",
                False,
            )
        yield memory


def calls(proxy: McpProxy, tool: VaultMemoryTool, inp: dict[str, str]) -> tuple[int, tuple]:
    proxy.seen.clear()
    result = outcome(tool, inp)
    return sum(1 for s in proxy.seen if s.tool), result


@pytest.mark.parametrize(
    ("rest", "said"),
    [
        ("x/y/z", "forbidden_path: "),  # too deep, nothing on the way is a file
        ("nothere/y/z", "forbidden_path: "),
        ("g/.hidden", "forbidden_path: "),
        ("f.md/x", "does not exist"),  # a file on the way (itself at the vault's depth)
        ("f.md/x/y/z", "does not exist"),
        ("g/h.txt/y/z", "does not exist"),
    ],
)
def test_a_deep_view_takes_a_few_calls(
    proxy: McpProxy, tool: VaultMemoryTool, rest: str, said: str
) -> None:
    count, (text, is_error) = calls(
        proxy, tool, {"command": "view", "path": f"/memories/{DEEP}/{rest}"}
    )
    assert is_error and said in text, text
    assert count <= MOST_CALLS, count


def test_a_file_on_the_way_is_found_at_any_depth(
    server: RunningIndexer, proxy: McpProxy, tool: VaultMemoryTool
) -> None:
    """A file at each depth, and a path below it: the SDK's ``ENOTDIR`` for a create,
    found in a few calls wherever the file is; nothing written."""
    for depth in (1, 7, 16, 29):
        way = "/".join(f"d{i}" for i in range(depth))
        create = {"command": "create", "path": f"/memories/{way}.txt", "file_text": "x\n"}
        assert not outcome(tool, create)[1]
        below = {"command": "create", "path": f"/memories/{way}.txt/a/b/c.md", "file_text": "y"}
        before = sorted(p for p in Path(server.workspace).rglob("*"))
        count, (text, is_error) = calls(proxy, tool, below)
        assert is_error and "Not a directory" in str(text), text
        assert count <= MOST_CALLS, (depth, count)
        assert sorted(p for p in Path(server.workspace).rglob("*")) == before
