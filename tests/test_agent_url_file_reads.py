"""The agent client reads the indexer's URL file (and its token file) again only when the
file's stat changed (``agent_client.discovery``): it read both whole at every entry a
writer took and at every command of the memory tool. Every change that mattered then is
still seen: a file replaced, rewritten, made another's or writable by others, removed,
or left by a stopped indexer."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_client import discovery
from agent_client.discovery import discover
from shared.errors import IndexerOfflineError

URL = "http://127.0.0.1:1234/mcp\n"


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Callable[[Path], int]:
    """How many times each file was opened since the test began."""
    counts: dict[str, int] = {}
    real = os.open

    def counting(path: str | os.PathLike[str], *args: int, **kwargs: int) -> int:
        counts[os.fspath(path)] = counts.get(os.fspath(path), 0) + 1
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting)
    return lambda path: counts.get(os.fspath(path), 0)


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files count as settled at once (the guard for a change within one tick of the file
    system's clock has a test of its own)."""
    monkeypatch.setattr(discovery, "SETTLED_NS", -(10**12), raising=False)


def files(tmp_path: Path) -> tuple[Path, Path]:
    url_file, token_file = tmp_path / "indexer.mcp.url", tmp_path / "indexer.mcp.token"
    url_file.write_text(URL)
    token_file.write_text("s3cret\n")
    return url_file, token_file


def test_an_unchanged_url_file_is_read_once(
    tmp_path: Path, opened: Callable[[Path], int], settled: None
) -> None:
    url_file, token_file = files(tmp_path)
    first = discover(url_file, token_file)
    for _ in range(5):
        assert discover(url_file, token_file) == first
    assert (opened(url_file), opened(token_file)) == (1, 1)  # (were 6 and 6)
    assert (first.url, first.token) == (URL.strip(), "s3cret")


def test_a_file_changed_in_any_way_is_read_again(tmp_path: Path, settled: None) -> None:
    """Replaced by a rename (a restart on another port of the same length), rewritten in
    place with its time put back, its token changed: each is read anew."""
    url_file, token_file = files(tmp_path)
    before = discover(url_file, token_file)
    fresh = tmp_path / "fresh"
    fresh.write_text(URL.replace("1234", "4321"))
    stat = url_file.stat()
    os.utime(fresh, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    fresh.replace(url_file)
    moved = discover(url_file, token_file)
    assert moved.url == "http://127.0.0.1:4321/mcp" and moved.instance != before.instance
    stat = url_file.stat()
    url_file.write_text(URL.replace("1234", "5678"))  # (same size, same inode)
    os.utime(url_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert discover(url_file, token_file).url == "http://127.0.0.1:5678/mcp"
    token_file.write_text("0th3r!\n")
    assert discover(url_file, token_file).token == "0th3r!"


def test_a_remembered_file_made_unsafe_or_removed_is_refused(tmp_path: Path, settled: None) -> None:
    url_file, token_file = files(tmp_path)
    discover(url_file, token_file)
    url_file.chmod(0o666)
    with pytest.raises(IndexerOfflineError, match="writable by other users"):
        discover(url_file, token_file)
    url_file.chmod(0o644)
    assert discover(url_file, token_file).url == URL.strip()
    if os.getuid() == 0:  # (a file of another user: only root can make one)
        os.chown(url_file, 4242, -1)
        with pytest.raises(IndexerOfflineError, match="belongs to user 4242"):
            discover(url_file, token_file)
        os.chown(url_file, 0, -1)
    token_file.write_text("two\nlines\n")
    with pytest.raises(IndexerOfflineError, match="does not hold one token"):
        discover(url_file, token_file)
    token_file.unlink()
    assert discover(url_file, token_file).token is None
    url_file.unlink()
    with pytest.raises(IndexerOfflineError, match="no indexer URL file"):
        discover(url_file, token_file)


def test_the_serving_lock_is_asked_every_time(tmp_path: Path, settled: None) -> None:
    """A crash leaves the URL file as it was: the remembered URL is not followed once no
    indexer holds the serving lock."""
    url_file, token_file = files(tmp_path)
    (tmp_path / ".indexer").mkdir()
    serving = tmp_path / ".indexer" / "serving"
    serving.write_text("")
    held = os.open(serving, os.O_RDWR)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert discover(url_file, token_file).url == URL.strip()
    finally:
        os.close(held)
    with pytest.raises(IndexerOfflineError, match="left from one that stopped"):
        discover(url_file, token_file)


def test_a_file_changed_within_the_last_second_is_read_every_time(
    tmp_path: Path, opened: Callable[[Path], int]
) -> None:
    """Two writes within one tick of the file system's clock (a few ms) can leave the same
    stat: a file that changed so recently is not remembered."""
    url_file, token_file = files(tmp_path)
    for _ in range(3):
        discover(url_file, token_file)
    assert opened(url_file) == 3
