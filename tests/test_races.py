"""Check-then-use races: a folder swapped for a link to the outside while the tools run.

A swapper thread keeps exchanging ``items/`` (a real folder) with ``items_alt`` (a link to
a folder outside the vault) while this thread calls one tool a few hundred times. Nothing
outside may change and no outside content may ever come back.
"""

from __future__ import annotations

import ctypes
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers.snapshots import snapshot

from indexer.vault.fsops import etag_of
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.errors import VaultError
from shared.workspace import Workspace

CALLS = 250
SECRET = "OUTSIDE-SECRET"
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


def _exchanger() -> Callable[[Path, Path], None]:
    """Atomic swap of two names (renameat2 RENAME_EXCHANGE), else three plain renames."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        renameat2 = None

    def exchange(a: Path, b: Path) -> None:
        if renameat2 is not None and renameat2(-100, bytes(a), -100, bytes(b), 2) == 0:
            return
        spare = a.with_name(".swap")
        os.rename(a, spare)
        os.rename(b, a)
        os.rename(spare, b)

    return exchange


@contextmanager
def swapping(items: Path, alt: Path, guard: threading.Lock) -> Iterator[None]:
    """Swap ``items`` and ``alt`` in a loop (under ``guard``) until the block ends."""
    exchange = _exchanger()
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            with guard:
                exchange(items, alt)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)
        with guard:
            if items.is_symlink():
                exchange(items, alt)


@pytest.fixture
def rig(tmp_path: Path) -> tuple[Vault, Path, Path, Path]:
    """(vault, items folder, its swap partner, outside folder) with secrets outside."""
    ws = Workspace(tmp_path / "ws")
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    vault.write("en", "items/secret.md", "# inside\n")
    vault.write("en", "items/victim.md", "# victim\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(SECRET + "\n")
    (outside / "victim.md").write_text(SECRET + " victim\n")
    (outside / "outside-only.md").write_text(SECRET + "\n")
    (outside / "victim.md.assets").mkdir()
    (outside / "victim.md.assets" / "keep.png").write_bytes(PNG)
    root = ws.vault_dir("en")
    (root / "items_alt").symlink_to(outside)
    return vault, root / "items", root / "items_alt", outside


def _real_items(items: Path, alt: Path) -> Path:
    return alt if items.is_symlink() else items


OPS: dict[str, Callable[[Vault, int], object]] = {
    "read": lambda v, i: v.read("en", "items/secret.md"),
    "stat": lambda v, i: v.stat("en", "items/secret.md"),
    "write": lambda v, i: v.write("en", f"items/w{i}.md", "# mine\n"),
    "write_asset": lambda v, i: v.write(
        "en", f"items/victim.md.assets/p{i}.png", "iVBORw0KGgoAAAAA", encoding="base64"
    ),
    "append": lambda v, i: v.append("en", "items/secret.md", f"line {i}\n"),
    "append_create": lambda v, i: v.append("en", f"items/new{i}.md", "x\n"),
    "find": lambda v, i: v.find("en", path="items"),
    "find_root": lambda v, i: v.find("en"),
    "grep": lambda v, i: v.grep("en", SECRET),
    "grep_items": lambda v, i: v.grep("en", SECRET, path="items"),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("op", sorted(OPS))
def test_swapped_folder_is_never_followed(
    rig: tuple[Vault, Path, Path, Path], op: str, tmp_path: Path
) -> None:
    vault, items, alt, outside = rig
    before = snapshot(outside)
    outside_etags = {etag_of(p.read_bytes()) for p in outside.glob("*.md")}
    codes: dict[str, int] = {}
    with swapping(items, alt, threading.Lock()):
        for i in range(CALLS):
            try:
                result = OPS[op](vault, i)
            except VaultError as err:
                codes[err.code] = codes.get(err.code, 0) + 1
                continue
            except FileNotFoundError:  # the server reports not_found: the file moved away
                continue
            assert SECRET not in repr(result), result
            assert "outside-only" not in repr(result)
            assert not any(etag in repr(result) for etag in outside_etags), result
    assert snapshot(outside) == before, op
    assert not any(p.name.startswith(".") for p in outside.iterdir())
    assert set(codes) <= {"forbidden_path", "not_found"}, codes


@pytest.mark.timeout(60)
def test_delete_never_removes_outside_files(rig: tuple[Vault, Path, Path, Path]) -> None:
    vault, items, alt, outside = rig
    before = snapshot(outside)
    guard = threading.Lock()
    deleted = 0
    with swapping(items, alt, guard):
        for _ in range(CALLS):
            with guard:
                real = _real_items(items, alt)
                (real / "victim.md").write_text("in\n")
                (real / "victim.md.assets").mkdir(exist_ok=True)
                (real / "victim.md.assets" / "p.png").write_bytes(PNG)
            try:
                vault.delete("en", "items/victim.md")
                deleted += 1
            except VaultError as err:
                assert err.code in ("forbidden_path", "not_found"), str(err)
            except FileNotFoundError:
                pass
    assert snapshot(outside) == before
    assert deleted > 0


@pytest.mark.timeout(60)
def test_file_swapped_for_a_fifo_does_not_hang(tmp_path: Path) -> None:
    vault = Vault(Sandbox(Workspace(tmp_path / "ws")), max_file_bytes=1 << 20)
    vault.write("en", "items/a.md", "# a\nneedle\n")
    note = tmp_path / "ws/memory/languages/en/vault/items/a.md"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = threading.Event()

    def calls() -> None:
        for _ in range(CALLS):
            for call in (
                lambda: vault.grep("en", "needle"),
                lambda: vault.read("en", "items/a.md"),
                lambda: vault.stat("en", "items/a.md"),
                lambda: vault.append("en", "items/a.md", "more\n"),
            ):
                try:
                    call()
                except VaultError as err:
                    assert err.code in ("forbidden_path", "not_found"), str(err)
                except FileNotFoundError:
                    pass
        done.set()

    with swapping(note, fifo, threading.Lock()):
        worker = threading.Thread(target=calls, daemon=True)
        worker.start()
        worker.join(timeout=30)
    assert done.is_set(), "a call blocked on a FIFO (or failed)"
