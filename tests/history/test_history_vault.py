"""The vault with history, in process on real files: what each change records, and
restore, diff, read(version=), move and undo, including their refusals."""

from __future__ import annotations

import base64
import contextlib
import functools
import os
import resource
import shutil
import threading
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from helpers.history import SecondsClock, vault_with_history
from helpers.snapshots import snapshot

from indexer.index import whole_pass
from indexer.index.reconcile import Stopped
from indexer.index.service import NoteIndex
from indexer.vault import atomic, fsops, outside, renames, timeline
from indexer.vault.fsops import etag_of
from indexer.vault.history.store import Change
from indexer.vault.sandbox import Place
from indexer.vault.vault import Vault
from indexer.wiring import record_outside_changes
from shared.errors import StorageError, VaultError

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(64))
PNG2 = b"\x89PNG\r\n\x1a\n" + bytes(range(64, 128))


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[Vault]:
    with vault_with_history(tmp_path, 1 << 20, SecondsClock()) as opened:
        yield opened


def root(vault: Vault, lang: str = "en") -> Path:
    return vault.sandbox.workspace.vault_dir(lang)


def versions(vault: Vault, path: str, lang: str = "en") -> list[tuple]:
    rows = vault.history(lang, path, 1000)["versions"]
    return [(v["version"], v["op"], v["actor"], v["reason"]) for v in rows]


def image(vault: Vault, path: str, data: bytes = PNG, **kw) -> dict:
    return vault.write("en", path, base64.b64encode(data).decode(), "base64", **kw)


def refused(vault: Vault, code: str, call, *args, **kwargs) -> str:
    """The call is refused with ``code`` and changes nothing: files and history alike."""
    files = snapshot(vault.sandbox.workspace.root / "memory")
    store = vault.recorder.store
    assert store is not None
    count = store.stats()["versions"]
    with pytest.raises(VaultError) as info:
        call(*args, **kwargs)
    assert info.value.code == code, str(info.value)
    assert snapshot(vault.sandbox.workspace.root / "memory") == files
    assert store.stats()["versions"] == count
    return info.value.message


# -- recording -----------------------------------------------------------------------------


def test_each_change_is_a_version_with_its_actor_and_reason(vault: Vault) -> None:
    vault.write("en", "a.md", "# A\n", reason="entry:e1 A")
    vault.append("en", "a.md", "more\n")
    vault.write("en", "a.md", "# A2\n", actor="job:summaries", reason="summary")
    vault.delete("en", "a.md", reason="tidy")
    assert versions(vault, "a.md") == [
        (4, "delete", "tool", "tidy"),
        (3, "write", "job:summaries", "summary"),
        (2, "append", "tool", None),
        (1, "write", "tool", "entry:e1 A"),
    ]
    rows = vault.history("en", "a.md")["versions"]
    assert rows[0]["etag"] is None and rows[0]["size"] is None
    assert rows[1]["size"] == len(vault.read("en", "a.md", version=3)["content"].encode())


def test_the_text_a_tool_replaces_is_recorded_first_when_history_never_saw_it(
    vault: Vault,
) -> None:
    (root(vault) / "items").mkdir(parents=True)
    found = "\ufefftitle-less\r\nwith CRLF\r\n".encode()
    (root(vault) / "items/old.md").write_bytes(found)
    vault.write("en", "items/old.md", "# New\n")
    assert versions(vault, "items/old.md") == [
        (2, "write", "tool", None),
        (1, "baseline", "external", None),
    ]
    restored = vault.restore("en", "items/old.md", 1)
    assert (root(vault) / "items/old.md").read_bytes() == found  # exact, not normalized
    assert restored == {
        "path": "items/old.md",
        "etag": etag_of(found),
        "version": 3,
        "restored_from": 1,
    }


def test_a_write_that_changes_nothing_adds_no_version(vault: Vault) -> None:
    image(vault, "a.md.assets/p.png")
    image(vault, "a.md.assets/p.png")
    assert [v[0] for v in versions(vault, "a.md.assets/p.png")] == [1]


@pytest.mark.parametrize(
    "reason",
    # "undo entry:X" is undo's own: such a write made ``undo X`` answer "already undone"
    [
        *("x" * 501, "two\nlines", "tab\there", "bell\x07", "\u2028", 42, "undo entry:e1"),
        # what reorders or hides the line history shows: a bidi override turns
        # "entry:e1 fix \u202etxt.exe" around, a zero-width space or BOM hides a word
        *("entry:e1 \u202etxt.exe", "a\u2066b\u2069", "a\u200bb", "\ufeffa", "a\u2060b"),
        # a reason that shows nothing: history listed it blank (a helper's hostile reasons)
        *("\u200f", "\u200e\u061c", "\u3164", "\u115f \u17b4", "\u034f"),
    ],
)
def test_a_bad_reason_is_refused_by_every_changing_method(vault: Vault, reason: object) -> None:
    vault.write("en", "a.md", "# A\n")
    for call, args in [
        (vault.write, ("en", "a.md", "# B\n")),
        (vault.append, ("en", "a.md", "x\n")),
        (vault.delete, ("en", "a.md")),
        (vault.restore, ("en", "a.md", 1)),
        (vault.move, ("en", "a.md", "b.md")),
    ]:
        refused(vault, "invalid_argument", call, *args, reason=reason)
    vault.write("en", "a.md", "# C\n", reason="é" * 500)  # 500 characters is fine
    # joiners in an emoji or a Persian word and the direction marks of RTL text are text
    for reason in ("👩\u200d💻 done", "می\u200cخواهم", "\u05e9\u05dc\u05d5\u05dd\u200f 2"):
        vault.write("en", "a.md", f"# {reason}\n", reason=reason)
        assert vault.history("en", "a.md", 1)["versions"][0]["reason"] == reason


# -- read, history, diff -------------------------------------------------------------------


def test_a_note_whose_place_became_a_folder_or_whose_folder_became_a_file_is_deleted(
    vault: Vault,
) -> None:
    """``rm -r fx; touch fx`` (git does it switching branches): history kept the notes
    below alive for good, as if a folder on the way could not be read."""
    root = vault.sandbox.workspace.vault_dir("en")
    vault.write("en", "fx/inner.md", "# inner\n")
    vault.write("en", "dir.md", "# a note\n")
    shutil.rmtree(root / "fx")
    (root / "fx").write_text("now a file\n")
    (root / "dir.md").unlink()
    (root / "dir.md").mkdir()
    for path in ("fx/inner.md", "dir.md"):
        vault.observe_external("en", path)
        newest = vault.history("en", path)["versions"][0]
        assert (newest["op"], newest["etag"], newest["actor"]) == ("delete", None, "external")
    vault.write("en", "big.md", "# big\n")
    (root / "big.md").write_bytes(b"x" * (vault.max_file_bytes + 1))  # a file still
    vault.observe_external("en", "big.md")
    assert vault.history("en", "big.md")["versions"][0]["op"] == "write"


def stored(vault: Vault, path: str) -> list[tuple]:
    """(version, op, actor) newest first, from the store: ``history`` refuses a path
    that is a link now."""
    return [(v.version, v.op, v.actor) for v in vault.recorder.need().versions("en", path, 100)]


def test_a_note_replaced_by_a_link_is_deleted(vault: Vault, tmp_path: Path) -> None:
    """Another program's ``rm n.md; ln -s elsewhere.md n.md``, a link renamed over a note,
    or a note's folder replaced by a link: the vault serves no note there (the sandbox
    refuses links) and the index dropped it, but history kept it alive, as the last
    version a restore would see as current."""
    (tmp_path / "outside.md").write_text("# outside the vault\n")
    (root(vault) / "sub").mkdir(parents=True)
    (root(vault) / "elsewhere.md").write_text("# elsewhere\n")
    for path in ("rm.md", "replaced.md", "sub/n.md"):
        vault.write("en", path, f"# {path}\n")
    (root(vault) / "rm.md").unlink()
    (root(vault) / "rm.md").symlink_to("elsewhere.md")
    (root(vault) / "replaced.tmp").symlink_to(tmp_path / "outside.md")
    os.replace(root(vault) / "replaced.tmp", root(vault) / "replaced.md")
    (root(vault) / "sub").rename(tmp_path / "sub")
    (root(vault) / "sub").symlink_to(tmp_path / "sub")
    for path in ("rm.md", "replaced.md", "sub/n.md"):
        vault.observe_external("en", path, unknown=False)
        assert stored(vault, path) == [(2, "delete", "external"), (1, "write", "tool")], path


def test_a_note_replaced_by_a_link_while_served_or_stopped_keeps_its_text(
    vault: Vault, tmp_path: Path
) -> None:
    """The same seen by the index: the watcher's pass and the next start's reconcile
    record the deletion, after the text the index held for a note history never saw."""
    root(vault).mkdir(parents=True)
    (root(vault) / "elsewhere.md").write_text("# elsewhere\n")
    for name in ("served.md", "stopped.md"):
        (root(vault) / name).write_text(f"# {name} as it was\n")
    with built_index(vault) as index:
        (root(vault) / "served.md").unlink()
        (root(vault) / "served.md").symlink_to("elsewhere.md")
        index._apply_changes({("en", "served.md")}, set())  # (the watcher's pass)
    (root(vault) / "link.tmp").symlink_to("elsewhere.md")
    os.replace(root(vault) / "link.tmp", root(vault) / "stopped.md")
    with built_index(vault):  # (the next start)
        pass
    store = vault.recorder.need()
    for name in ("served.md", "stopped.md"):
        assert stored(vault, name) == [(2, "delete", "external"), (1, "baseline", "external")]
        first = store.get("en", name, 1)
        assert first is not None and store.content(first) == f"# {name} as it was\n".encode()


def test_a_vault_folder_gone_is_no_deletion_of_its_notes(vault: Vault, tmp_path: Path) -> None:
    """A drive not mounted yet after a reboot, or ``mv W/memory`` aside: every note was
    recorded deleted (then created again when it came back), and the crash recovery
    dropped the last acknowledged write (its file could not be found)."""
    vault.write("en", "a.md", "# A\n")
    store = vault.recorder.store
    assert store is not None
    pending = Change("en", "b.md", "write", None, b"# B\n")
    store.begin([pending], actor="tool", reason=None, at=datetime.now(UTC))  # then a crash
    folder = vault.sandbox.workspace.vault_dir("en")
    folder.rename(tmp_path / "aside")
    vault.observe_external("en", "a.md", unknown=False)
    assert [v["op"] for v in vault.history("en", "a.md")["versions"]] == ["write"]
    assert vault.recover_history() == (1, 0)  # kept: nothing could tell it did not happen
    assert [v["op"] for v in vault.history("en", "b.md")["versions"]] == ["write"]


def test_diff_against_a_current_file_it_cannot_read_is_refused(vault: Vault) -> None:
    """A current file over the size limit, or a folder now in its place, was diffed as
    empty: every line shown deleted."""
    vault.write("en", "a.md", "# A\n\none\n")
    on_disk = vault.sandbox.workspace.vault_dir("en") / "a.md"
    on_disk.write_bytes(b"# A\n" + b"x" * (vault.max_file_bytes + 1))
    refused(vault, "too_large", vault.diff, "en", "a.md", 1)
    on_disk.unlink()
    on_disk.mkdir()
    refused(vault, "invalid_argument", vault.diff, "en", "a.md", 1)
    on_disk.rmdir()  # gone: the diff shows it deleted
    assert "-one\n" in vault.diff("en", "a.md", 1)["diff"]


def test_read_a_version_and_diff_between_versions(vault: Vault) -> None:
    vault.write("en", "a.md", "# A\n\none\n")
    vault.write("en", "a.md", "# A\n\ntwo\n")
    old = vault.read("en", "a.md", version=1)
    assert old["content"].endswith("one\n") and old["version"] == 1
    assert old["etag"] == vault.history("en", "a.md")["versions"][1]["etag"]
    assert vault.read("en", "a.md", offset=-1 + 1, limit=1, version=1)["content"] == "---\n"
    diff = vault.diff("en", "a.md", 1)["diff"]
    assert "--- a.md@1\n+++ a.md@current\n" in diff and "-one\n" in diff and "+two\n" in diff
    assert vault.diff("en", "a.md", 1, 2)["diff"].replace("@2", "@current") == diff
    assert vault.diff("en", "a.md", 2)["diff"] == ""


@pytest.mark.parametrize("inside", ["\u2028", "\x0c", "\x85", "\r", "\x1e"])
def test_diff_and_read_count_lines_at_newlines_only(vault: Vault, inside: str) -> None:
    """A line separator, form feed or lone CR inside a text file's line split it in the
    diff, each piece marked 'No newline at end of file', and moved read's offsets away
    from grep's line numbers."""
    vault.write("en", "t.txt", f"one{inside}two\nthree\n")
    vault.write("en", "t.txt", f"one{inside}TWO\nthree\n")
    diff = vault.diff("en", "t.txt", 1, 2)["diff"]
    assert diff.split("\n", 2)[2] == (
        f"@@ -1,2 +1,2 @@\n-one{inside}two\n+one{inside}TWO\n three\n"
    ), diff
    assert vault.read("en", "t.txt", offset=1, limit=1)["content"] == "three\n"
    assert vault.grep("en", "three", glob="*.txt")["matches"][0]["line"] == 2


def test_version_arguments_are_checked(vault: Vault) -> None:
    vault.write("en", "a.md", "# A\n")
    for _ in range(3):
        vault.append("en", "b.md", "b\n")
    for bad in (0, -1, True, "1", 1.0):
        refused(vault, "invalid_argument", vault.read, "en", "a.md", version=bad)
        refused(vault, "invalid_argument", vault.diff, "en", "a.md", bad)
        refused(vault, "invalid_argument", vault.restore, "en", "a.md", bad)
    for call, args in [
        (vault.read, ("en", "a.md", 0, None, 3)),  # b.md has a version 3, a.md does not
        (vault.diff, ("en", "a.md", 3)),
        (vault.diff, ("en", "a.md", 1, 3)),
        (vault.restore, ("en", "a.md", 3)),
        (vault.history, ("en", "never.md")),
        (vault.history, ("fr", "a.md")),
    ]:
        refused(vault, "not_found", call, *args)
    refused(vault, "invalid_argument", vault.history, "en", "a.md", 0)
    refused(vault, "forbidden_path", vault.history, "en", "../x.md")
    image(vault, "a.md.assets/p.png")
    image(vault, "a.md.assets/p.png", PNG2)
    refused(vault, "invalid_argument", vault.diff, "en", "a.md.assets/p.png", 1)


# -- restore -------------------------------------------------------------------------------


def test_restore_checks_if_match_and_refuses_a_deletion(vault: Vault) -> None:
    first = vault.write("en", "a.md", "# A\n")
    vault.write("en", "a.md", "# B\n")
    refused(vault, "conflict", vault.restore, "en", "a.md", 1, if_match=first["etag"])
    refused(vault, "conflict", vault.restore, "en", "a.md", 1, if_match="")
    vault.delete("en", "a.md")
    refused(vault, "invalid_argument", vault.restore, "en", "a.md", 3)
    refused(vault, "conflict", vault.restore, "en", "a.md", 1, if_match=first["etag"])
    back = vault.restore("en", "a.md", 1, if_match="", reason="oops")
    assert back["etag"] == first["etag"] and versions(vault, "a.md")[0] == (
        4,
        "restore",
        "tool",
        "oops",
    )


def test_a_deleted_note_comes_back_with_its_images(vault: Vault) -> None:
    vault.write("en", "items/a.md", "# A\n\n![p](a.md.assets/p.png)\n")
    image(vault, "items/a.md.assets/p.png")
    image(vault, "items/a.md.assets/q.png", PNG2)
    note = (root(vault) / "items/a.md").read_bytes()
    vault.delete("en", "items/a.md")
    assert not (root(vault) / "items/a.md.assets").exists()
    assert versions(vault, "items/a.md.assets/q.png")[0][1] == "delete"
    vault.restore("en", "items/a.md", 1)
    assert (root(vault) / "items/a.md").read_bytes() == note
    assert (root(vault) / "items/a.md.assets/p.png").read_bytes() == PNG
    assert (root(vault) / "items/a.md.assets/q.png").read_bytes() == PNG2
    assert versions(vault, "items/a.md.assets/p.png")[0][1] == "restore"


def test_a_note_made_again_and_deleted_again_comes_back_with_its_old_images(
    vault: Vault,
) -> None:
    """Only the latest delete's images were brought back: a note deleted with its image,
    made again without one and deleted again came back, at the version that had the
    image, without it."""
    vault.write("en", "x.md", "# X\n\n![i](x.md.assets/i.png)\n")
    image(vault, "x.md.assets/i.png")
    vault.move("en", "x.md", "y.md")
    with_image = vault.history("en", "y.md")["versions"][0]["version"]
    vault.delete("en", "y.md")
    vault.write("en", "y.md", "# Y\n\nsomething else\n")
    vault.delete("en", "y.md")
    vault.restore("en", "y.md", with_image)
    assert "y.md.assets/i.png" in (root(vault) / "y.md").read_text()
    assert (root(vault) / "y.md.assets/i.png").read_bytes() == PNG


# -- move ----------------------------------------------------------------------------------


def test_a_note_moves_with_its_images_and_links(vault: Vault) -> None:
    told: list[tuple[str, str]] = []
    vault.listeners.append(lambda lang, path: told.append((lang, path)))
    text = "# Go\n\n![went](go.md.assets/went.png)\n<img src='go.md.assets/went.png'>\n"
    written = vault.write("en", "items/go.md", text)
    image(vault, "items/go.md.assets/went.png")
    told.clear()
    moved = vault.move("en", "items/go.md", "archive/verbs/went.md", if_match=written["etag"])
    new = (root(vault) / "archive/verbs/went.md").read_text()
    assert "![went](went.md.assets/went.png)" in new and "src='went.md.assets/went.png'" in new
    assert moved == {
        "path": "items/go.md",
        "new_path": "archive/verbs/went.md",
        "etag": etag_of(new.encode()),
        "relinked": [],
    }
    assert (root(vault) / "archive/verbs/went.md.assets/went.png").read_bytes() == PNG
    assert not (root(vault) / "items/go.md").exists()
    assert not (root(vault) / "items/go.md.assets").exists()
    assert told == [("en", "items/go.md"), ("en", "archive/verbs/went.md")]
    old_rows = vault.history("en", "items/go.md")["versions"]
    new_rows = vault.history("en", "archive/verbs/went.md")["versions"]
    assert (old_rows[0]["op"], old_rows[0]["etag"], old_rows[0]["moved_to"]) == (
        "move",
        None,
        "archive/verbs/went.md",
    )
    assert (new_rows[0]["op"], new_rows[0]["moved_from"], new_rows[0]["version"]) == (
        "move",
        "items/go.md",
        1,
    )
    assert versions(vault, "archive/verbs/went.md.assets/went.png")[0][1] == "move"
    assert vault.read("en", "items/go.md", version=1)["content"].endswith(text)


def test_move_refusals_change_nothing(vault: Vault) -> None:
    vault.write("en", "a.md", "# A\n")
    image(vault, "a.md.assets/p.png")
    vault.write("en", "b.md", "# B\n")
    (root(vault) / "c.md.assets").mkdir()
    vault.write("fr", "a.md", "# A fr\n")
    for new_path, code in [
        ("b.md", "conflict"),
        ("c.md", "conflict"),  # its .assets/ folder is taken
        ("../../fr/vault/x.md", "forbidden_path"),
        ("/etc/x.md", "forbidden_path"),
        ("x.html", "forbidden_path"),  # not a writable type (a note may become x.txt)
        ("a.md", "invalid_argument"),
        ("q.md.assets/p.png", "forbidden_path"),
    ]:
        refused(vault, code, vault.move, "en", "a.md", new_path)
    refused(vault, "conflict", vault.move, "en", "a.md", "z.md", if_match="0" * 32)
    refused(vault, "not_found", vault.move, "en", "nothing.md", "z.md")
    refused(vault, "forbidden_path", vault.move, "en", "a.md.assets/p.png", "z.md")
    refused(vault, "forbidden_path", vault.move, "en", "a.md.assets", "pictures")


def test_a_folder_may_take_a_name_with_an_extension(vault: Vault) -> None:
    """As Claude's memory tool does (its reference renames a folder to ``f.txt``)."""
    vault.write("en", "topics/a.md", "# A\n")
    assert vault.move("en", "topics", "topics.txt")["files"] == 1
    assert vault.read("en", "topics.txt/a.md")["content"].endswith("# A\n")


def test_history_of_what_is_no_file_says_what_it_is(vault: Vault, tmp_path: Path) -> None:
    vault.write("en", "topics/a.md", "# A\n")
    (tmp_path / "outside.md").write_text("# outside\n")
    (root(vault) / "link.md").symlink_to(tmp_path / "outside.md")
    (root(vault) / "theirs.md").write_text("# made by another program\n")
    assert "symbolic link" in refused(vault, "forbidden_path", vault.history, "en", "link.md", 5)
    assert "folder" in refused(vault, "invalid_argument", vault.history, "en", "topics", 5)
    refused(vault, "not_found", vault.history, "en", "never.md", 5)
    assert vault.history("en", "theirs.md", 5)["versions"] == []  # there, no version yet


@pytest.mark.parametrize("call", ["restore", "undo"])
def test_an_editor_save_during_a_restore_or_an_undo_is_kept(
    vault: Vault, monkeypatch: pytest.MonkeyPatch, call: str
) -> None:
    """An editor saved the note after the call read it and before it wrote: the call
    wrote over the save, which was then neither on disk nor in history."""
    vault.write("en", "r.md", "# R\n\none\n")
    vault.write("en", "r.md", "# R\n\ntwo\n", reason="entry:E1 R")
    path = root(vault) / "r.md"
    commit, saved = Place.commit, path.read_text().replace("two", "the editor's")

    def editor_saves_first(place: Place, data: bytes, **kw: Any) -> None:
        path.write_text(saved)  # after the check, before the write
        commit(place, data, **kw)

    monkeypatch.setattr(Place, "commit", editor_saves_first)
    before = versions(vault, "r.md")
    with pytest.raises(VaultError) as info:
        if call == "restore":
            vault.restore("en", "r.md", 1)
        else:
            vault.undo("en", "E1")
    assert info.value.code == "conflict"
    assert path.read_text() == saved
    assert versions(vault, "r.md") == before


def test_a_plain_write_over_an_editor_save_records_the_save_first(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without if_match the last writer wins, but what it replaces is in history: an
    editor's save between the write's read and its swap was in neither."""
    vault.write("en", "r.md", "# R\n\none\n")
    path = root(vault) / "r.md"
    commit, saved, calls = Place.commit, path.read_text().replace("one", "the editor's"), []

    def editor_saves_first(place: Place, data: bytes, **kw: Any) -> None:
        if not calls:
            path.write_text(saved)  # after the read, before the swap
        calls.append(1)
        commit(place, data, **kw)

    monkeypatch.setattr(Place, "commit", editor_saves_first)
    vault.write("en", "r.md", "# R\n\nmine\n")
    assert path.read_text().endswith("mine\n") and len(calls) == 2
    texts = [vault.read("en", "r.md", version=v)["content"] for v, *_ in versions(vault, "r.md")]
    assert saved in texts


def test_a_move_is_one_rename_never_two_names_of_one_file(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash between a link and an unlink left both names, one file with two links,
    which every tool then refuses to change, and history said moved."""
    vault.write("en", "a.md", "# A\n")

    def no_link(*args: Any, **kw: Any) -> None:
        raise AssertionError("a move made a second name of the file")

    monkeypatch.setattr(os, "link", no_link)
    vault.move("en", "a.md", "sub/b.md")
    assert not (root(vault) / "a.md").exists()
    assert (root(vault) / "sub/b.md").stat().st_nlink == 1
    vault.write("en", "c.md", "# C\n")
    refused(vault, "conflict", vault.move, "en", "c.md", "sub/b.md")


def test_an_append_whose_file_is_deleted_right_after_is_done_and_said_so(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It answered not_found, though history had recorded the append."""
    vault.write("en", "log.md", "# Log\n")
    append_at = fsops.append_at

    def then_deleted(*args: Any, **kw: Any) -> os.stat_result:
        info = append_at(*args, **kw)
        (root(vault) / "log.md").unlink()  # by another program, before the append reads back
        return info

    monkeypatch.setattr(fsops, "append_at", then_deleted)
    done = vault.append("en", "log.md", "- one\n")
    assert done["size"] > len("- one\n")
    ops = [op for _, op, *_ in versions(vault, "log.md")]
    assert ops[:2] == ["delete", "append"]  # newest first: the outside delete is recorded


def test_a_delete_racing_a_write_of_its_image_keeps_history_and_disk_one(vault: Vault) -> None:
    """The delete locked only the note: two versions of one number for the image (an
    internal error), or history saying deleted while the image was written after."""
    failures: list[str] = []
    for round_ in range(40):
        vault.write("en", "n.md", "# N\n")
        image(vault, "n.md.assets/i.png")
        barrier = threading.Barrier(2)

        def run(call: Any, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                call()
            except VaultError as err:
                if err.code not in ("not_found", "conflict"):
                    failures.append(str(err))

        calls = [
            lambda: vault.delete("en", "n.md"),
            functools.partial(image, vault, "n.md.assets/i.png", PNG2 + bytes([round_])),
        ]
        threads = [threading.Thread(target=run, args=(call,)) for call in calls]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        on_disk = (root(vault) / "n.md.assets/i.png").exists()
        last = vault.history("en", "n.md.assets/i.png", 1)["versions"][0]
        assert (last["etag"] is not None) == on_disk, (round_, last)
        if (root(vault) / "n.md").exists():
            vault.delete("en", "n.md")
    assert failures == []


def test_a_delete_records_an_editor_save_made_while_it_ran(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The save was deleted without ever being in history."""
    vault.write("en", "d.md", "# D\n\none\n")
    path = root(vault) / "d.md"
    saved = path.read_text().replace("one", "the editor's")
    listed, calls = timeline.asset_deletions, []

    def editor_saves_first(*args: Any) -> Any:
        if not calls:
            path.write_text(saved)  # after the delete read the note, before the unlink
        calls.append(1)
        return listed(*args)

    monkeypatch.setattr(timeline, "asset_deletions", editor_saves_first)
    vault.delete("en", "d.md")
    assert not path.exists() and len(calls) == 2
    kept = [v for v, op, *_ in versions(vault, "d.md") if op != "delete"]
    texts = [vault.read("en", "d.md", version=v)["content"] for v in kept]
    assert saved in texts


@pytest.mark.parametrize("links", [False, True])
def test_a_move_keeps_an_editor_save_made_while_it_ran(
    vault: Vault, monkeypatch: pytest.MonkeyPatch, links: bool
) -> None:
    """A save between the move's read and its rename or new file was deleted with the
    source (links rewritten), or moved while history recorded the older bytes."""
    body = "# M\n\n![p](m.md.assets/p.png)\n" if links else "# M\n\none\n"
    vault.write("en", "m.md", body)
    if links:
        image(vault, "m.md.assets/p.png")
    path = root(vault) / "m.md"
    saved = path.read_text() + "the editor's line\n"
    step = "create_no_replace" if links else "move_noreplace"
    owner = atomic if links else renames
    original, calls = getattr(owner, step), []

    def editor_saves_first(*args: Any, **kw: Any) -> Any:
        if not calls:
            path.write_text(saved)  # after the move read the note
        calls.append(1)
        return original(*args, **kw)

    monkeypatch.setattr(owner, step, editor_saves_first)
    before = versions(vault, "m.md")
    with pytest.raises(VaultError) as info:
        vault.move("en", "m.md", "sub/n.md")
    assert info.value.code == "conflict"
    assert path.read_text() == saved and not (root(vault) / "sub/n.md").exists()
    assert versions(vault, "m.md") == before


def test_a_folder_moves_whole_with_history_per_file(vault: Vault) -> None:
    vault.write("en", "projects/x/a.md", "# A\n\n![p](a.md.assets/p.png)\n![l](../../logo.png)\n")
    image(vault, "projects/x/a.md.assets/p.png")
    vault.write("en", "projects/x/deep/b.md", "# B\n")
    (root(vault) / "projects/x/.overview.md").write_text("hidden\n")
    refused(vault, "invalid_argument", vault.move, "en", "projects", "projects/y")
    refused(vault, "invalid_argument", vault.move, "en", "projects", "q", if_match="x")
    vault.write("en", "taken/a.md", "# T\n")
    refused(vault, "conflict", vault.move, "en", "projects/x", "taken")
    moved = vault.move("en", "projects/x", "archive/2026/x", reason="archive")
    assert moved["files"] == 3 and moved["etag"] is None
    new = root(vault) / "archive/2026/x"
    assert (new / ".overview.md").read_text() == "hidden\n"
    assert (new / "a.md.assets/p.png").read_bytes() == PNG
    text = (new / "a.md").read_text()
    assert "![p](a.md.assets/p.png)" in text and "![l](../../../logo.png)" in text
    assert not (root(vault) / "projects/x").exists()
    assert versions(vault, "archive/2026/x/deep/b.md") == [(1, "move", "tool", "archive")]
    assert versions(vault, "projects/x/deep/b.md")[0] == (2, "move", "tool", "archive")


def test_a_folder_move_never_carries_anything_out_of_reach(vault: Vault) -> None:
    """An empty folder or a dot-file (which no listing names) pushed deeper than 32
    names or longer than 1,024 bytes by a move would be out of every tool's reach."""
    vault.write("en", "a/n.md", "# N\n")
    deep = root(vault) / "a" / "/".join("e" for _ in range(30))  # a/e/.../e: 31 names
    deep.mkdir(parents=True)
    assert "deeper than 32 names" in refused(
        vault, "forbidden_path", vault.move, "en", "a", "b/c/a"
    )
    shutil.rmtree(root(vault) / "a/e")
    long = root(vault) / "a" / ("x" * 200) / ("y" * 200) / ("z" * 200) / ("w" * 200)
    long.mkdir(parents=True)
    (long / ".hidden").write_text("kept\n")  # a/x../y../z../w../.hidden: 816 bytes
    far = "/".join("f" * 100 for _ in range(3))  # 302 bytes more
    refused(vault, "forbidden_path", vault.move, "en", "a", f"{far}/a")
    vault.move("en", "a", "b")  # no deeper, no longer: moved
    assert (root(vault) / "b" / long.relative_to(root(vault) / "a") / ".hidden").exists()
    vault.move("en", "b", "b2/a")  # 3 bytes and one name more: still within reach
    assert versions(vault, "b2/a/n.md")[0][1] == "move"


def test_the_reach_check_measures_as_the_vault_does_with_one_folder_open_a_level(
    vault: Vault,
) -> None:
    """Its first cut measured NFD names on disk (twice the bytes of Hangul in NFC: a move
    within reach was refused), and opened every sibling folder at once (a folder of
    20,500 subfolders answered "too many files open" for good)."""
    vault.write("en", "a/n.md", "# N\n")
    hangul = unicodedata.normalize("NFD", "한국어" * 8)  # NFC: 72 bytes; NFD: 168
    (root(vault) / "a" / hangul / hangul / hangul).mkdir(parents=True)
    new = "/".join(c * 200 for c in "xyz") + "/a"  # 605 bytes: 824 in NFC, 1,112 in NFD
    for n in range(300):
        (root(vault) / "a" / f"s{n}").mkdir()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    opened = len(os.listdir("/proc/self/fd"))
    resource.setrlimit(resource.RLIMIT_NOFILE, (opened + 100, hard))
    try:
        vault.move("en", "a", new)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert (root(vault) / new / "s299").is_dir()


# -- undo ----------------------------------------------------------------------------------


def merge(vault: Vault, entry: str) -> None:
    """What the Memory Writer does for one knowledge entry: merge into a note, create a
    second one with an image, each write with the entry's reason."""
    reason = f"entry:{entry} Past tense"
    current = vault.read("en", "items/go.md")
    vault.write(
        "en",
        "items/go.md",
        current["content"] + "\nwent\n",
        if_match=current["etag"],
        reason=reason,
    )
    vault.write(
        "en", "items/went.md", "# Went\n\n![w](went.md.assets/w.png)\n", if_match="", reason=reason
    )
    image(vault, "items/went.md.assets/w.png", reason=reason)


def test_undo_puts_back_exactly_what_an_entry_changed(vault: Vault) -> None:
    vault.write("en", "items/go.md", "# Go\n")
    before = snapshot(root(vault))
    merge(vault, "e1")
    plan = vault.undo("en", "e1", dry_run=True)
    assert [f["unchanged"] for f in plan["files"]] == [False, False, False]
    assert [{k: v for k, v in f.items() if k != "unchanged"} for f in plan["files"]] == [
        {"path": "items/go.md", "from_version": 2, "to_version": 1, "deleted": False},
        {"path": "items/went.md", "from_version": 1, "to_version": None, "deleted": True},
        {
            "path": "items/went.md.assets/w.png",
            "from_version": 1,
            "to_version": None,
            "deleted": True,
        },
    ]
    done = vault.undo("en", "e1")
    assert [f.get("version") for f in done["files"]] == [3, 2, 2]
    after = snapshot(root(vault))
    assert {k: v[3] for k, v in after.items()} == {k: v[3] for k, v in before.items()}
    assert versions(vault, "items/go.md")[0] == (3, "restore", "tool", "undo entry:e1")
    message = refused(vault, "conflict", vault.undo, "en", "e1")
    assert "items/go.md" in message
    refused(vault, "not_found", vault.undo, "en", "e2")
    refused(vault, "invalid_argument", vault.undo, "en", "bad id")


def test_undo_refuses_when_anyone_changed_a_file_since(vault: Vault) -> None:
    vault.write("en", "items/go.md", "# Go\n")
    merge(vault, "e1")
    (root(vault) / "items/went.md").write_text("# Went\n\nedited in an editor\n")
    message = refused(vault, "conflict", vault.undo, "en", "e1")
    assert "items/went.md (edited on disk since)" in message
    vault.observe_external("en", "items/went.md")  # the watcher tells history
    assert "changed since by external" in refused(vault, "conflict", vault.undo, "en", "e1")


def test_undo_after_a_later_move_says_where_the_note_went(vault: Vault) -> None:
    """It said "changed since by tool in version 2" of a note another call had moved:
    nothing of the move, or of where the note is now (``history`` shows both)."""
    vault.write("en", "items/go.md", "# Go\n")
    merge(vault, "e1")
    vault.move("en", "items/go.md", "grammar/go.md", reason="tidy")
    moved = vault.history("en", "items/go.md", 1)["versions"][0]
    assert moved["moved_to"] == "grammar/go.md"
    message = refused(vault, "conflict", vault.undo, "en", "e1")
    assert (
        f"items/go.md (moved since to grammar/go.md by tool in version {moved['version']},"
        " 'tidy': move it back first)"
    ) in message, message
    vault.move("en", "grammar/go.md", "items/go.md")  # back: the undo goes through
    assert [f["path"] for f in vault.undo("en", "e1")["files"]] == [
        "items/go.md",
        "items/went.md",
        "items/went.md.assets/w.png",
    ]


def test_undo_after_a_later_delete_says_the_note_is_gone(vault: Vault) -> None:
    """It said "changed since by tool in version 3" of a note deleted since (by a call,
    or on disk before the watcher saw it: "edited on disk since"): nothing of the
    delete, as ``history`` shows it."""
    vault.write("en", "items/go.md", "# Go\n")
    merge(vault, "e1")
    vault.delete("en", "items/go.md", reason="tidy")
    gone = vault.history("en", "items/go.md", 1)["versions"][0]
    (root(vault) / "items/went.md").unlink()
    before = snapshot(root(vault))
    message = refused(vault, "conflict", vault.undo, "en", "e1")
    assert f"items/go.md (deleted since by tool in version {gone['version']}, 'tidy')" in message
    assert "items/went.md (deleted on disk since)" in message, message
    assert "changed since" not in message and "edited" not in message
    assert snapshot(root(vault)) == before  # nothing refused changed anything


@pytest.mark.parametrize("locked", ["items/went.md", "items/go.md"])
def test_undo_leaves_a_read_only_file_and_all_the_rest_as_they_are(
    vault: Vault, locked: str
) -> None:
    """A note the entry made, made read-only since, was deleted by undo (``delete``
    refuses it, and so did undo of a note the entry changed, midway)."""
    vault.write("en", "items/go.md", "# Go\n")
    merge(vault, "e1")
    (root(vault) / locked).chmod(0o444)
    before = snapshot(root(vault))
    message = refused(vault, "forbidden_path", vault.undo, "en", "e1")
    assert f"{locked} is read-only" in message and "nothing was changed" in message
    assert snapshot(root(vault)) == before
    (root(vault) / locked).chmod(0o644)
    vault.undo("en", "e1")  # as it was: the whole entry goes


def test_undo_keeps_an_edit_made_between_two_writes_of_the_entry(vault: Vault) -> None:
    vault.write("en", "items/go.md", "# Go\n")
    reason = "entry:e1 Go"
    vault.write("en", "items/go.md", "# Go\n\nby the model\n", reason=reason)
    (root(vault) / "items/go.md").write_text("# Go\n\nby a person\n")
    vault.observe_external("en", "items/go.md")
    vault.append("en", "items/go.md", "model again\n", reason=reason)
    vault.undo("en", "e1")
    assert (root(vault) / "items/go.md").read_text() == "# Go\n\nby a person\n"


def test_undo_of_appends_to_a_day_file_removes_only_the_entry_event(vault: Vault) -> None:
    day = "events/2026/11/29.md"
    vault.append("en", day, '---\ntitle: "2026-11-29"\ntype: events\n---\n# 2026-11-29\n')
    preamble = (root(vault) / day).read_bytes()
    vault.append("en", day, "\n## Event\nfirst\n", reason="entry:a1 First")
    first = (root(vault) / day).read_bytes()
    vault.append("en", day, "\n## Event\nsecond\n", reason="entry:a2 Second")
    assert "entry:a2" in refused(vault, "conflict", vault.undo, "en", "a1")  # a2 came since
    vault.undo("en", "a2")
    assert (root(vault) / day).read_bytes() == first
    vault.undo("en", "a1")  # a2's change was undone: the file is as a1 left it
    assert (root(vault) / day).read_bytes() == preamble


def test_undo_leaves_alone_what_an_undo_of_the_entry_took_back(vault: Vault) -> None:
    """The writer's rollback of a failed attempt is an undo of the entry; the entry then
    writes elsewhere (the fallback). Undoing the entry later undoes that, and leaves the
    files of the rolled-back attempt alone, whatever came since."""
    vault.write("en", "items/go.md", "# Go\n")
    before = {k: v[3] for k, v in snapshot(root(vault)).items()}
    reason = "entry:e1 Go"
    vault.write("en", "items/half.md", "# Half\n", if_match="", reason=reason)  # attempt 1
    image(vault, "items/half.md.assets/p.png", reason=reason)
    vault.write("en", "items/go.md", "# Go\n\nattempt 1\n", reason=reason)
    vault.undo("en", "e1")  # the rollback
    vault.write("en", "items/go.md", "# Go\n\nattempt 2\n", reason=reason)  # the fallback
    vault.write("en", "items/half.md", "# Half, by a person\n")  # after the rollback
    person = (root(vault) / "items/half.md").read_bytes()
    done = vault.undo("en", "e1")
    assert [(f["path"], f["to_version"]) for f in done["files"]] == [("items/go.md", 3)]
    assert (root(vault) / "items/half.md").read_bytes() == person
    vault.delete("en", "items/half.md")
    assert {k: v[3] for k, v in snapshot(root(vault)).items()} == before
    message = refused(vault, "conflict", vault.undo, "en", "e1")
    assert "items/go.md (already undone)" in message


def test_an_entry_that_moved_a_big_folder_is_undone_within_few_descriptors(
    vault: Vault,
) -> None:
    """Undo held every file of the entry open at once, a descriptor per folder of its
    path each: an entry that moved a folder of 2,600 notes could never be undone ("too
    many files open", dry run too)."""
    for n in range(150):
        (root(vault) / "a/b/c").mkdir(parents=True, exist_ok=True)
        (root(vault) / f"a/b/c/n{n}.md").write_text(f"# N{n}\n")
    vault.move("en", "a", "w/x/y", reason="entry:big1 tidy")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    opened = len(os.listdir("/proc/self/fd"))
    resource.setrlimit(resource.RLIMIT_NOFILE, (opened + 100, hard))
    try:
        planned = vault.undo("en", "big1", dry_run=True)
        done = vault.undo("en", "big1")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert len(planned["files"]) == len(done["files"]) == 300  # each note: its two paths
    assert sorted(p.name for p in (root(vault) / "a/b/c").iterdir())[:2] == ["n0.md", "n1.md"]
    assert len(list((root(vault) / "a/b/c").iterdir())) == 150


def test_an_undo_that_failed_midway_can_be_done_again_whole(
    vault: Vault, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk filled while undoing the second file: the first was put back. Once there
    was room, undo answered success for the second file alone, leaving the first with
    the entry's text, and a third undo said "already undone"."""
    for path in ("p1/a.md", "p2/b.md"):
        vault.write("en", path, "# N\n\nbefore\n")
    before = {k: v[3] for k, v in snapshot(root(vault)).items()}
    for path in ("p1/a.md", "p2/b.md"):
        vault.write("en", path, "# N\n\nby the entry\n", reason="entry:E1 merge")
    commit = Place.commit

    def disk_full_for_p1(place: Place, data: bytes, **kw: Any) -> None:
        if place.target.rel == "p1/a.md":
            raise OSError(28, "No space left on device")
        commit(place, data, **kw)

    with monkeypatch.context() as patched:
        patched.setattr(Place, "commit", disk_full_for_p1)
        with pytest.raises(StorageError, match=r": p1/a\.md: no space is left") as refusal:
            vault.undo("en", "E1")  # (which file: the entry has two)
        assert "nothing was changed" in refusal.value.message
    assert "by the entry" in (root(vault) / "p2/b.md").read_text()  # put back
    done = vault.undo("en", "E1")
    assert sorted(f["path"] for f in done["files"]) == ["p1/a.md", "p2/b.md"]
    assert {k: v[3] for k, v in snapshot(root(vault)).items()} == before
    assert "already undone" in refused(vault, "conflict", vault.undo, "en", "E1")


# -- external changes ----------------------------------------------------------------------


def test_the_text_an_outside_change_replaced_is_kept_once_and_only_when_unknown(
    vault: Vault,
) -> None:
    """The index's copy of a note's text before an outside change is recorded for a note
    history never saw (``outside.keep_before``), not over a version history has, not
    past the size a tool may write; a closed history answers that it knows nothing,
    so an index sync at shutdown goes on."""
    root(vault).mkdir(parents=True)
    (root(vault) / "n.md").write_text("# changed since\n")
    assert outside.history_lacks(vault, "en", "n.md")
    outside.keep_before(vault, "en", "n.md", b"# as the index held it\n")
    outside.keep_before(vault, "en", "n.md", b"# a second copy\n")  # (known now)
    outside.keep_before(vault, "en", "big.md", b"x" * ((1 << 20) + 1))
    assert versions(vault, "n.md") == [(1, "baseline", "external", None)]
    assert vault.read("en", "n.md", version=1)["content"] == "# as the index held it\n"
    assert not outside.history_lacks(vault, "en", "n.md")
    refused(vault, "not_found", vault.history, "en", "big.md")
    assert vault.recorder.store is not None
    vault.recorder.store.close()
    assert not outside.history_lacks(vault, "en", "other.md")


@contextlib.contextmanager
def built_index(vault: Vault, *, synced: bool = False) -> Iterator[NoteIndex]:
    """An index built over the vault's files (history has no version of them yet), whose
    syncs history hears; ``synced``: the tools' writes sync it too, as while serving."""
    index = NoteIndex(vault.sandbox.workspace)
    index.open()
    try:
        record_outside_changes(index, vault)
        if synced:
            vault.index_sync = index
        index.reconcile()
        yield index
    finally:
        index.close()


def test_a_reconcile_stopped_part_way_keeps_the_texts_its_batches_replaced(
    vault: Vault,
) -> None:
    """A reconcile stopped between batches (``indexer serve`` stopped during its start-up
    catch-up of edits made while it was down) has committed rows holding the new texts:
    the texts they replaced are recorded then, or they are lost (the next start finds
    the rows current and records the edited text as the note's first version)."""
    root(vault).mkdir(parents=True)
    for name in ("a.md", "b.md", "gone.md"):
        (root(vault) / name).write_text(f"# {name} as it was\n")
    with built_index(vault) as index:
        for name in ("a.md", "b.md"):
            (root(vault) / name).write_text("# edited while stopped\n")
        (root(vault) / "gone.md").unlink()

        def stop_after_a_batch(done: int, total: int) -> None:
            if done:
                index._stopping.set()  # (as ``close``: before the deletions' batch)

        with pytest.raises(Stopped):
            index.reconcile(stop_after_a_batch)
    for name in ("a.md", "b.md"):
        assert versions(vault, name) == [(1, "baseline", "external", None)]
        assert vault.read("en", name, version=1)["content"] == f"# {name} as it was\n"


def test_the_texts_a_killed_reconcile_replaced_are_recorded_at_the_next_start(
    vault: Vault,
) -> None:
    """A start-up reconcile killed after its batches (kill -9: no ``Stopped``, nothing
    told) left rows holding the new texts; the texts they replaced were kept in memory
    and lost. They stay in the index's file until history has them (``kept_texts``): a
    tool's change meanwhile finds them, and the next start records them first."""
    root(vault).mkdir(parents=True)
    for name in ("a.md", "gone.md"):
        (root(vault) / name).write_text(f"# {name} as it was\n")
    with built_index(vault) as index:
        (root(vault) / "a.md").write_text("# edited while stopped\n")
        (root(vault) / "gone.md").unlink()
        whole_pass.reconcile_all(
            index._db.write, index.workspace, stop=lambda: False, befores=index._befores()
        )  # (then killed: never told)
        assert index.held_text("en", "a.md", 1000) == b"# a.md as it was\n"
    assert vault.recorder.need().paths() == []
    with built_index(vault):  # (the next start)
        pass
    for name in ("a.md", "gone.md"):
        assert versions(vault, name)[-1] == (1, "baseline", "external", None)
        assert vault.read("en", name, version=1)["content"] == f"# {name} as it was\n"
    assert [v[1] for v in versions(vault, "a.md")] == ["edit", "baseline"]


def test_a_tool_change_before_the_index_saw_an_outside_one_keeps_the_text_it_held(
    vault: Vault,
) -> None:
    """A note history never saw, changed by another program and then by a tool before
    the watcher's pass (its debounce, a start-up reconcile not there yet, polling): the
    tool recorded the other program's text as the first version, and the text the index
    held before was lost. It comes first now (baseline), then the outside change."""
    root(vault).mkdir(parents=True)
    for name in ("edited.md", "deleted.md"):
        (root(vault) / name).write_text(f"# {name} as it was\n")
    with built_index(vault, synced=True):
        (root(vault) / "edited.md").write_text("# saved in an editor\n")
        (root(vault) / "deleted.md").unlink()
        for name in ("edited.md", "deleted.md"):
            vault.write("en", name, "# written by a tool\n")
    ops = {name: [v[1] for v in versions(vault, name)] for name in ("edited.md", "deleted.md")}
    assert ops == {
        "edited.md": ["write", "edit", "baseline"],
        "deleted.md": ["write", "delete", "baseline"],
    }
    for name in ("edited.md", "deleted.md"):
        assert vault.read("en", name, version=1)["content"] == f"# {name} as it was\n"
    assert vault.read("en", "edited.md", version=2)["content"] == "# saved in an editor\n"


def test_a_tool_change_during_a_reconcile_keeps_the_text_its_batch_replaced(
    vault: Vault,
) -> None:
    """A start-up reconcile records the texts its batches replaced at its end: a tool's
    change of such a note meanwhile (served already) found the new text in the index
    and recorded it as the first version; the text the pass kept comes first now."""
    root(vault).mkdir(parents=True)
    (root(vault) / "n.md").write_text("# as it was\n")
    with built_index(vault, synced=True) as index:
        (root(vault) / "n.md").write_text("# edited while stopped\n")

        def write_after_the_batch(done: int, total: int) -> None:
            if done and not vault.recorder.need().paths():
                vault.write("en", "n.md", "# written by a tool\n")

        index.reconcile(write_after_the_batch)
    assert [v[1] for v in versions(vault, "n.md")] == ["write", "edit", "baseline"]
    assert vault.read("en", "n.md", version=1)["content"] == "# as it was\n"


def test_an_edit_seen_during_a_reconcile_keeps_the_text_the_reconcile_replaced(
    vault: Vault,
) -> None:
    """A note edited while no indexer ran, then again while the start-up reconcile is
    still going on: the watcher's pass records its own replaced text (the reconcile's new
    one) as the first version before the reconcile records the older text it kept at
    its end: the oldest text kept is the note's baseline."""
    root(vault).mkdir(parents=True)
    (root(vault) / "n.md").write_text("# as it was\n")
    with built_index(vault) as index:
        (root(vault) / "n.md").write_text("# edited while stopped\n")

        def edit_after_the_batch(done: int, total: int) -> None:
            if done and not vault.recorder.need().paths():
                (root(vault) / "n.md").write_text("# edited again\n")
                index._apply_changes({("en", "n.md")}, set())  # (the watcher's pass)

        index.reconcile(edit_after_the_batch)
    texts = [vault.read("en", "n.md", version=v[0])["content"] for v in versions(vault, "n.md")]
    assert texts[-1] == "# as it was\n"
    assert texts[0] == "# edited again\n"


def test_a_move_onto_a_note_deleted_outside_comes_after_that_deletion(vault: Vault) -> None:
    """A tool's move into a path another program emptied (``rm``), whether the watcher
    had recorded the deletion or not, and whether history knew the note or only the
    index did: the deletion comes between the old text and the move's arrival, so an
    undo of the move takes the arrival away and brings back no text of the old note."""
    root(vault).mkdir(parents=True)
    for name in ("unknown.md", "unknown-heard.md"):
        (root(vault) / name).write_text(f"# {name} as it was\n")
    names = ("known.md", "known-heard.md", "unknown.md", "unknown-heard.md", "dir/n.md")
    with built_index(vault, synced=True) as index:
        for name in ("known.md", "known-heard.md", "dir/n.md"):
            vault.write("en", name, f"# {name} by a tool\n")
        for name in names:
            (root(vault) / name).unlink()
        (root(vault) / "dir").rmdir()
        heard = {("en", "known-heard.md"), ("en", "unknown-heard.md"), ("en", "dir/n.md")}
        index._apply_changes(heard, set())  # (the watcher's pass: not of the other two)
        for number, name in enumerate(names):
            source = f"from/{name}"
            vault.write("en", source, f"# moved into {name}\n")
            vault.move("en", source.removesuffix("/n.md"), name.removesuffix("/n.md"),
                       reason=f"entry:E{number} move")  # fmt: skip
            first = "baseline" if name.startswith("unknown") else "write"
            ops = [(v[1], v[2]) for v in versions(vault, name)]
            assert ops == [("move", "tool"), ("delete", "external"), (first, ops[-1][1])], name
            vault.undo("en", f"E{number}")
            assert not (root(vault) / name).exists(), name
            assert (root(vault) / source).exists(), name


def test_external_changes_are_recorded_once(vault: Vault) -> None:
    (root(vault) / "seen").mkdir(parents=True)
    (root(vault) / "seen/at-start.md").write_text("# found at start-up\n")
    vault.observe_external("en", "seen/at-start.md", unknown=False)
    refused(vault, "not_found", vault.history, "en", "seen/never.md")
    assert vault.history("en", "seen/at-start.md")["versions"] == []
    vault.observe_external("en", "seen/at-start.md", unknown=True)
    vault.observe_external("en", "seen/at-start.md", unknown=True)
    assert versions(vault, "seen/at-start.md") == [(1, "baseline", "external", None)]
    vault.write("en", "seen/at-start.md", "# by a tool\n")
    vault.observe_external("en", "seen/at-start.md")  # the watcher, late: nothing new
    (root(vault) / "seen/at-start.md").unlink()
    vault.observe_external("en", "seen/at-start.md", unknown=False)
    assert [v[1:3] for v in versions(vault, "seen/at-start.md")] == [
        ("delete", "external"),
        ("write", "tool"),
        ("baseline", "external"),
    ]
