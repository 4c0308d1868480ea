"""The memory tool and a file over the vault's size limit put into the memory folder by
a person or another program: ``view`` of the folder lists it with its size (as the
SDK's own tool does) instead of failing as a whole, ``rename`` and ``delete`` work, and
what the limit still refuses (viewing it, renaming a note that large) says
``too_large:``. Run against a real indexer with a small limit, beside the SDK's tool."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic.tools import BetaLocalFilesystemMemoryTool
from helpers.indexer_process import RunningIndexer, start_indexer
from helpers.memory_tool import folder_sizes_as_vault, outcome

from agent_client import ClientSettings, VaultMemoryTool

LIMIT = 64 * 1024
BIG = b"a line that a log program wrote\n" * (LIMIT // 16)  # twice the limit
_folders = itertools.count()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningIndexer]:
    running = start_indexer(
        tmp_path_factory.mktemp("module") / "ws",
        env={"INDEXER_SUMMARIES": "0", "INDEXER_MAX_FILE_BYTES": str(LIMIT)},
    )
    try:
        yield running
    finally:
        running.stop()


class Pair:
    """Our tool on a fresh memory folder and the SDK's on a temp folder."""

    def __init__(self, server: RunningIndexer, sdk_root: Path) -> None:
        self.folder = f"big{next(_folders):03d}"
        self.ours = VaultMemoryTool(
            "en", folder=self.folder, settings=ClientSettings(server.workspace)
        )
        self.sdk = BetaLocalFilesystemMemoryTool(base_path=str(sdk_root))
        self.vault_folder = server.workspace / "memory/languages/en/vault" / self.folder

    def put(self, rel: str, data: bytes) -> None:
        """The same file made outside both tools."""
        for base in (self.vault_folder, self.sdk.memory_root):
            path = Path(base) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

    def same(self, **inp: Any) -> str:
        """Both tools answer ``inp`` alike (folder sizes read as the vault's)."""
        ours = folder_sizes_as_vault(outcome(self.ours, inp))
        sdk = folder_sizes_as_vault(outcome(self.sdk, inp))
        assert ours == sdk
        return str(ours[0])


@pytest.fixture
def pair(server: RunningIndexer) -> Iterator[Pair]:
    with tempfile.TemporaryDirectory() as sdk_root:
        made = Pair(server, Path(sdk_root))
        yield made
        made.ours.close()


def test_view_lists_big_files_with_their_sizes(pair: Pair) -> None:
    pair.same(command="create", path="/memories/small.md", file_text="hi\n")
    pair.put("big.txt", BIG)
    pair.put("notes/big.md", b"# Big\n" + BIG)
    listing = pair.same(command="view", path="/memories")
    assert "128K\t/memories/big.txt" in listing and "/memories/notes/big.md" in listing
    assert "/memories/notes/big.md" in pair.same(command="view", path="/memories/notes")


def test_rename_and_delete_a_big_file(pair: Pair) -> None:
    pair.put("big.txt", BIG)
    pair.same(command="rename", old_path="/memories/big.txt", new_path="/memories/b/big2.txt")
    assert (pair.vault_folder / "b" / "big2.txt").read_bytes() == BIG
    assert not (pair.vault_folder / "big.txt").exists()
    pair.same(command="delete", path="/memories/b/big2.txt")
    pair.same(command="delete", path="/memories/b/big2.txt")  # both: does not exist
    assert not (pair.vault_folder / "b" / "big2.txt").exists()


def test_delete_a_folder_holding_a_big_file(pair: Pair) -> None:
    pair.put("old/big.txt", BIG)
    pair.put("old/big.md", BIG)
    pair.same(command="delete", path="/memories/old")
    assert not (pair.vault_folder / "old").exists()


def test_what_the_limit_still_refuses_says_too_large(pair: Pair) -> None:
    pair.put("big.txt", BIG)
    pair.put("big.md", BIG)
    text, is_error = outcome(pair.ours, {"command": "view", "path": "/memories/big.txt"})
    assert is_error and str(text).startswith("too_large: /memories/big.txt: ")
    move = {"command": "rename", "old_path": "/memories/big.md", "new_path": "/memories/b.md"}
    text, is_error = outcome(pair.ours, move)
    assert is_error and str(text).startswith("too_large: ") and "big.md" in str(text)
    assert (pair.vault_folder / "big.md").read_bytes() == BIG
    assert not (pair.vault_folder / "b.md").exists()


def test_a_rename_refused_after_the_move_moves_nothing(pair: Pair) -> None:
    """``.txt`` -> ``.md`` adds a note's frontmatter: a text just under the limit is then
    too large. The answer was an error while the file had moved; a file that is not
    UTF-8 was moved too, then refused. Both now stay where they were; vault paths in
    a message read as the model's (``/memories/...``), not as the memory folder's."""
    near = "n" * (LIMIT - 20)
    pair.ours.call({"command": "create", "path": "/memories/near.txt", "file_text": near})
    move = {"command": "rename", "old_path": "/memories/near.txt", "new_path": "/memories/n.md"}
    text, is_error = outcome(pair.ours, move)
    assert is_error and str(text).startswith("too_large: /memories/n.md: "), text
    assert "was not renamed" in str(text) and pair.folder not in str(text)
    assert (pair.vault_folder / "near.txt").read_text() == near
    assert not (pair.vault_folder / "n.md").exists()
    latin = b"caf\xe9 au lait\n"
    pair.put("bad.md", latin)
    for new in ("/memories/bad.txt", "/memories/sub/bad.txt"):
        move = {"command": "rename", "old_path": "/memories/bad.md", "new_path": new}
        text, is_error = outcome(pair.ours, move)
        assert is_error and str(text).startswith("invalid_argument: "), text
        assert (pair.vault_folder / "bad.md").read_bytes() == latin
        assert not (pair.vault_folder / "bad.txt").exists()
        assert not (pair.vault_folder / "sub").exists()
    pair.put("big.txt", BIG)
    text, is_error = outcome(pair.ours, {"command": "view", "path": "/memories/big.txt"})
    assert is_error and pair.folder not in str(text) and "/memories/big.txt" in str(text)
