"""The clean-shutdown mark read at start (``indexer.clean_mark``): the refusals a clean
stop wrote come back whole; a mark anyone could have written (garbage, huge, a FIFO, a
link, paths leaving the vault or naming another, NUL) is read safely, its bad entries
dropped, and the start does the full check. The mark goes in every case."""

from __future__ import annotations

import json
import logging
import os
import unicodedata
from pathlib import Path

import pytest

from indexer import clean_mark
from indexer.daemon import leave_clean_mark
from indexer.vault.refused_files import MAX_KEPT
from shared.path_names import MAX_PATH_BYTES
from shared.workspace import Workspace

IDENTITY = (2049, 1234, 700_000, 1_700_000_000_123_456_789, 1_700_000_000_123_456_789)


@pytest.fixture
def workspace(ws: Workspace) -> Workspace:
    ws.vault_dir("en").mkdir(parents=True)
    ws.vault_dir("zh-Hans").mkdir(parents=True)
    ws.state_dir.mkdir(parents=True)
    return ws


def test_the_refusals_a_stop_wrote_come_back(workspace: Workspace) -> None:
    refused = [
        ("en", "big.md", True, IDENTITY),
        ("zh-Hans", "笔记/大 文件.md", False, IDENTITY),
        ("en", "cafe\u0301/nai\u0308ve.md", True, IDENTITY),  # (NFD, as a Mac spells it)
        ("en", "a/.overview.md", True, IDENTITY),
    ]
    workspace.clean_mark.write_text(clean_mark.render(refused))
    taken = clean_mark.take(workspace)
    assert taken.clean and taken.refused == refused
    assert not workspace.clean_mark.exists()


def test_a_mark_of_an_older_server_is_clean(workspace: Workspace) -> None:
    workspace.clean_mark.write_text("stopped cleanly\n")
    assert clean_mark.take(workspace) == clean_mark.Taken(clean=True)


def test_no_mark_is_no_clean_stop(workspace: Workspace) -> None:
    assert clean_mark.take(workspace) == clean_mark.Taken(clean=False)


def line(*entry: object) -> str:
    return json.dumps(list(entry))


GOOD = line("en", "big.md", True, list(IDENTITY))
BAD = {
    "not json": "{[",
    "dot-dot": line("en", "../x.md", True, list(IDENTITY)),
    "dot-dot inside": line("en", "a/../../x.md", True, list(IDENTITY)),
    "absolute": line("en", "/etc/passwd", True, list(IDENTITY)),
    "unclean": line("en", "a//b.md", True, list(IDENTITY)),
    "NUL": line("en", "a\x00.md", True, list(IDENTITY)),
    "another vault": line("de", "big.md", True, list(IDENTITY)),
    "not a lang": line("../en", "big.md", True, list(IDENTITY)),
    "a device": line("con", "big.md", True, list(IDENTITY)),
    "unknown not bool": line("en", "big.md", 1, list(IDENTITY)),
    "bool in identity": line("en", "big.md", True, [True, 1, 2, 3, 4]),
    "negative": line("en", "big.md", True, [-1, 1, 2, 3, 4]),
    "huge number": line("en", "big.md", True, [1 << 70, 1, 2, 3, 4]),
    "float": line("en", "big.md", True, [1.5, 1, 2, 3, 4]),
    "short identity": line("en", "big.md", True, [1, 2, 3, 4]),
    "a map": json.dumps({"en": 1, "big.md": 2, "u": 3, "i": 4}),
    "four letters": json.dumps("abcd"),
    "nested deep": "[" * 100_000 + "]" * 100_000,
    "digits": "9" * 5000,
    "blank": "",
}


@pytest.mark.parametrize("bad", BAD.values(), ids=BAD.keys())
def test_an_entry_that_does_not_parse_is_dropped_and_the_start_checks_whole(
    workspace: Workspace, bad: str
) -> None:
    workspace.clean_mark.write_text(f"stopped cleanly\n{GOOD}\n{bad}\n")
    taken = clean_mark.take(workspace)
    assert not taken.clean
    assert taken.refused == [("en", "big.md", True, IDENTITY)]
    assert not workspace.clean_mark.exists()


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"garbage\n",
        b"\xff\xfe stopped cleanly\n",
        b"stopped cleanly\n" + b"x" * (clean_mark.MAX_BYTES - 15),
    ],
    ids=["empty", "garbage", "not utf-8", "huge"],
)
def test_a_damaged_mark_is_no_clean_stop(workspace: Workspace, data: bytes) -> None:
    workspace.clean_mark.write_bytes(data)
    assert clean_mark.take(workspace) == clean_mark.Taken(clean=False)
    assert not workspace.clean_mark.exists()


def test_a_fifo_or_a_link_at_the_mark_is_not_followed(workspace: Workspace, tmp_path: Path) -> None:
    os.mkfifo(workspace.clean_mark)  # (a reader would wait for a writer for ever)
    assert clean_mark.take(workspace) == clean_mark.Taken(clean=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text(f"stopped cleanly\n{GOOD}\n")
    workspace.clean_mark.symlink_to(elsewhere)
    assert clean_mark.take(workspace) == clean_mark.Taken(clean=False)
    assert not workspace.clean_mark.is_symlink() and elsewhere.exists()


def hangul_name(i: int) -> str:
    """A path of 1 KB (in NFC, as the tools measure it) as a Mac writes it: decomposed,
    each syllable three jamo (9 bytes, 18 escaped); 12 names of 28 syllables (252 bytes,
    255 with .md, on disk: within a file system's 255)."""
    syllables = [chr(0xAC00 + 28 * ((i * 336 + k) % 399) + 1 + k % 27) for k in range(336)]
    names = ["".join(syllables[n * 28 : n * 28 + 28]) for n in range(12)]
    return unicodedata.normalize("NFD", "/".join(names) + ".md")


def test_a_mark_that_cannot_carry_every_refusal_is_not_left(
    workspace: Workspace, caplog: pytest.LogCaptureFixture
) -> None:
    """4,096 refused files with 1 KB decomposed Hangul names: 3 KB each on disk, 6 KB
    escaped, a mark of 25 MB written past the 8 MiB a start reads (read as damaged:
    "larger than ..."). Now the stop leaves none and says why (the start checks whole);
    a mark of as many 1 KB ASCII names fits, and comes back whole."""
    name = hangul_name(0)
    assert len(unicodedata.normalize("NFC", name).encode()) == MAX_PATH_BYTES - 2
    assert max(len(part.encode()) for part in name.split("/")) <= 255
    hangul = [("en", hangul_name(i), True, IDENTITY) for i in range(MAX_KEPT)]
    assert clean_mark.render(hangul) is None
    with caplog.at_level(logging.WARNING, logger="indexer"):
        leave_clean_mark(workspace, hangul)
    assert not workspace.clean_mark.exists()
    assert "4096 files history refuses have names too long" in caplog.text
    assert clean_mark.take(workspace) == clean_mark.Taken(clean=False)
    long = "/".join(["x" * 250] * 4)  # (1,003 bytes: a file system's names are 255 at most)
    ascii_names = [("en", f"{i:04}/{long}.md", True, IDENTITY) for i in range(MAX_KEPT)]
    leave_clean_mark(workspace, ascii_names)
    assert workspace.clean_mark.stat().st_size <= clean_mark.MAX_BYTES
    assert clean_mark.take(workspace) == clean_mark.Taken(clean=True, refused=ascii_names)
    assert clean_mark.render([*ascii_names, ascii_names[0]]) is None  # (past MAX_KEPT)


def test_a_few_decomposed_hangul_names_are_carried(workspace: Workspace) -> None:
    refused = [("en", hangul_name(i), False, IDENTITY) for i in range(100)]
    leave_clean_mark(workspace, refused)
    assert clean_mark.take(workspace) == clean_mark.Taken(clean=True, refused=refused)
