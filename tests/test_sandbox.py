"""The sandbox against hostile paths: every op refuses with the right code, nothing changes."""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

import pytest
from helpers.hostile_paths import BAD_LANG, FORBIDDEN, HOSTILE, SPELLED, lay_traps
from helpers.snapshots import snapshot

from indexer.vault.sandbox import Sandbox, clean_relpath
from indexer.vault.vault import Vault
from shared.errors import VaultError
from shared.workspace import Workspace


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Vault]:
    """A workspace full of traps around the 'en' vault."""
    ws = tmp_path / "ws"
    langs = ws / "memory" / "languages"
    vault = langs / "en" / "vault"
    (vault / "items").mkdir(parents=True)
    (vault / "items" / "a.md").write_text("---\ntitle: A\n---\nalpha\n")
    (langs / "en" / "vault2").mkdir()
    (langs / "en" / "vault2" / "secret.md").write_text("sibling secret\n")
    (langs / "ja" / "vault").mkdir(parents=True)
    (langs / "ja" / "vault" / "secret.md").write_text("other lang secret\n")
    (ws / ".indexer").mkdir()
    (ws / ".indexer" / "lock").write_text("")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("outside secret\n")
    lay_traps(vault, outside, langs / "en" / "vault2")
    return tmp_path, Vault(Sandbox(Workspace(ws)), max_file_bytes=1 << 20)


OPS = {
    "read": lambda v, lang, p: v.read(lang, p),
    "stat": lambda v, lang, p: v.stat(lang, p),
    "write": lambda v, lang, p: v.write(lang, p, "# pwned\n"),
    "write_b64": lambda v, lang, p: v.write(lang, p, "iVBORw0KGgo=", encoding="base64"),
    "append": lambda v, lang, p: v.append(lang, p, "pwned\n"),
    "delete": lambda v, lang, p: v.delete(lang, p),
    "find": lambda v, lang, p: v.find(lang, path=p),
    "grep": lambda v, lang, p: v.grep(lang, "secret", path=p),
}


def test_table_is_big_enough() -> None:
    assert len(HOSTILE) >= 40


@pytest.mark.parametrize(("lang", "path", "code"), HOSTILE)
def test_hostile_path_is_refused_and_changes_nothing(
    setup: tuple[Path, Vault], lang: str, path: str, code: str
) -> None:
    root, vault = setup
    before = snapshot(root)
    for name, op in OPS.items():
        with pytest.raises(VaultError) as info:
            op(vault, lang, path)
        assert info.value.code == code, (name, str(info.value))
        assert str(info.value).startswith(code + ": ")
        assert str(root) not in str(info.value)
    assert snapshot(root) == before


@pytest.mark.parametrize(("lang", "path", "code"), HOSTILE)
def test_a_moves_refusal_says_which_of_its_paths_it_refuses(
    setup: tuple[Path, Vault], lang: str, path: str, code: str
) -> None:
    """A move takes two paths, and the sandbox's words ("the path leaves the vault") did
    not say which: a refusal met while resolving the destination names ``new_path``."""
    root, vault = setup
    vault.write("en", "c.md", "# c\n")
    before = snapshot(root)
    with pytest.raises(VaultError) as source:
        vault.move(lang, path, "items/b.md")
    with pytest.raises(VaultError) as dest:
        vault.move(lang, "c.md", path)
    assert source.value.code == dest.value.code == code
    assert "new_path" not in source.value.message
    if code == FORBIDDEN and not source.value.message.startswith("'"):  # (a name, not a rule)
        assert dest.value.message.startswith("new_path"), dest.value.message
        assert "the path" not in dest.value.message
    assert snapshot(root) == before


def test_hard_linked_file_can_be_read_but_not_modified(setup: tuple[Path, Vault]) -> None:
    root, vault = setup
    note = root / "ws/memory/languages/en/vault/hard.md"
    os.link(root / "outside/secret.md", note)
    before = snapshot(root)
    assert vault.read("en", "hard.md")["content"] == "outside secret\n"
    for op in (
        lambda: vault.write("en", "hard.md", "x"),
        lambda: vault.append("en", "hard.md", "x"),
    ):
        with pytest.raises(VaultError) as info:
            op()
        assert info.value.code == FORBIDDEN
    assert snapshot(root) == before


def test_legitimate_paths_resolve_inside_the_vault(setup: tuple[Path, Vault]) -> None:
    root, vault = setup
    sandbox = vault.sandbox
    for path in ("items/a.md", "items/new/deep/b.md", "日本語/ノート.md", "a b/c-d_e.md"):
        target = sandbox.resolve("en", path)
        assert target.abs.is_relative_to((root / "ws/memory/languages/en/vault").resolve())


def test_clean_relpath_normalizes() -> None:
    assert clean_relpath("items/x.md") == "items/x.md"
    assert clean_relpath("items/") == "items"
    assert clean_relpath("", allow_root=True) == ""
    assert clean_relpath("cafe\u0301.md") == "café.md"
    assert clean_relpath("./a.md") == "a.md"
    assert clean_relpath("items//a.md") == "items/a.md"
    assert clean_relpath("items/./a.md") == "items/a.md"
    assert clean_relpath("./items//", allow_root=True) == "items"
    assert clean_relpath("./", allow_root=True) == ""
    with pytest.raises(VaultError, match="forbidden_path"):
        clean_relpath(".//./")


def test_a_name_longer_in_nfc_than_typed_says_so() -> None:
    """``क़`` (U+0958) is 3 bytes typed and 6 in NFC: a name of 198 bytes was refused as
    "longer than 255 bytes" (a helper's memory tool against the SDK's): the message
    names its size as kept."""
    with pytest.raises(VaultError, match=r"longer than 255 bytes \(393 bytes in NFC, the form"):
        clean_relpath("\u0958" * 65 + ".md")
    with pytest.raises(VaultError, match=r"longer than 255 bytes \(259 bytes\)$"):
        clean_relpath("n" * 256 + ".md")


def test_dot_dot_inside_the_vault_is_resolved_by_name() -> None:
    """ "Refuse only what would leave the vault": ``a/../b.md`` is ``b.md``."""
    assert clean_relpath("a/../b.md") == "b.md"
    assert clean_relpath("a/b/../../c/./d.md") == "c/d.md"
    assert clean_relpath("items/..", allow_root=True) == ""
    assert clean_relpath(".indexer/../a.md") == "a.md"  # by name: nothing is opened
    for leaving in ("..", "../a.md", "a/../../b.md", "./../a.md", "a/../..//b.md"):
        with pytest.raises(VaultError, match="forbidden_path: the path leaves the vault"):
            clean_relpath(leaving)
    with pytest.raises(VaultError, match="forbidden_path"):
        clean_relpath("items/..")  # the root, where a file path is needed


def test_only_a_folders_summary_file_passes_as_a_summary() -> None:
    """History reaches ``.overview.md`` (the summaries job writes over a hand edit);
    ``summary=True`` lets that exact name through, last, and no other dot-name."""
    assert clean_relpath("a/b/.overview.md", summary=True) == "a/b/.overview.md"
    assert clean_relpath("./.overview.md", summary=True) == ".overview.md"
    for hidden in (
        "a/.overview.md",  # without summary=True
        ".overview.md",
    ):
        with pytest.raises(VaultError, match="forbidden_path"):
            clean_relpath(hidden)
    for other in (
        "a/.Overview.md",
        "a/.overview.md.bak",
        "a/.overview.md/x.md",
        ".obsidian/.overview.md",
        "a/.git/.overview.md",
        "a/n.md.assets/.overview.md",
        "a/.overview.md/../.env",
    ):
        with pytest.raises(VaultError, match="forbidden_path"):
            clean_relpath(other, summary=True)


def test_a_write_through_dot_dot_lands_inside(setup: tuple[Path, Vault]) -> None:
    root, vault = setup
    written = vault.write("en", "items/../other/./n.md", "# n\n")
    assert written["path"] == "other/n.md"
    assert (root / "ws/memory/languages/en/vault/other/n.md").is_file()
    assert vault.read("en", "other/x/../n.md")["path"] == "other/n.md"


# Each names a folder only (``clean_relpath`` drops the ending): never the file ``a.md``.
FOLDER_ENDINGS = ["/", "/.", "/./", "/x/..", "/x/../", "//."]


@pytest.mark.parametrize("ending", FOLDER_ENDINGS)
def test_a_folder_spelling_never_reaches_a_file(setup: tuple[Path, Vault], ending: str) -> None:
    root, vault = setup
    before = snapshot(root)
    for op in (
        lambda: vault.read("en", f"items/a.md{ending}"),
        lambda: vault.write("en", f"items/a.md{ending}", "# x\n"),
        lambda: vault.write("en", f"items/new.md{ending}", "# x\n"),
        lambda: vault.append("en", f"items/a.md{ending}", "x\n"),
        lambda: vault.stat("en", f"items/a.md{ending}"),
        lambda: vault.delete("en", f"items/a.md{ending}"),
        lambda: vault.move("en", f"items/a.md{ending}", "items/b.md"),
        lambda: vault.move("en", "items/a.md", f"items/b.md{ending}"),
    ):
        with pytest.raises(VaultError) as info:
            op()
        assert info.value.code == FORBIDDEN
        assert "folder" in info.value.message
    assert snapshot(root) == before
    assert vault.stat("en", f"items{ending}")["type"] == "dir"
    assert vault.find("en", path="items/")["paths"] == ["items/a.md"]


def test_names_that_are_legitimate_in_some_language(setup: tuple[Path, Vault]) -> None:
    _, vault = setup
    for path in (
        "fa/می‌خواهم.md",
        "items/\uff41.md",
        "ja/\uff08\u30e1\u30e2\uff09.md",
        "items/console.md",
        "items/100%.md",
    ):
        vault.write("en", path, "# ok\n")
        assert vault.read("en", path)["path"] == path


def test_long_names_fit_their_temp_file(setup: tuple[Path, Vault]) -> None:
    root, vault = setup
    folder = root / "ws/memory/languages/en/vault/items"
    for name in ("z" * 240 + ".md", "y" * 252 + ".md", "é" * 126 + ".md"):
        vault.write("en", f"items/n1/n2/{name}", "# long\n")
        vault.write("en", f"items/n1/n2/{name}", "# again\n")
        assert "again" in vault.read("en", f"items/n1/n2/{name}")["content"]
        vault.delete("en", f"items/n1/n2/{name}")
    assert not [p for p in (folder / "n1/n2").iterdir()]
    person_made = "w" * 250 + ".md"
    (folder / person_made).write_text("# by hand\n")
    assert vault.append("en", f"items/{person_made}", "more\n")["size"] == 15
    assert vault.delete("en", f"items/{person_made}")["deleted"]
    assert not (folder / person_made).exists()


def test_the_path_limit_is_measured_in_the_form_the_tools_name_it(
    setup: tuple[Path, Vault],
) -> None:
    """A Mac's decomposed (NFD) spelling is longer than the NFC name every listing
    shows: a path that fits in NFC is taken in either spelling."""
    _, vault = setup
    nfc = "/".join(["\u00e9" * 100] * 5) + "/a.md"
    nfd = unicodedata.normalize("NFD", nfc)
    assert len(nfc.encode()) <= 1024 < len(nfd.encode())
    assert clean_relpath(nfd) == nfc
    vault.write("en", nfd, "# long\n")
    assert vault.read("en", nfc)["content"].endswith("# long\n")
    with pytest.raises(VaultError, match="longer than 1024 bytes"):
        clean_relpath(nfc[:-5] + "/" + "a" * 20 + ".md")


def test_refused_long_names_and_langs_create_nothing(setup: tuple[Path, Vault]) -> None:
    root, vault = setup
    before = snapshot(root)
    with pytest.raises(VaultError) as info:
        vault.write("en", "items/n1/n2/" + "z" * 253 + ".md", "# x\n")
    assert info.value.code == FORBIDDEN
    for op in (vault.write, vault.append):
        with pytest.raises(VaultError) as info:
            op("en" + "-abcdefgh" * 40, "x.md", "# x\n")
        assert info.value.code == BAD_LANG
    assert snapshot(root) == before


def test_startup_removes_orphan_temp_files_inside_only(setup: tuple[Path, Vault]) -> None:
    from indexer.vault.tempfiles import remove_orphan_temp_files

    root, _ = setup
    vault_dir = root / "ws/memory/languages/en/vault"
    (vault_dir / "items/deep").mkdir()
    inside = [
        vault_dir / ".a.md.tmp.0123456789abcdef",
        vault_dir / "items/deep/.b.md.tmp.00112233aabbccdd",
    ]
    for temp in inside:
        temp.write_text("orphan")
    outside = root / "outside/.c.md.tmp.0123456789abcdef"
    outside.write_text("not ours")
    (vault_dir / "items/.keep.md").write_text("a dot-file that is not a temp file")
    assert remove_orphan_temp_files(vault_dir) == 2
    assert not any(t.exists() for t in inside)
    assert outside.exists() and (vault_dir / "items/.keep.md").exists()
    assert remove_orphan_temp_files(root / "nowhere") == 0


def test_the_start_up_sweep_spares_only_the_writes_in_flight(
    setup: tuple[Path, Vault],
) -> None:
    """The sweep spared every temp file younger than a second before the start: after a
    crash and a quick restart, the crash's last leftovers stayed (a flaky e2e test)."""
    from indexer.vault import atomic
    from indexer.vault.tempfiles import remove_orphan_temp_files

    root, _ = setup
    vault_dir = root / "ws/memory/languages/en/vault"
    fresh = vault_dir / ".a.md.tmp.0123456789abcdef"  # a crash's, made a moment ago
    fresh.write_text("left by a crash")
    with atomic._temp_for("b.md") as temp:
        (vault_dir / temp).write_text("a write in flight")
        assert remove_orphan_temp_files(vault_dir, spare=atomic.in_flight) == 1
        assert not fresh.exists() and (vault_dir / temp).exists()
    assert not atomic.in_flight(temp)


def test_the_sweep_removes_a_temp_file_past_the_path_limit_without_a_warning(
    setup: tuple[Path, Vault], caplog: pytest.LogCaptureFixture
) -> None:
    """A temp name is up to 22 bytes longer than its note's: beside a note whose path is
    near the 1,024-byte limit the walker skipped it (never removed) and warned about it
    ("rename it") on every walk, the index's too."""
    from indexer.index.reconcile import walk_notes
    from indexer.vault import atomic
    from indexer.vault.tempfiles import remove_orphan_temp_files

    root, _ = setup
    vault_dir = root / "ws/memory/languages/en/vault"
    folder = "/".join([os.urandom(8).hex().ljust(200, "d")] * 4)  # 803 bytes (warned once)
    name = "n" * (1024 - len(folder) - 1 - 3) + ".md"  # the note's path: 1,024 bytes
    (vault_dir / folder).mkdir(parents=True)
    (vault_dir / folder / name).write_text("# long\n")
    temp = vault_dir / folder / (atomic.temp_prefix(name) + "0123456789abcdef")
    temp.write_text("left by a crash")
    kept = vault_dir / folder / ("." + "k" * 220)  # a person's dot-file, as long: not ours
    kept.write_text("mine")
    assert len(f"{folder}/{temp.name}".encode()) > 1024
    with caplog.at_level("WARNING"):
        listed = [f.rel for f in walk_notes(Workspace(root / "ws"), "en")]
        assert f"{folder}/{name}" in listed and not [p for p in listed if ".tmp." in p]
        assert remove_orphan_temp_files(vault_dir) == 1
    assert not temp.exists() and kept.exists()
    assert not [r for r in caplog.records if ".tmp." in r.getMessage()]


def test_the_start_sweeps_the_temp_files_of_the_workspaces_own_files(
    setup: tuple[Path, Vault],
) -> None:
    """A crash while the server wrote its URL, its token, its clean mark or the
    maintenance state left ``.<name>.tmp.<random>`` there for good. The sweep spares
    a write in flight: this process's, and the maintenance state's of any process (an
    ``indexer maintain`` writes it under its lock, and the sweep waits for it)."""
    import fcntl
    import threading

    from indexer.vault import atomic
    from indexer.warm_up import sweep_temp_files

    root, _ = setup
    ws = Workspace(root / "ws")
    files = (ws.url_file, ws.token_file, ws.clean_mark, ws.maintenance_state)
    leftovers = [f.parent / (atomic.temp_prefix(f.name) + "0123456789abcdef") for f in files]
    not_ours = [
        ws.root / ".indexer.mcp.url.tmp.0123456789abcdeg",
        ws.root / ".indexer.mcp.url.tmp.x.tmp.0123456789abcdef",
        ws.root / ".notes.md.tmp.0123456789abcdef",
        ws.url_file,
    ]
    for path in [*leftovers, *not_ours]:
        path.write_text("left by a crash")
    lock = os.open(
        ws.maintenance_state.with_name("maintenance-state.json.lock"), os.O_CREAT | os.O_RDWR
    )
    fcntl.flock(lock, fcntl.LOCK_EX)  # another process's update of the state, under way
    sweep = threading.Thread(target=sweep_temp_files, args=(ws,), daemon=True)
    with atomic._temp_for(ws.token_file.name) as flying:
        (ws.root / flying).write_text("a write in flight")
        try:
            sweep.start()
            sweep.join(0.5)
            assert sweep.is_alive() and leftovers[3].exists()  # waits for the state's lock
        finally:
            os.close(lock)
        sweep.join(30)
        assert not sweep.is_alive() and (ws.root / flying).exists()
    assert not any(p.exists() for p in leftovers)
    assert all(p.exists() for p in not_ours)


@pytest.mark.parametrize("name", SPELLED)
def test_names_whose_joiners_and_selectors_spell_something_work(
    setup: tuple[Path, Vault], name: str
) -> None:
    _, vault = setup
    vault.write("en", f"items/{name}", "# spelled\n")
    assert f"items/{name}" in vault.find("en", path="items")["paths"]
    assert vault.read("en", f"items/{name}")["content"].endswith("# spelled\n")


def test_text_files_are_writable_and_everything_else_still_refused(
    setup: tuple[Path, Vault],
) -> None:
    """``.txt .xml .json .yaml .csv`` were refused and are now text files (written as
    sent); any other name stays refused for every writing op, and changes nothing."""
    root, vault = setup
    for suffix in ("txt", "xml", "json", "yaml", "csv"):
        path = f"memories/deep/a.{suffix}"
        assert vault.write("en", path, "x\r\ny")["created"] is True
        assert vault.append("en", path, "\n")["size"] == 5
        assert vault.read("en", path)["content"] == "x\r\ny\n"
        assert vault.delete("en", path)["deleted"] is True
    before = snapshot(root)
    refused = [
        "memories/a",
        "memories/a.py",
        "memories/a.sh",
        "memories/a.html",
        "memories/a.svg",
        "memories/a.yml",
        "memories/a.TXT",
        "memories/a.Md",
        "memories/a.txt.exe",
        "memories/a.png",
        "memories/a.md.assets/x.py",
    ]
    for path in refused:
        for op in (
            lambda p: vault.write("en", p, "x"),
            lambda p: vault.append("en", p, "x"),
        ):
            with pytest.raises(VaultError) as info:
                op(path)
            assert info.value.code == FORBIDDEN, path
    assert snapshot(root) == before


def test_a_vault_root_swapped_after_the_check_is_opened_as_found_or_refused(
    setup: tuple[Path, Vault],
) -> None:
    """``open`` opens the real root ``resolve`` found: gone meanwhile reads as missing,
    a file put in its place is refused, and nothing is written anywhere."""
    tmp_path, vault = setup
    sandbox = vault.sandbox
    root = sandbox.workspace.vault_dir("en")
    target = sandbox.resolve("en", "items/a.md")
    moved = root.with_name("vault-moved")
    root.rename(moved)
    try:
        with sandbox.open(target) as place:
            assert place.base_fd is None  # the vault is missing now
        root.write_text("not a folder\n")
        before = snapshot(tmp_path)
        with pytest.raises(VaultError) as info, sandbox.open(target):
            pass
        assert info.value.code == "forbidden_path" and snapshot(tmp_path) == before
    finally:
        root.unlink(missing_ok=True)
        moved.rename(root)
    with sandbox.open(sandbox.resolve("en", "items/a.md")) as place:
        assert place.lstat() is not None  # back where it was: found again


def test_a_linked_vault_root_is_followed_when_it_is_linked_elsewhere(tmp_path: Path) -> None:
    """The real vault root is kept between calls, and found again when the link is
    pointed elsewhere, the real folder is renamed, or the vault disappears."""
    ws = Workspace(tmp_path / "ws")
    ws.vault_dir("en").parent.mkdir(parents=True)
    first, second = tmp_path / "first", tmp_path / "second"
    for real, text in ((first, "one"), (second, "two")):
        real.mkdir()
        (real / "a.md").write_text(f"---\ntitle: A\n---\n{text}\n")
    ws.vault_dir("en").symlink_to(first)
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    assert vault.read("en", "a.md")["content"].endswith("one\n")
    assert vault.sandbox.vault_root("en") == first
    link = ws.vault_dir("en")
    link.unlink()
    link.symlink_to(second)
    assert vault.read("en", "a.md")["content"].endswith("two\n")
    renamed = tmp_path / "renamed"
    second.rename(renamed)
    assert vault.sandbox.vault_root("en") is None  # the link dangles: no vault
    link.unlink()
    link.symlink_to(renamed)
    assert vault.sandbox.vault_root("en") == renamed
    vault.write("en", "b.md", "written")
    assert (renamed / "b.md").exists() and not (first / "b.md").exists()
    link.unlink()
    assert vault.sandbox.vault_root("en") is None


def test_a_linked_vault_whose_target_is_gone_is_refused_not_an_internal_error(
    tmp_path: Path,
) -> None:
    """An unmounted drive or a link loop: writes were `internal` (FileExistsError, ELOOP)."""
    ws = Workspace(tmp_path / "ws")
    vault = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    for lang in ("en", "fr"):
        (ws.languages_dir / lang).mkdir(parents=True)
    os.symlink(tmp_path / "unmounted", ws.languages_dir / "en" / "vault")
    os.symlink(ws.languages_dir / "fr" / "vault", ws.languages_dir / "fr" / "vault")
    before = snapshot(tmp_path)
    for lang in ("en", "fr"):
        with pytest.raises(VaultError) as info:
            vault.write(lang, "a.md", "# a\n")
        assert info.value.code == "forbidden_path" and "not a folder" in str(info.value)
    assert snapshot(tmp_path) == before
