"""grep with the index's plan gives exactly what reading every file gives, and what a
brute-force scan of the files on disk gives, after changes made behind the index's back
(edits, appends, deletions, renames, twins, links, folders), with CJK text and names."""

from __future__ import annotations

import os
import random
import re
import time
import unicodedata
from pathlib import Path

from indexer.index.service import NoteIndex
from indexer.vault.sandbox import Sandbox
from indexer.vault.vault import Vault
from shared.workspace import Workspace

WORDS = ["alpha", "Bravo", "charlie", "delta", "Échelle", "straße", "東京都", "日本語", "ไทย"]
WORDS += ["中文文本", "漢字かな", "naïve", "ΣΊΣΥΦΟΣ", "x*y", "(a|b)"]
FOLDERS = ["", "a", "a/b", "日記", "日記/2025", "notes/deep/er"]
Match = tuple[str, int, str]


def _text(rng: random.Random) -> str:
    lines = (" ".join(rng.choices(WORDS, k=rng.randint(1, 8))) for _ in range(rng.randint(1, 9)))
    return "\n".join(lines) + rng.choice(["", "\n", "\r\n"])


def _vault(ws: Workspace, rng: random.Random) -> Path:
    root = ws.vault_dir("en")
    for n in range(120):
        folder = root / rng.choice(FOLDERS)
        folder.mkdir(parents=True, exist_ok=True)
        name = rng.choice([f"n{n}.md", f"ノート{n}.md", f"café{n}.md", f"n{n}.txt"])
        (folder / name).write_text(_text(rng), encoding="utf-8")
    (root / ".hidden.md").write_text("alpha in a dot-file\n")
    (root / ".dot").mkdir()
    (root / ".dot" / "x.md").write_text("alpha in a dot-folder\n")
    return root


def _change_behind_the_index(root: Path, rng: random.Random) -> None:
    """Outside edits the index is not told of (no watcher runs in these tests)."""
    notes = sorted(p for p in root.rglob("*.md") if ".dot" not in p.parts and p.name[0] != ".")
    rng.shuffle(notes)
    same_size = next(p for p in notes[10:] if b"delta" in p.read_bytes())
    same_size.write_bytes(same_size.read_bytes().replace(b"delta", b"zebra", 1))
    appended, deleted, renamed, replaced, moved_over, to_folder, to_link = notes[:7]
    with appended.open("a", encoding="utf-8") as out:
        out.write("\nappended zebra 東京タワー\n")
    deleted.unlink()
    renamed.rename(renamed.with_name("renamed-" + renamed.name))
    replaced.write_text("zebra replaced 中文文本 wholly\n", encoding="utf-8")
    moved_over.write_text("zebra moved over 日本語\n", encoding="utf-8")
    os.replace(moved_over, notes[7])  # an indexed name now holds other bytes
    to_folder.unlink()
    to_folder.mkdir()
    (to_folder / "inner.md").write_text("zebra inside a folder named like a note\n")
    to_link.unlink()
    to_link.symlink_to(notes[8])  # a link is never read
    (root / "日記" / "新しい.md").write_text("zebra 新しいノート 東京都\n", encoding="utf-8")
    nfc = root / "a" / "twin-é.md"
    nfc.write_text("alpha twin\n")
    (root / "a" / unicodedata.normalize("NFD", "twin-é.md")).write_text("zebra nfd twin\n")
    (root / "a" / unicodedata.normalize("NFD", "only-ï.md")).write_text("zebra nfd only\n")
    (root / "binary.md").write_bytes(b"zebra \xff\xfe not utf-8\n")


def _brute_force(root: Path, regex: re.Pattern[str]) -> list[Match]:
    """Every matching line of every note a tool can reach, read straight from disk:
    dot-names and links skipped, names in NFC (of two spellings, the NFC one)."""
    found: list[Match] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        where = Path(folder)
        prefix = where.relative_to(root).as_posix()
        chosen: dict[str, str] = {}
        for raw in sorted(files):
            name = unicodedata.normalize("NFC", raw)
            usable = not raw.startswith(".") and not (where / raw).is_symlink()
            if usable and name.endswith(".md") and (name not in chosen or raw == name):
                chosen[name] = raw
        for name, raw in chosen.items():
            text = (where / raw).read_bytes().decode("utf-8", "replace")  # as rg reads it
            rel = name if prefix == "." else f"{prefix}/{name}"
            lines = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")  # (--crlf)
            if not lines[-1]:
                lines.pop()  # a final newline starts no line (grep and rg agree)
            for number, line in enumerate(lines, start=1):
                if regex.search(line):
                    found.append((rel, number, line))
    return sorted(found)


def _matches(result: dict) -> list[Match]:
    assert result["truncated"] is False
    return sorted((m["path"], m["line"], m["text"]) for m in result["matches"])


def _literals(root: Path, rng: random.Random) -> list[str]:
    notes = sorted(root.rglob("*.md"))
    texts = [p.read_bytes().decode("utf-8", "replace") for p in notes if p.is_file()]
    picked = ["zebra", "東京", "新しいノート", "nfd", "appended zebra", "alpha twin", "中文文本"]
    while len(picked) < 40:
        text = rng.choice(texts)
        start = rng.randrange(len(text))
        literal = text[start : start + rng.randint(3, 9)]
        if literal.strip() and "\n" not in literal and "\r" not in literal:
            picked.append(literal)
    return picked


def test_grep_with_the_plan_is_exact_after_changes_behind_the_index(
    ws: Workspace, index: NoteIndex
) -> None:
    rng = random.Random(15)
    root = _vault(ws, rng)
    index.reconcile()
    time.sleep(0.05)  # a clock tick: same-size edits get another mtime
    _change_behind_the_index(root, rng)
    planned = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    planned.grep_planner = index.grep_plan
    plain = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    used = 0
    for literal in _literals(root, rng):
        plan = index.grep_plan("en", literal, True, False)
        used += plan is not None
        for args in (
            {"pattern": literal, "fixed": True},
            {"pattern": literal, "fixed": True, "path": "日記"},
            {"pattern": re.escape(literal) + "|qqqq", "glob": "**/*"},
            {"pattern": literal, "fixed": True, "ignore_case": True, "limit": 3},
        ):
            assert planned.grep("en", **args) == plain.grep("en", **args), args
        expected = _brute_force(root, re.compile(re.escape(literal)))
        assert _matches(planned.grep("en", literal, fixed=True, limit=10_000)) == expected
    assert used >= 30
    zebra = {path for path, _, _ in _matches(planned.grep("en", "zebra", fixed=True))}
    assert "日記/新しい.md" in zebra and "a/only-ï.md" in zebra
    # a note that is not UTF-8 is found as search finds it (it was never matched)
    assert "a/twin-é.md" not in zebra and "binary.md" in zebra
    assert len(zebra) == 8


def test_text_after_a_nul_byte_is_found(ws: Workspace, index: NoteIndex) -> None:
    """The trigram tokenizer stopped at a NUL: a word after one was never a candidate."""
    root = ws.vault_dir("en")
    root.mkdir(parents=True)
    (root / "with-nul.md").write_text("body zzbeforenul \x00 zzafternul\nnext \x00\x00 line\n")
    (root / "other.md").write_text("nothing here\n")
    index.reconcile()
    planned = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    planned.grep_planner = index.grep_plan
    for literal in ("zzafternul", "zzbeforenul", "\x00 zzafter", "\x00\x00 li"):
        assert index.grep_plan("en", literal, True, False) is not None
        found = [(m["path"], m["line"]) for m in planned.grep("en", literal, fixed=True)["matches"]]
        assert found == [("with-nul.md", 1 if "zz" in literal else 2)], literal


def test_an_edit_right_after_a_grep_is_seen_by_the_next(ws: Workspace, index: NoteIndex) -> None:
    root = ws.vault_dir("en")
    root.mkdir(parents=True)
    for n in range(50):
        (root / f"n{n}.md").write_text(f"note {n} quiet text\n")
    index.reconcile()
    planned = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    planned.grep_planner = index.grep_plan
    assert planned.grep("en", "needle", fixed=True)["matches"] == []
    with (root / "n7.md").open("a") as out:
        out.write("a needle appended\n")
    (root / "n8.md").write_text("note 8 needle text\n")  # same size as before
    found = planned.grep("en", "needle", fixed=True)["matches"]
    assert [m["path"] for m in found] == ["n7.md", "n8.md"]


def keep_size_and_mtime(path: Path, text: str) -> None:
    """Rewrite ``path`` as ``cp -p``, ``rsync -a`` or ``touch -r`` can: new content of the
    same size, and the mtime put back as it was."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_an_edit_that_keeps_size_and_mtime_is_seen(ws: Workspace, index: NoteIndex) -> None:
    root = ws.vault_dir("en")
    root.mkdir(parents=True)
    (root / "kept.md").write_text("note with apricot\n")
    index.reconcile()
    planned = Vault(Sandbox(ws), max_file_bytes=1 << 20)
    planned.grep_planner = index.grep_plan
    keep_size_and_mtime(root / "kept.md", "note with plumcot\n")
    assert [m["path"] for m in planned.grep("en", "plumcot", fixed=True)["matches"]] == ["kept.md"]
    stats = index.reconcile()
    assert stats.updated == 1
    assert [h["path"] for h in index.search("en", "plumcot")["results"]] == ["kept.md"]
    assert index.search("en", "apricot")["results"] == []
