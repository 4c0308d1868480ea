"""A file history refuses for good (past SQLite's length limit: 1e9 bytes by default,
with ``INDEXER_MAX_FILE_BYTES`` raised above it) is not read again while it stays as
it is: each retry of the waiting changes (up to every 300 s) read it whole, twice (its
batch, then alone), to be refused again: 5 s a read for 1 GB. Once it changes it is
read and tried again. Here SQLite refuses a blob past ``LIMIT`` with its own error
(``SQLITE_TOOBIG``: a trigger asks it for a blob past its 1e9-byte limit)."""

from __future__ import annotations

import base64
import functools
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_outside_refused_file import refuse_rows, transactions

from indexer.vault import fsops, outside
from indexer.vault.history.store import HistoryStore
from indexer.vault.refused_files import identity_of
from indexer.vault.sandbox import Sandbox
from indexer.vault.unrecorded import Unrecorded
from indexer.vault.vault import Vault
from shared.errors import TooBigForHistoryError
from shared.workspace import Workspace

LIMIT = 256 * 1024  # the blob length history's writer refuses here


@pytest.fixture
def vault(ws: Workspace) -> Iterator[Vault]:
    ws.vault_dir("en").mkdir(parents=True, exist_ok=True)
    store = HistoryStore(ws.history_dir, fsops.etag_of)
    store.open()
    assert store._writer is not None  # (``setlimit``: not in the pysqlite3 wheel)
    store._writer.execute(
        f"CREATE TEMP TRIGGER too_big BEFORE INSERT ON blobs WHEN length(NEW.data) > {LIMIT}"
        " BEGIN SELECT zeroblob(2000000000); END"
    )
    yield Vault(Sandbox(ws), max_file_bytes=8 * LIMIT, history=store)
    store.close()


def root(vault: Vault) -> Path:
    return vault.sandbox.workspace.vault_dir("en")


def big_note(path: Path) -> int:
    """A note deflate cannot shrink past ``LIMIT``; its size."""
    path.write_text("# Big\n\n" + base64.b64encode(os.urandom(2 * LIMIT)).decode() + "\n")
    return path.stat().st_size


def bytes_read() -> int:
    """What this process has read so far (``rchar``: every read call's bytes)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def begins(statements: list[str]) -> int:
    return sum(1 for s in statements if s.startswith("BEGIN"))


def test_an_unchanged_refused_file_is_not_read_again_until_it_changes(vault: Vault) -> None:
    size = big_note(root(vault) / "big.md")
    big = ("en", "big.md", True)
    left, err = outside.observe_many(vault, [big])
    assert left == [big] and isinstance(err, TooBigForHistoryError)
    assert "larger than history can store" in err.message

    (root(vault) / "n.md").write_text("# N\n")  # (told with it at the retry: recorded)
    statements, before = transactions(vault), bytes_read()
    left, err = outside.observe_many(vault, [big, ("en", "n.md", True)])
    assert left == [big] and isinstance(err, TooBigForHistoryError)
    assert bytes_read() - before < size  # (2 x its size before: its batch, then alone)
    assert begins(statements) == 1  # (n.md's; 3 before)
    assert vault.history("en", "big.md")["versions"] == []
    assert len(vault.history("en", "n.md")["versions"]) == 1

    with (root(vault) / "big.md").open("a") as grown:  # changed: read and tried again
        grown.write("one more line\n")
    before = bytes_read()
    left, err = outside.observe_many(vault, [big])
    assert left == [big] and isinstance(err, TooBigForHistoryError)
    assert bytes_read() - before >= size

    (root(vault) / "big.md").write_text("# Big\n\nsmall now\n")
    assert outside.observe_many(vault, [big]) == ([], None)
    assert len(vault.history("en", "big.md")["versions"]) == 1


def test_a_full_disk_is_not_taken_for_a_file_refused_for_good(vault: Vault) -> None:
    """A file refused because the disk was full is read and tried again at the retry
    (nothing of it is remembered), and recorded once history can take it."""
    (root(vault) / "n.md").write_text("# N\n")
    writer = refuse_rows(vault, "versions", "database or disk is full")
    told = [("en", "n.md", True)]
    left, err = outside.observe_many(vault, told)
    assert left == told and err is not None and not isinstance(err, TooBigForHistoryError)
    writer.execute("DROP TRIGGER refuse")
    assert outside.observe_many(vault, told) == ([], None)
    assert len(vault.history("en", "n.md")["versions"]) == 1


def test_a_refused_file_rewritten_with_its_size_and_time_put_back_is_read_again(
    vault: Vault,
) -> None:
    """A rewrite of the same size whose modification time is put back (``touch -d``,
    ``rsync -t``, or within mtime's tick) is another file: its change time says so."""
    path = root(vault) / "big.md"
    size = big_note(path)
    big = ("en", "big.md", True)
    assert outside.observe_many(vault, [big])[0] == [big]
    then = path.stat()
    big_note(path)  # (other bytes, the same size)
    os.utime(path, ns=(then.st_atime_ns, then.st_mtime_ns))
    assert path.stat().st_size == then.st_size and path.stat().st_mtime_ns == then.st_mtime_ns
    before = bytes_read()
    assert outside.observe_many(vault, [big])[0] == [big]
    assert bytes_read() - before >= size  # (read again: before, taken as unchanged)


def unrecorded(vault: Vault) -> Unrecorded:
    """As ``wiring.record_outside_changes`` makes it."""
    return Unrecorded(
        functools.partial(outside.observe_many, vault),
        vault.recorder.refused,
        functools.partial(outside.still_refused, vault),
    )


def test_a_file_refused_for_good_is_no_change_lost_at_a_stop(vault: Vault) -> None:
    """``close`` counts it apart (the stop leaves its clean mark, with the file in it),
    one changed since as it then is (``close`` tries it again); a change history refused
    otherwise (a full disk) is lost as before."""
    big_note(root(vault) / "big.md")
    big_note(root(vault) / "grown.md")
    (root(vault) / "n.md").write_text("# N\n")
    refuse_rows(vault, "paths", "database or disk is full", when="NEW.path = 'n.md'")
    waiting = unrecorded(vault)
    told = [("en", name, True) for name in ("big.md", "grown.md", "n.md")]
    waiting.record(told)
    assert waiting.waiting() == 3
    with (root(vault) / "grown.md").open("a") as grown:  # (changed, still too big)
        grown.write("more\n")
    assert waiting.close() == 1  # (n.md's; 3 before)
    kept = {path: identity for _, path, _, identity in waiting.kept_refused}
    assert kept == {
        name: identity_of((root(vault) / name).stat()) for name in ("big.md", "grown.md")
    }


def test_a_seeded_refusal_is_said_and_not_read_until_the_file_changes(
    vault: Vault, caplog: pytest.LogCaptureFixture
) -> None:
    """A start after a clean stop: the mark's refusals wait, said in the log, and the
    retries read none of them while they stay as they were."""
    size = big_note(root(vault) / "big.md")
    identity = identity_of((root(vault) / "big.md").stat())
    waiting = unrecorded(vault)
    with caplog.at_level(logging.WARNING, logger="indexer.vault"):
        waiting.seed([("en", "big.md", True, identity)])
    assert "en/big.md" in caplog.text and "larger than history can store" in caplog.text
    assert waiting.waiting() == 1
    before = bytes_read()
    waiting._retry()
    assert bytes_read() - before < size and waiting.waiting() == 1
    assert waiting.close() == 0 and waiting.kept_refused == [("en", "big.md", True, identity)]
