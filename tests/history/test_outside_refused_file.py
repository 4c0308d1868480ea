"""One file history refuses does not hold back the others told with it: outside changes
are recorded a batch at a time (``outside.observe_many``), and a file whose row SQLite
cannot take (its blob past SQLite's length limit: a note of 1.4 GB of base64 in a
vault whose ``INDEXER_MAX_FILE_BYTES`` was raised) made the whole batch, up to 256 files,
wait in ``Unrecorded``, refused again at every retry. The batch is now recorded again a
file at a time; the refused file waits, and is said, as before. A full disk (every file
refused) still leaves all of them waiting, after two tries alone."""

from __future__ import annotations

import base64
import logging
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.indexer_process import wait_for
from helpers.vault_stack import served_vault

from indexer.sqlite_lib import sqlite3
from indexer.vault import fsops, outside
from indexer.vault.history.store import HistoryStore
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.errors import StorageError
from shared.workspace import Workspace

NOTES = 300  # more than a batch (``outside.BATCH_FILES``)
LIMIT = 32 * 1024  # SQLite's length limit here (1e9 by default): a blob past it is refused


@pytest.fixture
def vault(ws: Workspace) -> Iterator[Vault]:
    ws.vault_dir("en").mkdir(parents=True, exist_ok=True)
    store = HistoryStore(ws.history_dir, fsops.etag_of)
    store.open()
    assert store._writer is not None  # (SQLite's own refusal, past its 1e9-byte limit:
    store._writer.execute(  # measured with a 1 GB image, 5 s a try)
        f"CREATE TEMP TRIGGER too_big BEFORE INSERT ON blobs WHEN length(NEW.data) > {LIMIT}"
        " BEGIN SELECT RAISE(ABORT, 'string or blob too big'); END"
    )
    yield Vault(Sandbox(ws), max_file_bytes=1 << 20, history=store)
    store.close()


def root(vault: Vault) -> Path:
    return vault.sandbox.workspace.vault_dir("en")


def versions(vault: Vault) -> int:
    store = vault.recorder.store
    assert store is not None
    return store.stats()["versions"]


def transactions(vault: Vault) -> list[str]:
    """The write statements history's writer runs from now on (BEGIN counts them)."""
    store = vault.recorder.store
    assert store is not None and store._writer is not None
    statements: list[str] = []
    store._writer.set_trace_callback(statements.append)
    return statements


def refuse_rows(vault: Vault, table: str, message: str, when: str = "") -> sqlite3.Connection:
    """History's writer refuses each row put into ``table`` (``when`` it holds) with
    SQLite's ``message``, as a full disk would; ``DROP TRIGGER refuse`` on the writer
    returned lifts it."""
    store = vault.recorder.store
    assert store is not None and store._writer is not None
    condition = f" WHEN {when}" if when else ""
    store._writer.execute(
        f"CREATE TEMP TRIGGER refuse BEFORE INSERT ON {table}{condition}"
        f" BEGIN SELECT RAISE(ABORT, '{message}'); END"
    )
    return store._writer


def big_note(path: Path) -> None:
    """A note deflate cannot shrink past ``LIMIT``: its row is refused."""
    path.write_text("# Big\n\n" + base64.b64encode(os.urandom(2 * LIMIT)).decode() + "\n")


def test_a_copy_with_one_refused_file_records_all_the_others_at_once(
    ws: Workspace, vault: Vault, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """``cp -r`` of a folder of 300 notes and one note history cannot take into a served
    vault: the 300 are recorded when the watcher tells them (its whole batch
    waited before, and was refused again at every retry); that note waits, named in the
    warning."""
    box = tmp_path / "outside" / "box"
    box.mkdir(parents=True)
    for n in range(NOTES):
        (box / f"n{n:03}.md").write_text(f"# N{n}\n\nwords of note {n}\n")
    big_note(box / "big.md")
    with (
        served_vault(ws, vault) as waiting,
        caplog.at_level(logging.WARNING, logger="indexer.vault"),
    ):
        shutil.copytree(box, root(vault) / "box")
        # (the warning is said after the note is counted as waiting, by the watcher's
        # thread: the count alone let the test read the log before it was written)
        wait_for(lambda: "box/big.md" in caplog.text, 30, what="the refused note said")
        wait_for(lambda: versions(vault) == NOTES, 30, what="every note in history")
        assert waiting.waiting() == 1  # (the retry is 5 s away: recorded at once)
        assert vault.history("en", "box/big.md")["versions"] == []
        assert "(and " not in caplog.text  # (the note alone: "(and 255 more)" before)


def test_a_batch_with_one_refused_file_records_the_rest(vault: Vault) -> None:
    """The batch of five where the third is refused: four recorded, the third left with
    history's error; the two batches after it recorded as batches."""
    for n in range(5):
        (root(vault) / f"n{n}.md").write_text(f"# N{n}\n")
    big_note(root(vault) / "big.md")
    changes = [("en", f"n{n}.md", True) for n in range(2)]
    changes += [("en", "big.md", True)]
    changes += [("en", f"n{n}.md", True) for n in range(2, 5)]
    left, err = outside.observe_many(vault, changes)
    assert left == [("en", "big.md", True)]
    assert isinstance(err, StorageError) and "too big" in err.message
    assert versions(vault) == 5


def test_a_full_disk_leaves_every_file_waiting_after_two_tries_alone(vault: Vault) -> None:
    """History refuses every row (as a full disk does): the batch, then its first two
    files alone, are refused, and all the changes are left (none lost, the rest of the
    batch and the batches after it not tried one by one)."""
    for n in range(600):
        (root(vault) / f"n{n}.md").write_text(f"# N{n}\n")
    refuse_rows(vault, "versions", "refused")
    statements = transactions(vault)
    changes = [("en", f"n{n}.md", True) for n in range(600)]
    left, err = outside.observe_many(vault, changes)
    assert err is not None and left == changes
    assert sum(1 for s in statements if s.startswith("BEGIN")) == 3
    assert versions(vault) == 0


def renamed_outside(vault: Vault, *, told: bool = True) -> None:
    """``a.md``, known to history, renamed to ``b.md`` by another program; ``told``: the
    watcher's first batch tells the deletion (recorded: it waits to pair with a new
    file)."""
    vault.write("en", "a.md", "# A\n\nwords of a renamed note\n")
    os.rename(root(vault) / "a.md", root(vault) / "b.md")
    if told:
        assert outside.observe_many(vault, [("en", "a.md", True)]) == ([], None)


def paired(vault: Vault) -> tuple[str | None, str | None]:
    """(where ``a.md``'s deletion says it went, where ``b.md``'s first version says it
    came from)."""
    gone = vault.history("en", "a.md")["versions"][0]
    arrived = vault.history("en", "b.md")["versions"][-1]
    return gone.get("moved_to"), arrived.get("moved_from")


@pytest.mark.parametrize("deletion_first", [True, False])
def test_a_rename_told_with_a_refused_file_is_still_paired(
    vault: Vault, deletion_first: bool
) -> None:
    """The new half of a rename told in one batch with a file history refuses: the
    batch's transaction took the deletion as the new file's partner, then was rolled
    back, and the file recorded alone after found no partner (the rename was lost).
    Both halves in that batch: each pairs with the other's row as recorded after."""
    renamed_outside(vault, told=deletion_first)
    big_note(root(vault) / "big.md")
    told = [] if deletion_first else [("en", "a.md", True)]
    told += [("en", "b.md", True), ("en", "big.md", True)]
    left, err = outside.observe_many(vault, told)
    assert left == [("en", "big.md", True)] and err is not None
    assert paired(vault) == ("b.md", "a.md")


def test_a_rename_whose_new_file_history_refused_once_is_paired_when_recorded(
    vault: Vault,
) -> None:
    """The new file itself refused (a disk full for a moment), recorded at the retry:
    it pairs with the deletion it would have paired with then."""
    renamed_outside(vault)
    writer = refuse_rows(vault, "versions", "refused")
    left, err = outside.observe_many(vault, [("en", "b.md", True)])
    assert left == [("en", "b.md", True)] and err is not None
    assert vault.history("en", "b.md")["versions"] == []
    writer.execute("DROP TRIGGER refuse")
    assert outside.observe_many(vault, [("en", "b.md", True)]) == ([], None)
    assert paired(vault) == ("b.md", "a.md")
