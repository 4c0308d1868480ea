"""``remember_turn`` refuses a knowledge entry whose image cannot be attached, at submit,
with the words ``agent-client remember --image`` says: a missing file, a directory, a
file that is not an image, one past ``max_image_bytes``, a FIFO (refused at once, not
waited on). It used to queue the entry, which failed later in the merge's notice. The
other entries of the turn are still written; the refused one leaves nothing on disk."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers.indexer_process import RunningIndexer, vault_dir

from agent_client.cli import main
from agent_client.hooks import remember_turn
from agent_client.notices import CollectingNoticeSink
from agent_client.settings import ClientSettings
from agent_client.writer import MemoryWriter

T0 = "2026-11-29T20:00:00+00:00"
GIF = b"GIF89a" + bytes(40)  # 46 bytes: an image by its first bytes
_langs = itertools.count()


@pytest.fixture
def lang() -> str:
    return f"en-i{next(_langs):03d}"


@pytest.fixture
def sink() -> CollectingNoticeSink:
    return CollectingNoticeSink()


@pytest.fixture
def writer(server: RunningIndexer, sink: CollectingNoticeSink) -> Iterator[MemoryWriter]:
    w = MemoryWriter(ClientSettings(workspace=server.workspace, tz=UTC, max_image_bytes=100), sink)
    yield w
    w.close()


def entry(lang: str, title: str) -> dict[str, object]:
    return {"lang": lang, "kind": "knowledge", "title": title, "content": "c", "timestamp": T0}


def bad_image(kind: str, tmp_path: Path) -> str:
    """A path ``--image`` refuses, of the kind named."""
    path = tmp_path / f"{kind}.png"
    if kind == "missing":
        return str(tmp_path / "nowhere" / "p.png")
    if kind == "directory":
        path.mkdir()
    elif kind == "text":
        path.write_text("not an image, though named .png\n", encoding="utf-8")
    elif kind == "too-large":
        path.write_bytes(GIF + bytes(200))
    elif kind == "fifo":
        os.mkfifo(path)  # no writer ever opens it: a blocking open would wait for ever
    return str(path)


SAID = {
    "missing": "no such readable file",
    "directory": "no such readable file",
    "text": "not a PNG, JPEG, GIF, WebP, BMP or AVIF image",
    "too-large": "246 bytes, more than the 100 an image may have",
    "fifo": "no such readable file",
}


def records(workspace: Path) -> list[Path]:
    folder = workspace / ".agent-client" / "inflight"
    return sorted(folder.iterdir()) if folder.is_dir() else []


@pytest.mark.parametrize("kind", list(SAID))
def test_a_bad_image_refuses_its_entry_at_submit_and_the_rest_is_written(
    server: RunningIndexer,
    writer: MemoryWriter,
    sink: CollectingNoticeSink,
    lang: str,
    tmp_path: Path,
    kind: str,
) -> None:
    path = bad_image(kind, tmp_path)
    good = tmp_path / "good.gif"
    good.write_bytes(GIF)
    turn = [
        {**entry(lang, "Bad picture"), "images": [str(good), path]},
        {**entry(lang, "Good picture"), "images": [str(good)]},
    ]
    started = time.monotonic()
    receipt = remember_turn(turn, writer=writer)
    assert time.monotonic() - started < 2  # (a FIFO opened blocking never returns)
    assert len(receipt.queued) == 1 and len(receipt.refused) == 1
    refusal = receipt.refused[0]
    assert refusal.startswith(f"entry 1: image {path!r:.80}: ") and SAID[kind] in refusal
    assert writer.flush(30)
    assert [n.title for n in sink.notices] == ["Good picture"] and sink.notices[0].ok
    items = vault_dir(server, lang) / "items"
    assert sorted(p.name for p in items.iterdir() if p.suffix == ".md") == ["good-picture.md"]
    assert records(server.workspace) == []


def test_the_command_refuses_the_same_files_with_the_same_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One rule for both: the command names the option, the API the field."""
    monkeypatch.setenv("AGENT_CLIENT_MAX_IMAGE_BYTES", "100")
    for kind, said in SAID.items():
        path = bad_image(kind, tmp_path)
        argv = ["remember", "--title", "t", "--image", path, "x", "--lang", "en"]
        assert main([*argv, "--workspace", str(tmp_path / "ws")]) == 2
        assert f"--image {path!r:.80}: {said}" in capsys.readouterr().err
    assert not (tmp_path / "ws").exists() or records(tmp_path / "ws") == []


def test_an_event_keeps_no_images_and_is_not_refused_for_them(
    server: RunningIndexer, writer: MemoryWriter, sink: CollectingNoticeSink, lang: str
) -> None:
    """An event drops its images with a word (they are never read): not refused."""
    day = {**entry(lang, "A day"), "kind": "event", "images": ["/nowhere/p.png"]}
    receipt = remember_turn([day], writer=writer)
    assert len(receipt.queued) == 1 and receipt.refused == []
    assert writer.flush(30) and sink.notices[0].ok


def test_a_home_path_is_read_where_the_merge_reads_it(
    server: RunningIndexer,
    writer: MemoryWriter,
    lang: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``~/p.gif``: the merge expands it, so the check does too (not refused as missing)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "p.gif").write_bytes(GIF)
    receipt = remember_turn([{**entry(lang, "Home"), "images": ["~/p.gif"]}], writer=writer)
    assert len(receipt.queued) == 1 and receipt.refused == []
    assert writer.flush(30)


def test_nothing_is_read_for_an_entry_without_images(tmp_path: Path) -> None:
    """A writer-less host (a recorder) still works for entries with no images."""
    batches: list[list[object]] = []

    class Recorder:
        def submit(self, entries: list[object]) -> None:
            batches.append(entries)

    plain = {"kind": "knowledge", "title": "t", "content": "c", "timestamp": datetime.now(UTC)}
    receipt = remember_turn([plain], writer=Recorder(), lang="en")  # type: ignore[arg-type]
    assert len(receipt.queued) == 1 and len(batches) == 1
